#!/usr/bin/env bash
# The capacity study (docs/method.md, "Capacity at an objective"): how many requests per
# second does each stack take while its p99 stays within an objective, and where does its
# latency bend?
#
# One suite run, so that every comparison is made round by round on the same machine: the
# five stacks (and the default twin) measured closed-loop at c=$CONCURRENCY for each of
# $SCENARIOS, then offered a rate ladder in an open loop — 10% to 125% of the slowest
# stack's closed-loop rate, measured moments before (`Rate::CAPACITY_LADDER`) — each
# window judged against $SLO. The page's section 4b answers from the results file: each
# party's capacity per round, compared by the verdict method, and latency against offered
# rate with the objective and each capacity marked.
#
#   scripts/capacity-study.sh                 # p99=10ms, 6 scenarios, 3 rounds (about 16 min)
#   scripts/capacity-study.sh --tiny          # one stack and its twin, bookById at c=8, 2 rounds (its test)
#   SLO=p99=5ms,bookById:p99=2ms scripts/capacity-study.sh
# SLO (comma-separated `--slo` values; `SCENARIO:pNN=DURATION` is one scenario's own),
# ROUNDS (3) and DURATION (500ms) set the study; further arguments go to `loadgen suite`
# (not --slo, --rounds or --duration: it takes each flag once). BIN_DIR=… uses binaries
# already built (else a release build). Quiet machine only.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

STACKS=${STACKS:-axum-serde-sqlx,axum-serde-diesel,actix-serde-diesel,actix-simd-sqlx,hyper-sonic-sqlx}
SCENARIOS=${SCENARIOS:-health,bookById,bookList,bookSearch,aggregateReport,checkoutCreate}
CONCURRENCY=${CONCURRENCY:-128}
# One objective for every scenario by default: 10 ms is the objective the issue that asked
# for this study names, and the kept default runs' p99 at 70% of the slowest (3–70 ms
# across these scenarios) puts its knee inside the ladder for most of them.
SLO=${SLO:-p99=10ms}
stamp=$(date -u +%Y-%m-%dT%H-%M-%SZ)
OUTPUT=${OUTPUT:-summary/results/$stamp-capacity-study.json}
PAGE=${PAGE:-summary/capacity-study.html}

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-500ms}
extra=() warmup=(--warmup 200ms) ceilings=()
for arg in "$@"; do
    if [ "$arg" = --tiny ]; then
        STACKS=axum-serde-sqlx SCENARIOS=bookById CONCURRENCY=8 ROUNDS=2 DURATION=200ms
        warmup=(--warmup 50ms) ceilings=(--no-ceilings)
    else
        extra+=("$arg")
    fi
done
slo=()
IFS=, read -ra objectives <<< "$SLO"
for objective in "${objectives[@]}"; do
    slo+=(--slo "$objective")
done

release_binaries

say "stacks $STACKS at c=$CONCURRENCY, then a rate ladder judged by $SLO; $SCENARIOS, $ROUNDS rounds; results $OUTPUT, page $PAGE"
# A fixed design of ROUNDS rounds: every ladder is measured in every round.
exec "$BIN_DIR/loadgen" suite --bin-dir "$BIN_DIR" \
    --stacks "$STACKS" --scenarios "$SCENARIOS" --concurrency "$CONCURRENCY" "${slo[@]}" \
    --rounds "$ROUNDS" --max-rounds "$ROUNDS" "${ceilings[@]}" --duration "$DURATION" --fixed-load-duration "$DURATION" "${warmup[@]}" \
    --output "$OUTPUT" --report "$PAGE" "${extra[@]}"
