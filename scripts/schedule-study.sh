#!/usr/bin/env bash
# The schedule study (docs/noise.md, "The schedule study"): does a round that puts the windows
# compared with each other next to each other (`--schedule grouped`, the default) see more
# than one that rotates every window of the round together (`--schedule rotated`, the
# schedule before it)? Both schedules are run alternately, RUNS times each, on the same
# build and hour, each with a twin of axum-serde-sqlx; then scripts/noise-study.py prints
# each run's spread (the per-round scatter of a pair's log ratio: lower sees more).
#
#   scripts/schedule-study.sh                 # 2 × 2 runs of four scenarios, no equal load
#   RUNS=3 ROUNDS=8 SCENARIOS=bookById,checkoutCreate scripts/schedule-study.sh
# Further arguments go to every `loadgen suite` run. BIN_DIR=… uses binaries already built
# (else a release build). Quiet machine only: the runs compare each other.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

RUNS=${RUNS:-2}
# A fixed design: the schedules are compared at the same rounds (5, the kept runs').
ROUNDS=${ROUNDS:-5}
SCENARIOS=${SCENARIOS:-health,smallJson,bookById,checkoutCreate}
stamp=$(date -u +%Y-%m-%dT%H-%M-%SZ)

release_binaries

files=()
for run in $(seq 1 "$RUNS"); do
    for schedule in rotated grouped; do
        output=summary/results/$stamp-schedule-$schedule-$run.json
        say "run $run, --schedule $schedule: $output"
        "$BIN_DIR/loadgen" suite --bin-dir "$BIN_DIR" --scenarios "$SCENARIOS" --no-equal-load \
            --twin axum-serde-sqlx --rounds "$ROUNDS" --max-rounds "$ROUNDS" --schedule "$schedule" --output "$output" \
            --report "/tmp/schedule-study-$schedule-$run.html" "$@" || [ $? -eq 5 ]
        files+=("$output")
    done
done
scripts/noise-study.py "${files[@]}"
