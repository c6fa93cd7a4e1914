#!/usr/bin/env bash
# The sequential study (docs/method.md, "Rounds where they are needed"): does the default
# design — 3 rounds, then more for the families still open within --budget — see more than
# the fixed design before it (5 rounds for every family)? Both are run alternately, RUNS
# times each, on the same build and hour, each with the default twin of axum-serde-sqlx and
# every scenario; the budgeted runs keep the default budget, less than a fixed run's time,
# unless --budget gives them another (a fixed design has no extra rounds to spend it on).
# Each run's page (/tmp/sequential-study-DESIGN-RUN.html) says in its method section how many
# pairs it called, what it could detect and what its twin was called; the wall times are
# printed as the runs end.
#
#   scripts/sequential-study.sh               # 2 × 2 full runs, about an hour
#   scripts/sequential-study.sh --budget 1130s   # the budgeted runs given the fixed ones' time
#   RUNS=1 scripts/sequential-study.sh --scenarios health,bookById
# Further arguments go to every `loadgen suite` run. BIN_DIR=… uses binaries already built
# (else a release build). Quiet machine only: the runs compare each other.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

RUNS=${RUNS:-2}
stamp=$(date -u +%Y-%m-%dT%H-%M-%SZ)

release_binaries

files=()
for run in $(seq 1 "$RUNS"); do
    for design in fixed budgeted; do
        output=summary/results/$stamp-sequential-$design-$run.json
        case $design in
            fixed) flags=(--rounds 5 --max-rounds 5) ;;
            budgeted) flags=() ;;
        esac
        say "run $run, $design design: $output"
        start=$SECONDS
        "$BIN_DIR/loadgen" suite --bin-dir "$BIN_DIR" "${flags[@]}" --output "$output" \
            --report "/tmp/sequential-study-$design-$run.html" "$@" || [ $? -eq 5 ]
        say "run $run, $design design: $((SECONDS - start)) s"
        files+=("$output")
    done
done
say "kept: ${files[*]}"
