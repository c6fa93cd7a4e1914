#!/usr/bin/env bash
# Where a request's time goes inside the servers (docs/findings.md, "Where the CPU goes").
# Starts a throwaway database, then runs each configuration in turn over ROUNDS
# rounds whose order rotates: the stack started with --timing-file (bookstore-timing: the
# store call, and for a blocking store its wait for a thread, for a connection, the query and
# the hand-back to the async worker), `loadgen http --scenario` at CONCURRENCY for DURATION,
# and, in the middle of the window, each thread group's CPU and involuntary context switches
# from /proc. Prints, per configuration, the medians over the rounds: the client's p99 and
# p99.9, the phases' p99, the slowest 1% of blocking calls broken down, the store calls per
# async worker thread, and the thread groups.
#
#   scripts/timing-breakdown.sh                             # bookById, c=128, 3 rounds of 5 s
#   SCENARIO=checkoutCreate CONCURRENCY=256 scripts/timing-breakdown.sh
#   CONFIGS="one-worker=actix-serde-diesel --workers 1;actix-serde-diesel" scripts/timing-breakdown.sh
# Quiet machine only. The timing itself costs a little: compare configurations both timed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ROUNDS=${ROUNDS:-3}
SCENARIO=${SCENARIO:-bookById}
CONCURRENCY=${CONCURRENCY:-128}
DURATION=${DURATION:-5}
# "label=stack flags" or "stack", separated by ';'.
CONFIGS=${CONFIGS:-"actix-serde-diesel;actix-per-worker=actix-serde-diesel --blocking-pool per-worker;axum-serde-diesel;axum-serde-sqlx"}

require_cargo
ensure_tool python3 python3
ensure_pg_binaries
# shellcheck disable=SC2046 # one -p argument per word
cargo build --release --locked $(run_packages)

workdir=$(mktemp -d)
db_pid= server_pid= load_pid=
cleanup() {
    [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    [ -n "$db_pid" ] && kill "$db_pid" 2>/dev/null && wait "$db_pid" 2>/dev/null
    rm -rf "$workdir"
}
trap cleanup EXIT

start_throwaway_db "$workdir"
port=$(free_port)

# Each thread's comm, CPU ticks and involuntary switches.
threads() {
    for task in /proc/"$1"/task/*; do
        printf '%s\t%s\t%s\n' "$(cat "$task/comm")" "$(awk '{print $14 + $15}' "$task/stat")" \
            "$(awk '/^nonvoluntary_ctxt_switches/ {print $2}' "$task/status")"
    done 2>/dev/null
}

IFS=';' read -r -a configs <<< "$CONFIGS"
labels=()
for config in "${configs[@]}"; do labels+=("${config%%=*}"); done
for round in $(seq "$ROUNDS"); do
    shift_by=$(( (round - 1) % ${#configs[@]} ))
    order=("${configs[@]:shift_by}" "${configs[@]:0:shift_by}")
    for config in "${order[@]}"; do
        label=${config%%=*}
        read -r -a command <<< "${config#*=}"
        target/release/"${command[0]}" "${command[@]:1}" --bind "127.0.0.1:$port" \
            --timing-file "$workdir/$label.timing.jsonl" 2>>"$workdir/server.log" &
        server_pid=$!
        wait_http_ok "http://127.0.0.1:$port/health/db" || die "the stack did not start: $(tail -3 "$workdir/server.log")"
        target/release/loadgen http "http://127.0.0.1:$port" --scenario "$SCENARIO" \
            -c "$CONCURRENCY" --duration "${DURATION}s" --warmup 1s \
            --json "$workdir/$label.$round.load.json" > /dev/null &
        load_pid=$!
        # The middle of the window: one second in, for half of it.
        sleep 2
        threads "$server_pid" > "$workdir/before"
        sleep "$(python3 -c "print($DURATION / 2)")"
        threads "$server_pid" > "$workdir/after"
        python3 - "$workdir/before" "$workdir/after" "$DURATION" > "$workdir/$label.$round.threads.json" <<'PY'
import collections, json, sys
def read(path):
    rows = {}
    for i, line in enumerate(open(path)):
        comm, ticks, switches = line.rstrip("\n").split("\t")
        rows[(i, comm)] = (int(ticks), int(switches or 0))
    return rows
before, after, seconds = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3]) / 2
groups = collections.defaultdict(lambda: [0, 0.0, 0.0])
for key, (ticks, switches) in after.items():
    t0, s0 = before.get(key, (ticks, switches))
    group = key[1].split("|")[0]  # actix names its workers actix-rt|system:0|arbiter:N
    groups[group][0] += 1
    groups[group][1] += (ticks - t0) / 100 / seconds
    groups[group][2] += (switches - s0) / seconds
print(json.dumps({g: {"threads": n, "cores": c, "involuntary_per_s": s} for g, (n, c, s) in groups.items()}))
PY
        wait "$load_pid"; load_pid=
        kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
        echo "round $round: $label done" >&2
    done
done

echo "$SCENARIO, c=$CONCURRENCY, ${DURATION}s windows, $ROUNDS rounds (medians over the rounds):"
python3 - "$workdir" "$ROUNDS" "${labels[@]}" <<'PY'
import json, statistics, sys
workdir, rounds, labels = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
med = statistics.median
ms = lambda us: f"{us / 1000:.1f}"
for label in labels:
    reports = [json.loads(l) for l in open(f"{workdir}/{label}.timing.jsonl")]
    loads = [json.load(open(f"{workdir}/{label}.{r}.load.json"))["cell"] for r in range(1, rounds + 1)]
    threads = [json.load(open(f"{workdir}/{label}.{r}.threads.json")) for r in range(1, rounds + 1)]
    latency = lambda q: med(l["latency_ok_us"][q] for l in loads)
    print(f"\n## {label}: {med(l['throughput_rps'] for l in loads):.0f} req/s, client p99 {ms(latency('p99_us'))} ms, p99.9 {ms(latency('p999_us'))} ms")
    print("| phase | p50 (ms) | p99 (ms) | p99.9 (ms) | max (ms) |\n|---|---:|---:|---:|---:|")
    for phase in ["store", "thread_wait", "conn_wait", "query", "handback", "respond"]:
        if phase in reports[0]["phases"]:
            cell = lambda q: ms(med(r["phases"][phase][q] for r in reports))
            print(f"| {phase} | {cell('p50_us')} | {cell('p99_us')} | {cell('p999_us')} | {cell('max_us')} |")
    slow = [r["slowest_blocking_calls"] for r in reports if r["slowest_blocking_calls"]]
    if slow:
        part = lambda k: ms(med(s[k] for s in slow))
        print(f"slowest 1% of blocking calls (≥ {part('threshold_us')} ms): mean {part('mean_total_us')} ms ="
              f" thread wait {part('mean_thread_wait_us')} + connection wait {part('mean_conn_wait_us')}"
              f" + query {part('mean_query_us')} + hand-back {part('mean_handback_us')} ms")
    spread = [sorted(r["store_calls_per_thread"].values(), reverse=True) for r in reports]
    if all(len(s) > 1 for s in spread):
        print("store calls per async worker, largest share: " + ", ".join(f"{s[0] / sum(s):.0%}" for s in spread))
    groups = sorted({g for t in threads for g in t})
    print("threads: " + "; ".join(
        f"{g} ×{max(t[g]['threads'] for t in threads if g in t)}: {med(t[g]['cores'] for t in threads if g in t):.2f} cores,"
        f" {med(t[g]['involuntary_per_s'] for t in threads if g in t):.0f} involuntary switches/s"
        for g in groups if med(t[g]['cores'] for t in threads if g in t) >= 0.01))
PY
