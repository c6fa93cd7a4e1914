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
  the mean of their per-round log ratios and its standard error, per file;
- by the time between the pair's two windows within a round (the rotation puts a pair's
  windows next to each other in some rounds and far apart in others): if the noise were
  drift, the residual |e| of a round would grow with that gap; if it were white at the
  window scale, it would not, and only longer windows (or more of them) would help.

Usage: scripts/noise-study.py summary/results/<run>.json [...]   (docs/noise.md has the
figures of the kept runs and the command that made them.)
"""

import json
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
    by_scenario, by_concurrency = defaultdict(list), defaultdict(list)
    residuals = []  # (gap seconds, |residual| scaled to the pair's spread)
    print(
        "file | HTTP ceiling /s | window s (median) | rounds | pairs | median sd of ln ratio | "
        "run s per round | sd per minute"
    )
    for path in paths:
        with open(path) as f:
            results = json.load(f)
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
    print("file | twin | rounds | mean ln(twin / stack) | standard error")
    for path in paths:
        with open(path) as f:
            results = json.load(f)
        for twin, logs in twin_ratios(results).items():
            error = sd(logs) / math.sqrt(len(logs)) if len(logs) >= 2 else float("nan")
            print(f"{path} | {twin} | {len(logs)} | {statistics.fmean(logs):+.4f} | {error:.4f}")


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
