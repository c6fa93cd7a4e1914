#!/usr/bin/env bash
# The sequential study (docs/method.md, "Rounds where they are needed"): does the default
# design — 3 rounds of short windows, then more for the families still open within
# --budget — see more than the fixed design before this issue's work (5 rounds of 0.5 s
# windows after 0.2 s warm-ups for every family)? Both are run alternately, RUNS times
# each, on the same build and hour, each with the default twin of axum-serde-sqlx and every
# scenario, by scripts/alternation-study.sh; the budgeted runs keep the default budget
# unless --budget gives them another (the fixed design has no extra rounds to spend it on).
#
#   scripts/sequential-study.sh               # 2 × 2 full runs, about an hour
#   scripts/sequential-study.sh --budget 1120s   # the budgeted runs given the fixed ones' time
#   RUNS=1 scripts/sequential-study.sh --scenarios health,bookById
# Further arguments go to every `loadgen suite` run. BIN_DIR=… uses binaries already built
# (else a release build). Quiet machine only: the runs compare each other.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/alternation-study.sh sequential \
    fixed='--rounds 5 --max-rounds 5 --duration 500ms --warmup 200ms' budgeted= -- "$@"
