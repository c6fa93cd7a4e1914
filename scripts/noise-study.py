#!/usr/bin/env python3
"""Where the noise of a suite run lives, read from kept results files (no run needed).

For every pair of stacks in a cell (scenario x concurrency), the suite compares the
per-round log ratio ln(b / a) of their closed-loop rates. Its spread across rounds is the
noise the verdicts fight. This script splits that spread by what could cause it:

- by the window length and the run (one row per results file), with the run's seconds per
  round (of a fixed design; of the longest family otherwise) and the spread a minute of
  such rounds leaves (spread x sqrt(seconds per round /
  60): a design that sees more in the same time has the lower one);
- by scenario and by concurrency (the medians over the files given);
- whether a twin (`<stack>.twin`, the same binary and flags) came out even with its stack:
  the mean of their per-round log ratios and its standard error, per file, and over all
  files by whether the twin ran before or after its stack in the round (an order effect
  would make it lead one way and lag the other);
- how far two processes of one binary differ beyond the rounds' noise: per twin cell, the
  mean of its rounds' log ratios and their standard error; the spread between processes
  is the sd that, added to that error, best explains how far the means fall from 0 (a
  maximum-likelihood fit over every twin cell of at least MIN_TWIN_ROUNDS rounds in the
  files given, each cell's own round-to-round variance fitted with it), and the share of twin cells outside their 95% interval without and with it
  (bookstore_stats::PROCESS_SD is this figure, from the kept runs docs/method.md names in "Two processes");
- the equal-load p99 (the fixed-load phase), per file: the per-window spread of ln p99
  around the additive fit ln p99 = stack + round (the model the page judges the p99s by,
  `Residual` in crates/stats; here over every window with a p99, where the page also drops a
  client-limited window, so its figure can differ by a few hundredths), the seconds a
  fixed-load window took from one start to the next, and the spread a minute of such
  windows leaves (spread x sqrt(seconds per window / 60)): if the tail's noise is white in
  window time, longer windows lower the first and leave the last;
- by the time between the pair's two windows within a round (the rotation puts a pair's
  windows next to each other in some rounds and far apart in others): if the noise were
  drift, the residual |e| of a round would grow with that gap; if it were white at the
  window scale, it would not, and only longer windows (or more of them) would help.

Usage: scripts/noise-study.py summary/results/<run>.json [...]   (docs/method.md, "Where the noise lives",
has the figures of the kept runs.)
"""

import json
import subprocess
import math
import statistics
import sys
from collections import defaultdict
from itertools import combinations


def closed_cells(stack):
    return [c for c in stack.get("cells", []) if c.get("mode") == "closed"]


def pairs_of(results):
    """(scenario, concurrency, [(log ratio, gap seconds, window seconds)] per round) per pair."""
    by_cell = defaultdict(dict)  # (scenario, c) -> stack -> round -> cell
    for stack in results["stacks"]:
        if stack.get("status") not in (None, "measured"):
            continue
        for cell in closed_cells(stack):
            key = (cell["scenario"], cell["concurrency"])
            by_cell[key].setdefault(stack["name"], {})[cell["round"]] = cell
    for (scenario, concurrency), stacks in by_cell.items():
        for a, b in combinations(sorted(stacks), 2):
            rounds = []
            for r in sorted(set(stacks[a]) & set(stacks[b])):
                ca, cb = stacks[a][r], stacks[b][r]
                ra, rb = ca.get("throughput_rps") or 0, cb.get("throughput_rps") or 0
                sa, sb = ca.get("started_seconds"), cb.get("started_seconds")
                if ra <= 0 or rb <= 0 or sa is None or sb is None:
                    continue
                window = (ca.get("window_seconds", 0) + cb.get("window_seconds", 0)) / 2
                rounds.append((math.log(rb / ra), abs(sb - sa), window))
            if len(rounds) >= 3:
                yield scenario, concurrency, rounds


def http_ceiling_rps(results):
    """The hour's speed: the HTTP ceiling's median rate on `health` at its lowest concurrency."""
    cells = [c for c in results.get("ceilings", {}).get("http", []) if c["scenario"] == "health"]
    if not cells:
        return float("nan")
    lowest = min(c["concurrency"] for c in cells)
    return statistics.median(c["throughput_rps"] for c in cells if c["concurrency"] == lowest)


def sd(values):
    return statistics.stdev(values) if len(values) >= 2 else float("nan")


def median(values):
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else float("nan")


def main(paths):
    # Each file read once: a default run's file is over a megabyte of histograms.
    runs = []
    for path in paths:
        if path.endswith(".zst"):  # compressed results: zstd from Debian's package
            text = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
            runs.append((path, json.loads(text)))
            continue
        with open(path) as f:
            runs.append((path, json.load(f)))
    by_scenario, by_concurrency = defaultdict(list), defaultdict(list)
    residuals = []  # (gap seconds, |residual| scaled to the pair's spread)
    print(
        "file | HTTP ceiling /s | window s (median) | rounds | pairs | median sd of ln ratio | "
        "run s per round | sd per minute"
    )
    for path, results in runs:
        spreads, windows, n_rounds = [], [], []
        for scenario, concurrency, rounds in pairs_of(results):
            logs = [r[0] for r in rounds]
            spread = sd(logs)
            spreads.append(spread)
            windows.extend(r[2] for r in rounds)
            n_rounds.append(len(rounds))
            by_scenario[scenario].append(spread)
            by_concurrency[concurrency].append(spread)
            mean = statistics.fmean(logs)
            # Leave-one-out residual: the round against the mean of the others, so a
            # round's own value does not pull its mean toward it.
            n = len(logs)
            for log, gap, _ in rounds:
                others = (mean * n - log) / (n - 1)
                residuals.append((gap, abs(log - others)))
        # Per round of a fixed design (every pair has them all); where families got
        # different rounds (the sequential design), per round of the longest.
        seconds_per_round = results["run"]["wall_seconds"] / max(n_rounds, default=1)
        print(
            f"{path} | {http_ceiling_rps(results):.0f} | {median(windows):.2f} | "
            f"{median(n_rounds):.0f} | {len(spreads)} | "
            f"{median(spreads):.3f} | {seconds_per_round:.1f} | "
            f"{median(spreads) * math.sqrt(seconds_per_round / 60):.3f}"
        )
    print()
    print("scenario | pairs | median sd")
    for scenario, spreads in sorted(by_scenario.items(), key=lambda kv: -median(kv[1])):
        print(f"{scenario} | {len(spreads)} | {median(spreads):.3f}")
    print()
    print("concurrency | pairs | median sd")
    for concurrency, spreads in sorted(by_concurrency.items()):
        print(f"{concurrency} | {len(spreads)} | {median(spreads):.3f}")
    print()
    print("gap between the pair's windows (s) | rounds | median |residual| | mean |residual|")
    residuals.sort()
    bins = 5
    for i in range(bins):
        part = residuals[i * len(residuals) // bins : (i + 1) * len(residuals) // bins]
        if not part:
            continue
        gaps = [g for g, _ in part]
        values = [e for _, e in part]
        print(
            f"{gaps[0]:.1f}-{gaps[-1]:.1f} | {len(part)} | {statistics.median(values):.3f} | "
            f"{statistics.fmean(values):.3f}"
        )
    if len(residuals) >= 3:
        gaps = [g for g, _ in residuals]
        values = [e for _, e in residuals]
        print(f"rank correlation of |residual| with the gap: {spearman(gaps, values):.3f}")
    print()
    print(
        "file | fixed-load window s | s per fixed-load window | rounds | families | "
        "p99 spread per window (median) | p99 spread per minute"
    )
    for path, results in runs:
        tails = equal_load_tails(results)
        if tails:
            window, per_window, rounds, spreads = tails
            print(
                f"{path} | {window:.2f} | {per_window:.2f} | {rounds} | {len(spreads)} | "
                f"{median(spreads):.2f} | {median(spreads) * math.sqrt(per_window / 60):.3f}"
            )
    print()
    print("file | twin | rounds | mean ln(twin / stack) | standard error")
    for path, results in runs:
        for twin, logs in twin_ratios(results).items():
            error = sd(logs) / math.sqrt(len(logs)) if len(logs) >= 2 else float("nan")
            print(f"{path} | {twin} | {len(logs)} | {statistics.fmean(logs):+.4f} | {error:.4f}")
    by_order = defaultdict(list)  # whether the twin ran first in its round -> log ratios
    for _, results in runs:
        for first, log in twin_rounds_by_order(results):
            by_order[first].append(log)
    if by_order:
        print()
        print("twin ran | rounds | mean ln(twin / stack) | standard error")
        for first in (True, False):
            logs = by_order[first]
            if len(logs) >= 2:
                error = sd(logs) / math.sqrt(len(logs))
                label = "before its stack" if first else "after its stack"
                print(f"{label} | {len(logs)} | {statistics.fmean(logs):+.4f} | {error:.4f}")
    cells = []
    for _, results in runs:
        cells.extend(twin_cells(results))
    if cells:
        extra = process_sd(cells)
        print()
        print(f"twin cells of at least {MIN_TWIN_ROUNDS} rounds: {len(cells)}")
        print(f"sd between two processes of one binary (maximum likelihood): {extra:.4f}")
        print(f"outside their 95% interval: {outside(cells, 0.0)} of {len(cells)} from the rounds' "
              f"error alone, {outside(cells, extra)} with that sd added")


MIN_TWIN_ROUNDS = 5
"""Fewer rounds leave a standard error too rough to weigh a cell by."""

# Two-sided 97.5% quantiles of Student's t by degrees of freedom (from statistical tables;
# beyond the last, the normal's 1.96 is near enough for a share of cells).
T_975 = {4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201,
         12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
         20: 2.086, 22: 2.074, 24: 2.064, 26: 2.056, 28: 2.048, 30: 2.042}


def t_975(df):
    known = [d for d in T_975 if d <= df]
    return T_975[max(known)] if known else float("inf")


def equal_load_tails(results):
    """(fixed-load window s, s per window start to start, rounds, [per-window spread of
    ln p99 around the additive fit, per scenario x rate]); None without a fixed-load phase."""
    by_family = defaultdict(lambda: defaultdict(dict))  # (scenario, rate) -> stack -> round -> p99
    starts = defaultdict(list)  # (scenario, rate) -> window starts
    windows = []
    for stack in results["stacks"]:
        for cell in stack.get("equal_load") or []:
            rate = round(cell["mode"]["open"]["rate_rps"])
            key = (cell["scenario"], rate)
            if cell.get("started_seconds") is not None:
                starts[key].append(cell["started_seconds"])
            windows.append(cell["window_seconds"])
            latency = cell.get("latency_ok_us")
            if latency and latency["p99_us"] > 0:
                by_family[key][stack["name"]][cell["round"]] = latency["p99_us"]
    # Start to start within a family's block: the window, its warm-up and the switch.
    gaps = [b - a for times in starts.values() for a, b in zip(sorted(times), sorted(times)[1:])]
    spreads, rounds = [], 0
    for stacks in by_family.values():
        shared = set.intersection(*(set(r) for r in stacks.values()))
        members = [[math.log(r[k]) for k in sorted(shared)] for r in stacks.values()]
        s, n = len(members), len(shared)
        if s < 2 or n < 2:
            continue
        grand = statistics.fmean(v for row in members for v in row)
        row_means = [statistics.fmean(row) for row in members]
        round_means = [statistics.fmean(row[j] for row in members) for j in range(n)]
        squares = sum((row[j] - m - round_means[j] + grand) ** 2
                      for row, m in zip(members, row_means) for j in range(n))
        spreads.append(math.sqrt(squares / ((s - 1) * (n - 1))))
        rounds = max(rounds, n)
    if not spreads or not gaps:
        return None
    return median(windows), median(gaps), rounds, spreads


def twin_cells(results):
    """Per twin and cell (scenario, concurrency): (mean ln(twin / stack), its standard error,
    rounds), over the closed-loop rounds both measured."""
    rates = defaultdict(dict)  # (scenario, concurrency) -> stack -> round -> rate
    for stack in results["stacks"]:
        for cell in closed_cells(stack):
            rate = cell.get("throughput_rps") or 0
            if rate > 0:
                key = (cell["scenario"], cell["concurrency"])
                rates[key].setdefault(stack["name"], {})[cell["round"]] = rate
    for (scenario, concurrency), by_stack in sorted(rates.items()):
        for name, rounds in by_stack.items():
            stack = name.removesuffix(".twin")
            if name == stack or stack not in by_stack:
                continue
            logs = [math.log(rate / by_stack[stack][r]) for r, rate in rounds.items()
                    if r in by_stack[stack]]
            if len(logs) >= MIN_TWIN_ROUNDS:
                error = sd(logs) / math.sqrt(len(logs))
                yield statistics.fmean(logs), error, len(logs)


def process_sd(cells):
    """The sd between processes that maximises the likelihood of the twin cells: each cell's
    rounds normal around a mean of its own, that mean normal around 0 with this sd, and each
    cell's own round-to-round variance fitted with it (so that a cell whose few rounds came
    out close by chance does not count as precise; a grid of 0.0005 steps)."""
    def cell(mean, error, n, extra):
        variance = error * error * n  # the rounds' sample variance
        best = -math.inf
        for step in range(-40, 41):  # the cell's own variance, from a twentieth to 20 times it
            own = variance * math.exp(step * 0.075)
            total = extra * extra + own / n
            best = max(best, -0.5 * (math.log(total) + mean * mean / total)
                       - 0.5 * (n - 1) * (math.log(own) + variance / own))
        return best
    grid = [i * 0.0005 for i in range(121)]
    return max(grid, key=lambda extra: sum(cell(m, e, n, extra) for m, e, n in cells))


def outside(cells, extra):
    """Twin cells whose mean is outside its 95% interval, the error widened by `extra`."""
    return sum(1 for m, e, n in cells if abs(m) > t_975(n - 1) * math.sqrt(e * e + extra * extra))


def twin_rounds_by_order(results):
    """(whether the twin's window started before its stack's, ln(twin rate / stack rate)) per
    closed-loop round both measured: if what a window leaves behind favoured the party after
    it, the twin would lead in one order and lag in the other."""
    windows = defaultdict(dict)  # (scenario, concurrency, round) -> stack -> cell
    for stack in results["stacks"]:
        for cell in closed_cells(stack):
            windows[(cell["scenario"], cell["concurrency"], cell["round"])][stack["name"]] = cell
    for by_stack in windows.values():
        for name, twin in by_stack.items():
            stack = by_stack.get(name.removesuffix(".twin"))
            if name.endswith(".twin") and stack is not None:
                a, b = stack.get("throughput_rps") or 0, twin.get("throughput_rps") or 0
                if a > 0 and b > 0 and None not in (twin.get("started_seconds"), stack.get("started_seconds")):
                    yield twin["started_seconds"] < stack["started_seconds"], math.log(b / a)


def twin_ratios(results):
    """Per twin (`<stack>.twin`), ln(twin rate / its stack's rate) of every closed-loop round
    both measured, over all cells: a twin has nothing to find, so their mean should be 0."""
    rates = defaultdict(dict)  # (scenario, concurrency, round) -> stack -> rate
    for stack in results["stacks"]:
        for cell in closed_cells(stack):
            rate = cell.get("throughput_rps") or 0
            if rate > 0:
                rates[(cell["scenario"], cell["concurrency"], cell["round"])][stack["name"]] = rate
    logs = defaultdict(list)
    for by_stack in rates.values():
        for name, rate in by_stack.items():
            stack = name.removesuffix(".twin")
            if name != stack and stack in by_stack:
                logs[name].append(math.log(rate / by_stack[stack]))
    return logs


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    for rank, i in enumerate(order):
        out[i] = float(rank)
    return out


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return num / den if den else float("nan")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: scripts/noise-study.py RESULTS.json [...]")
    main(sys.argv[1:])
