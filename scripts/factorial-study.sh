#!/usr/bin/env bash
# The factorial study (docs/factorial.md): what does each axis — framework, serializer,
# database access — cost on its own, and does async access cost its point reads, or sqlx?
#
# One suite run, so that every comparison is made round by round on the same machine: all 27
# framework × serializer × access triples (`axum+sonic-rs+diesel-async`, …; the composed
# stacks, served by axum-any, actix-web-any and hyper-any) and the five presets beside them,
# $SCENARIOS at c=$CONCURRENCY, $ROUNDS rounds of $DURATION windows. The page's section
# "What each axis costs" answers from the results file: per scenario, each axis level's
# effect as a ratio to its baseline with its interval (the additive model on log rate, each
# effect a contrast of the grid's cells compared round by round by the verdict method),
# access split into its style (diesel-async ÷ diesel) and its library (sqlx ÷ diesel-async),
# and the largest two-way interaction. Each preset against the same triple composed is the
# check against code-layout bias: they run the same code, linked into another binary.
#
#   scripts/factorial-study.sh            # 27 triples + 5 presets, five scenarios, 8 rounds
#   scripts/factorial-study.sh --tiny     # a 2×2×2 grid and one preset, 2 rounds (its test)
#   ROUNDS=10 SCENARIOS=bookById,largeJson scripts/factorial-study.sh
# ROUNDS (8), DURATION (500ms), SCENARIOS, CONCURRENCY and the grid (FRAMEWORKS, SERIALIZERS,
# ACCESSES, PRESETS) set the study; further arguments go to `loadgen suite` (not the flags
# this script sets itself — --stacks, --scenarios, --concurrency, --rounds, --duration,
# --schedule …: it takes each flag once). BIN_DIR=… uses binaries already built
# (else a release build, the composed stacks' binaries included). Quiet machine only.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

SCENARIOS=${SCENARIOS:-smallJson,largeJson,bookById,bookList500,checkoutCreate}
CONCURRENCY=${CONCURRENCY:-128}
ROUNDS=${ROUNDS:-8}
DURATION=${DURATION:-500ms}
stamp=$(date -u +%Y-%m-%dT%H-%M-%SZ)
OUTPUT=${OUTPUT:-summary/results/$stamp-factorial-study.json}
PAGE=${PAGE:-summary/factorial-study.html}

# The grid: every framework × serializer × access of the registry (loadgen stacks --composed
# --long lists them), or the tiny grid's 2 × 2 × 2.
FRAMEWORKS=${FRAMEWORKS:-axum,actix-web,hyper}
SERIALIZERS=${SERIALIZERS:-serde_json,simd-json,sonic-rs}
ACCESSES=${ACCESSES:-sqlx,diesel,diesel-async}
PRESETS=${PRESETS:-axum-serde-sqlx,axum-serde-diesel,actix-serde-diesel,actix-simd-sqlx,hyper-sonic-sqlx}
extra=() warmup=(--warmup 200ms)
for arg in "$@"; do
    if [ "$arg" = --tiny ]; then
        FRAMEWORKS=axum,hyper SERIALIZERS=serde_json,sonic-rs ACCESSES=diesel,diesel-async
        PRESETS=axum-serde-diesel SCENARIOS=bookById,checkoutCreate CONCURRENCY=8 ROUNDS=2 DURATION=200ms
        warmup=(--warmup 50ms)
    else
        extra+=("$arg")
    fi
done

grid=()
for framework in ${FRAMEWORKS//,/ }; do
    for serializer in ${SERIALIZERS//,/ }; do
        for access in ${ACCESSES//,/ }; do grid+=("$framework+$serializer+$access"); done
    done
done
stacks=$(IFS=,; echo "${grid[*]}${PRESETS:+,$PRESETS}")

release_binaries -p axum-any -p actix-web-any -p hyper-any

say "${#grid[@]} triples and the presets $PRESETS; $SCENARIOS at c=$CONCURRENCY, $ROUNDS rounds of $DURATION; results $OUTPUT, page $PAGE"
# A fixed design of ROUNDS rounds, no twin (each preset and its composed triple are twins
# of a kind: the layout check), no ceilings, no equal-load phase: the study is its grid. The
# parties in a fresh random order each round (`shuffled`): the list runs by framework, and a
# rotation would keep each framework's nine near the same place in every round.
exec "$BIN_DIR/loadgen" suite --bin-dir "$BIN_DIR" --stacks "$stacks" --schedule shuffled \
    --scenarios "$SCENARIOS" --concurrency "$CONCURRENCY" --no-equal-load --no-ceilings \
    --rounds "$ROUNDS" --max-rounds "$ROUNDS" --no-twin --duration "$DURATION" "${warmup[@]}" \
    --output "$OUTPUT" --report "$PAGE" "${extra[@]}"
