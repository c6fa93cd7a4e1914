#!/usr/bin/env python3
"""Where one request's CPU goes, per stack and scenario (run by scripts/profile.sh).

For each stack and scenario: a throwaway seeded database (`bookstore-db up`), the stack's
release binary, `loadgen http` on the scenario's URL, and `perf record -a` over a fixed
window inside the load. It prints, per request, the CPU microseconds of the server, of
PostgreSQL and of the client (CPU time from /proc, divided by the load generator's rate
times the window), and splits the server's share by where
perf's samples landed (framework, JSON, pool, driver, blocking hand-off, runtime, allocator,
kernel network, kernel wake-ups, ...). Categories come from symbol names (debug info of the
release profile), first matching rule wins; see CATEGORIES.

A sample is a statistical estimate: the split is good to a few percent, the /proc CPU
times are exact to the 10 ms tick. One fixed URL per scenario (bookById always asks for the same book), so the
database side is cache-hot — the point is the stacks' own costs.
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

# Every stack of the registry (`loadgen stacks` lists them, one per line).
STACKS = subprocess.run(
    ["target/release/loadgen", "stacks"], check=True, capture_output=True, text=True
).stdout.split()
# The HTTP ceiling of the suite (hyper on one current-thread runtime per core): `health` only.
RESPONDER = "responder"
# The GET scenarios of SPEC §4 (`loadgen http` drives one GET URL).
SCENARIOS = {
    "health": "/health",
    "smallJson": "/api/books/bench/small-json",
    "largeJson": "/api/books/bench/large-json?limit=200",
    "bookById": "/api/books/4242",
    "bookList": "/api/books?limit=50",
    "bookList500": "/api/books?limit=500",
    "bookSearch": "/api/books/search?q=Book&limit=20",
    "aggregateReport": "/api/books/bench/aggregate-report?limit=50",
}

# (category, dso pattern or None, symbol pattern or None); the first match wins.
CATEGORIES = [
    ("kernel: wake-ups, scheduler", r"kernel", r"futex|sched|task_switch|try_to_wake|wake_up|rseq|enqueue|dequeue|pick_next|idle"),
    ("kernel: network", r"kernel", r"tcp|inet|\bip_|_ip_|skb|sock|net|dev_queue|napi|loopback|(^|[^a-z])sk_|__sys_(send|recv)"),
    ("kernel: epoll", r"kernel", r"ep_|epoll"),
    ("kernel: other", r"kernel", None),
    ("allocator", r"libc", r"malloc|free|_int_|realloc|unlink_chunk|tcache|consolidate|calloc"),
    ("memcpy", r"libc", r"mem(cpy|move|set|cmp)"),
    ("driver (libpq)", r"libpq", None),
    ("driver (libpq)", None, r"^(pq[A-Z]|PQ|pg_)"),  # pq-sys linked statically
    ("libc: other (syscall wrappers)", r"libc|vdso|ld-linux", None),
    # sqlx runs its row streams inside `tracing::Instrument::in_current_span`; the stream's
    # code is inlined into `Instrumented::poll`, so those samples are the driver's.
    ("driver (sqlx, diesel)", None, r"tracing::instrument::Instrumented"),
    ("logging/tracing", None, r"tracing|log::"),
    ("blocking hand-off", None, r"tokio::runtime::blocking|spawn_blocking|actix_web::web::block|std::sync::mpmc|crossbeam|r2d2::|scheduled_thread_pool"),
    ("pool (sqlx)", None, r"sqlx_core::pool|event_listener|batch_semaphore"),
    ("driver (sqlx, diesel)", None, r"sqlx|diesel|pq_sys"),
    ("JSON", None, r"serde_json|simd_json|sonic_rs|serde_core|serde::|value_trait|halfbrown|itoa|ryu|bookstore_codec|faststr"),
    ("HTTP framework", None, r"axum|actix|hyper|\bhttp::|httparse|tower|matchit|regex_lite|bytes::|bookstore_http_serve|bookstore_web|httpdate|h1::"),
    ("async runtime", None, r"tokio|mio|futures|parking_lot|core::task|std::thread|std::sys"),
    ("bookstore (ours)", None, r"bookstore_"),
    ("other Rust (core, alloc, std)", None, None),
]

# The printed table's columns: categories summed.
GROUPS = {
    "HTTP framework": ["HTTP framework"],
    "JSON": ["JSON"],
    "driver": ["driver (sqlx, diesel)", "driver (libpq)"],
    "pool": ["pool (sqlx)"],
    "blocking hand-off": ["blocking hand-off"],
    "async runtime": ["async runtime"],
    "allocator, memcpy": ["allocator", "memcpy"],
    "kernel: network": ["kernel: network"],
    "kernel: wake-ups": ["kernel: wake-ups, scheduler", "kernel: epoll"],
    "kernel, libc: other": ["kernel: other", "libc: other (syscall wrappers)"],
    "ours": ["bookstore (ours)"],
    "logging": ["logging/tracing"],
    "other Rust": ["other Rust (core, alloc, std)"],
}
assert sorted(c for g in GROUPS.values() for c in g) == sorted(dict.fromkeys(n for n, _, _ in CATEGORIES))


def log(message):
    print(f"profile: {message}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ticks(pids):
    """utime + stime of these processes, in clock ticks (processes gone count as 0)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def children(pid):
    """The live children of `pid` (from /proc: `ps` is not on every minimal Debian)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            pass
    return found


def wait_http(url, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer 200 within {seconds} s")


def categorize(perf_data, pid):
    """Share of each category in the samples of process `pid` (fractions summing to 1)."""
    out = subprocess.run(
        ["perf", "report", "-i", perf_data, "--pid", str(pid), "--no-children",
         "--sort", "dso,sym", "--stdio", "--percentage", "relative", "-F", "overhead,dso,sym",
         "--percent-limit", "0"],
        capture_output=True, text=True, check=True)
    shares = {name: 0.0 for name, _, _ in CATEGORIES}
    top = {name: [] for name, _, _ in CATEGORIES}
    for line in out.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[[.k]\]\s+(.*)", line)
        if not m:
            continue
        share, dso, sym = float(m.group(1)) / 100, m.group(2), m.group(3)
        for name, dso_re, sym_re in CATEGORIES:
            if dso_re and not re.search(dso_re, dso):
                continue
            if sym_re and not re.search(sym_re, sym):
                continue
            if not dso_re and dso.startswith("[kernel"):
                continue
            shares[name] += share
            top[name].append((share, f"{dso} {sym}"[:160]))
            break
    total = sum(shares.values()) or 1
    top = {k: [f"{share / total:.1%} {sym}" for share, sym in sorted(v, reverse=True)[:6]]
           for k, v in top.items() if v}
    return {k: v / total for k, v in shares.items()}, top


def profile_one(args, stack, scenario, db_url, postgres_pid):
    port = free_port()
    env = dict(os.environ, DATABASE_URL=db_url)
    server_log = open(os.path.join(args.out, f"{stack}.log"), "a")
    if stack == RESPONDER:
        cmd = [os.path.join(args.bin_dir, stack), "--bind", f"127.0.0.1:{port}",
               "--threads", str(os.cpu_count())]
    else:
        cmd = [os.path.join(args.bin_dir, stack), "--bind", f"127.0.0.1:{port}",
               "--pool-max", str(args.pool_max)]
    server = subprocess.Popen(cmd, env=env, stdout=server_log, stderr=server_log)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_http(base + ("/health" if stack == RESPONDER else "/health/db"), 10)
        result_json = os.path.join(args.out, f"{stack}-{scenario}.loadgen.json")
        load = subprocess.Popen(
            [os.path.join(args.bin_dir, "loadgen"), "http", "--url", base + SCENARIOS[scenario],
             "-c", str(args.connections), "--warmup", "1s",
             "--duration", f"{args.seconds + 1}s", "--json", result_json],
            stdout=subprocess.DEVNULL)
        time.sleep(1.5)
        backends = children(postgres_pid)
        before = (cpu_ticks([server.pid]), cpu_ticks(backends), cpu_ticks([load.pid]))
        started = time.monotonic()
        perf_data = os.path.join(args.out, f"{stack}-{scenario}.perf.data")
        subprocess.run(["perf", "record", "-a", "-q", "-F", str(args.frequency), "-o", perf_data,
                        "--", "sleep", str(args.seconds)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        window = time.monotonic() - started
        after = (cpu_ticks([server.pid]), cpu_ticks(backends), cpu_ticks([load.pid]))
        if load.wait() != 0:
            raise RuntimeError(f"loadgen failed on {stack} {scenario}")
        with open(result_json) as f:
            result = json.load(f)
        requests = result["throughput_rps"] * window
        hz = os.sysconf("SC_CLK_TCK")
        us = [(a - b) / hz * 1e6 / max(requests, 1) for a, b in zip(after, before)]
        shares, top = categorize(perf_data, server.pid)
        return {
            "stack": stack, "scenario": scenario, "throughput_rps": result["throughput_rps"],
            "errors": result.get("errors", 0),
            "server_cpu_us_per_request": us[0], "postgres_cpu_us_per_request": us[1],
            "client_cpu_us_per_request": us[2],
            "server_split_us_per_request": {k: v * us[0] for k, v in shares.items()},
            "server_top_symbols": top,
        }
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        server_log.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--stacks", default=",".join(STACKS + [RESPONDER]),
                   help=f"comma-separated; {RESPONDER!r} is the HTTP ceiling (health only)")
    p.add_argument("--scenarios", default="health,smallJson,bookById,bookList")
    p.add_argument("--seconds", type=float, default=4, help="perf window per cell")
    p.add_argument("-c", "--connections", type=int, default=128)
    p.add_argument("--pool-max", type=int, default=32)
    p.add_argument("--frequency", type=int, default=999, help="perf samples per second per CPU")
    p.add_argument("--bin-dir", default="target/release")
    p.add_argument("--out", default="target/profile", help="perf data, loadgen results, profile.json")
    args = p.parse_args()
    stacks = args.stacks.split(",")
    scenarios = args.scenarios.split(",")
    for s in stacks:
        if s not in STACKS + [RESPONDER]:
            sys.exit(f"profile: unknown stack {s!r} (known: {', '.join(STACKS + [RESPONDER])})")
    for s in scenarios:
        if s not in SCENARIOS:
            sys.exit(f"profile: {s!r} is not a GET scenario (known: {', '.join(SCENARIOS)})")
    os.makedirs(args.out, exist_ok=True)

    db = subprocess.Popen([os.path.join(args.bin_dir, "bookstore-db"), "up"],
                          stdout=subprocess.PIPE, text=True)
    rows = []
    try:
        info = {}
        for line in db.stdout:
            key, _, value = line.strip().partition("=")
            info[key] = value
            if "POSTGRES_DIR" in info:
                break
        if "DATABASE_URL" not in info:
            sys.exit("profile: bookstore-db up did not start a database")
        # Alternate stacks inside each scenario, so a drifting machine hits them alike.
        for scenario in scenarios:
            for stack in stacks:
                if stack == RESPONDER and scenario != "health":
                    continue  # it answers every path with the health body
                log(f"{stack} {scenario}")
                rows.append(profile_one(args, stack, scenario, info["DATABASE_URL"],
                                        int(info["POSTGRES_PID"])))
    finally:
        db.send_signal(signal.SIGTERM)
        db.wait(30)

    with open(os.path.join(args.out, "profile.json"), "w") as f:
        json.dump({"settings": vars(args), "cells": rows}, f, indent=1)
    print_tables(rows)


def print_tables(rows):
    print("| stack | scenario | req/s | server µs/req | postgres µs/req | client µs/req |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['stack']} | {r['scenario']} | {r['throughput_rps']:.0f} | "
              f"{r['server_cpu_us_per_request']:.1f} | {r['postgres_cpu_us_per_request']:.1f} | "
              f"{r['client_cpu_us_per_request']:.1f} |")
    print()
    print("Server CPU per request by where it goes (µs; details per category in profile.json):")
    print()
    print("| stack | scenario | " + " | ".join(GROUPS) + " |")
    print("|---|---|" + "---:|" * len(GROUPS))
    for r in rows:
        split = r["server_split_us_per_request"]
        cells = [sum(split[c] for c in members) for members in GROUPS.values()]
        print(f"| {r['stack']} | {r['scenario']} | " + " | ".join(f"{v:.1f}" for v in cells) + " |")

if __name__ == "__main__":
    main()
