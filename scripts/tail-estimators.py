#!/usr/bin/env python3
"""How far a twin's equal-load p99 comes out from its stack's, by three ways of reading a
p99 over a cell's rounds (kept results files; no run needed).

A twin (`<stack>.twin`, the same binary and flags) has no true difference from its stack,
so the scatter of its ln p99 ratio over the cells of many runs is the noise an estimator
carries. Per cell (scenario x offered rate) with at least three rounds both measured:

- the geometric mean of the per-round p99 ratios (what the page judges);
- their median;
- the ratio of the p99s of the rounds' merged histograms (the issue's candidate: one
  window's stall sets the merged tail).

Each printed as the root mean square of ln ratio over the cells. Reads the histograms with
the `hdrhistogram` package (`pip install hdrhistogram`).

Usage: scripts/tail-estimators.py summary/results/<run>.json [...]
"""

import json
import subprocess
import math
import statistics
import sys
from collections import defaultdict

try:
    from hdrh.histogram import HdrHistogram
except ImportError:
    sys.exit("tail-estimators.py needs the hdrhistogram package: pip install hdrhistogram")

MIN_ROUNDS = 3


def merged_p99(cells):
    histogram = HdrHistogram.decode(cells[0]["histogram_ok"])
    for cell in cells[1:]:
        histogram.add(HdrHistogram.decode(cell["histogram_ok"]))
    return histogram.get_value_at_percentile(99)


def twin_cells(results):
    """Per twin cell, (the stack's windows, the twin's) over the rounds both have a p99."""
    windows = defaultdict(dict)  # (scenario, rate) -> (stack, round) -> cell
    for stack in results["stacks"]:
        for cell in stack.get("equal_load") or []:
            if cell.get("latency_ok_us") and cell.get("histogram_ok"):
                key = (cell["scenario"], round(cell["mode"]["open"]["rate_rps"]))
                windows[key][(stack["name"], cell["round"])] = cell
    for cells in windows.values():
        for twin in {name for name, _ in cells if name.endswith(".twin")}:
            stack = twin.removesuffix(".twin")
            rounds = sorted(r for name, r in cells if name == twin and (stack, r) in cells)
            if len(rounds) >= MIN_ROUNDS:
                yield [cells[(stack, r)] for r in rounds], [cells[(twin, r)] for r in rounds]


def main(paths):
    estimates = defaultdict(list)
    for path in paths:
        if path.endswith(".zst"):  # compressed results: zstd from Debian's package
            out = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
            results = json.loads(out)
        else:
            with open(path) as f:
                results = json.load(f)
        for stack, twin in twin_cells(results):
            logs = [math.log(t["latency_ok_us"]["p99_us"] / s["latency_ok_us"]["p99_us"])
                    for s, t in zip(stack, twin)]
            estimates["geometric mean of the rounds' ratios"].append(statistics.fmean(logs))
            estimates["median of the rounds' ratios"].append(statistics.median(logs))
            estimates["ratio of the merged histograms' p99"].append(
                math.log(merged_p99(twin) / merged_p99(stack)))
    print("estimator | twin cells | root mean square of ln(twin / stack)")
    for name, values in estimates.items():
        rms = math.sqrt(statistics.fmean(v * v for v in values))
        print(f"{name} | {len(values)} | {rms:.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: scripts/tail-estimators.py RESULTS.json [...]")
    main(sys.argv[1:])
