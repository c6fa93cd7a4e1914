#!/usr/bin/env bash
# The schedule study (docs/noise.md, "The schedule study"): does a round that puts the windows
# compared with each other next to each other (`--schedule grouped`, the default) see more
# than one that rotates every window of the round together (`--schedule rotated`, the
# schedule before it)? Both schedules are run alternately, RUNS times each, on the same
# build and hour, each with a twin of axum-serde-sqlx, by scripts/alternation-study.sh
# (which prints each run's spread: lower sees more).
#
#   scripts/schedule-study.sh                 # 2 × 2 runs of four scenarios, no equal load
#   RUNS=3 ROUNDS=8 SCENARIOS=bookById,checkoutCreate scripts/schedule-study.sh
# Further arguments go to every `loadgen suite` run. BIN_DIR=… uses binaries already built
# (else a release build). Quiet machine only: the runs compare each other.
set -euo pipefail
cd "$(dirname "$0")/.."

# A fixed design: the schedules are compared at the same rounds and windows (the kept runs':
# 5 rounds of 0.5 s windows after 0.2 s warm-ups, the defaults then).
ROUNDS=${ROUNDS:-5}
SCENARIOS=${SCENARIOS:-health,smallJson,bookById,checkoutCreate}
exec scripts/alternation-study.sh schedule rotated='--schedule rotated' grouped='--schedule grouped' \
    -- --scenarios "$SCENARIOS" --no-equal-load --twin axum-serde-sqlx \
    --rounds "$ROUNDS" --max-rounds "$ROUNDS" --duration 500ms --warmup 200ms "$@"
