#!/usr/bin/env bash
# The connections study (docs/connections.md): what does each idle keep-alive connection cost a
# stack in memory, and do the rate and the tail of the measured load survive ten thousand of
# them held open beside it?
#
# One suite run, so that every comparison is made round by round on the same machine: the
# stacks of $STACKS themselves and each with every count of $IDLE idle connections held open
# to it through each of its windows (`--idle-connections`: variants `<stack>.idle<N>` in the
# same rounds), $SCENARIOS measured at c=$CONCURRENCY. The page's section "Idle connections"
# answers from the results file: each stack's KiB per connection with its interval, the
# server's RSS, threads and descriptors with them open, and the load against the stack's own.
#
#   scripts/connections-study.sh            # five stacks at 0, 1000 and 10000, 5 rounds
#   scripts/connections-study.sh --tiny     # one stack at 0, 100 and 300, 2 rounds (its test)
#   STACKS=axum-serde-sqlx IDLE=1000,5000,10000 ROUNDS=8 scripts/connections-study.sh
# ROUNDS (5) and DURATION (1s) set the measurement; further arguments go to `loadgen suite`
# (not those two: it takes each flag once). BIN_DIR=… uses binaries already built (else a
# release build). Quiet machine only. Holding N connections takes N descriptors in the
# client and in each server: the suite raises its open-files limit to the hard limit
# (`ulimit -Hn`) and says so if that is too low.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

STACKS=${STACKS:-axum-serde-sqlx,axum-serde-diesel,actix-serde-diesel,actix-simd-sqlx,hyper-sonic-sqlx}
IDLE=${IDLE:-1000,10000}
SCENARIOS=${SCENARIOS:-bookById,checkoutCreate}
CONCURRENCY=${CONCURRENCY:-128}
stamp=$(date -u +%Y-%m-%dT%H-%M-%SZ)
OUTPUT=${OUTPUT:-summary/results/$stamp-connections-study.json}
PAGE=${PAGE:-summary/connections-study.html}

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-1s}
extra=() warmup=(--warmup 200ms)
for arg in "$@"; do
    if [ "$arg" = --tiny ]; then
        STACKS=axum-serde-sqlx IDLE=100,300 CONCURRENCY=8 ROUNDS=2 DURATION=200ms
        warmup=(--warmup 50ms)
    else
        extra+=("$arg")
    fi
done

release_binaries

say "stacks $STACKS, each also with $IDLE idle connections; $SCENARIOS at c=$CONCURRENCY, $ROUNDS rounds; results $OUTPUT, page $PAGE"
# A fixed design of ROUNDS rounds, no twin, no ceilings: the study is its parties.
exec "$BIN_DIR/loadgen" suite --bin-dir "$BIN_DIR" \
    --stacks "$STACKS" --idle-connections "$IDLE" \
    --scenarios "$SCENARIOS" --concurrency "$CONCURRENCY" --no-equal-load --no-ceilings \
    --rounds "$ROUNDS" --max-rounds "$ROUNDS" --no-twin --duration "$DURATION" "${warmup[@]}" \
    --output "$OUTPUT" --report "$PAGE" "${extra[@]}"
