#!/usr/bin/env bash
# The deployment study (docs/deployment.md, "The deployment study"): does blocking database access
# on a thread pool or an async driver win once PostgreSQL is a round trip away, where does
# the pool become the bound, and what does each style pay in threads and memory?
#
# One suite run, so that every comparison is made round by round on the same machine: the
# async stack ($ASYNC) and the blocking one ($BLOCKING, the same framework and serializer)
# at every pool size of $POOLS, the blocking one with blocking threads = pool and = 2 × pool,
# each behind a relay adding every round trip of $LATENCIES (db-relay; 0 is direct) — as
# labelled variants (`<stack>.p<pool>[.t<threads>][.db<latency>]`) in the same rounds. The
# page's section "The database farther away" answers from the results file.
#
#   scripts/deployment-study.sh            # the full grid: 4 scenarios × 27 parties
#   scripts/deployment-study.sh --tiny     # 12 parties, one scenario, 2 rounds (its test)
#   POOLS=16,64 LATENCIES=0,1ms ROUNDS=8 CEILINGS=1 scripts/deployment-study.sh
# The full grid's kept run, its duration in `run.wall_seconds`:
# summary/results/2026-12-02T09-59-56Z-deployment-study.json.
# ROUNDS (5), DURATION (1s) and CEILINGS (0: none; 1: the database ceilings, directly and
# behind each relay) set the measurement; further arguments go to `loadgen suite` (not
# those three: it takes each flag once). BIN_DIR=… uses binaries already built (else a
# release build). Quiet machine only.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ASYNC=${ASYNC:-axum-serde-sqlx}
BLOCKING=${BLOCKING:-axum-serde-diesel}
POOLS=${POOLS:-16,32,64}
LATENCIES=${LATENCIES:-0,250us,1ms}
SCENARIOS=${SCENARIOS:-bookById,bookList,checkoutCreate,checkoutHotspot}
CONCURRENCY=${CONCURRENCY:-128}
stamp=$(date -u +%Y-%m-%dT%H-%M-%SZ)
OUTPUT=${OUTPUT:-summary/results/$stamp-deployment-study.json}
PAGE=${PAGE:-summary/deployment-study.html}

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-1s}
CEILINGS=${CEILINGS:-0}
extra=() warmup=(--warmup 200ms)
for arg in "$@"; do
    if [ "$arg" = --tiny ]; then
        POOLS=2,4 LATENCIES=0,2ms SCENARIOS=checkoutCreate CONCURRENCY=8
        ROUNDS=2 DURATION=200ms warmup=(--warmup 50ms)
        # The tiny run is also the check that the ceilings work behind the relay.
        CEILINGS=1
    else
        extra+=("$arg")
    fi
done
# A fixed design of ROUNDS rounds, no twin: the study is its parties.
timing=(--rounds "$ROUNDS" --max-rounds "$ROUNDS" --no-twin --duration "$DURATION" "${warmup[@]}")
[ "$CEILINGS" = 1 ] || timing+=(--no-ceilings)

IFS=, read -r -a pools <<< "$POOLS"
IFS=, read -r -a latencies <<< "$LATENCIES"
[ "${#pools[@]}" -gt 0 ] && [ "${#latencies[@]}" -gt 0 ] || die "POOLS and LATENCIES need a value each"

# The first pool, reached directly, is the stacks themselves; every other party a variant.
first_pool=${pools[0]}
variants=()
for latency in "${latencies[@]}"; do
    relay=() suffix=
    # Any zero (0, 0s, 0ms, …) is the database reached directly.
    if [[ ! "$latency" =~ ^0+[a-z]*$ ]]; then relay=(--db-latency "$latency") suffix=".db$latency"; fi
    for pool in "${pools[@]}"; do
        base=$([ "$pool" = "$first_pool" ] && [ -z "$suffix" ] && echo yes || true)
        [ -n "$base" ] || variants+=(--variant "$ASYNC.p$pool$suffix=$ASYNC --pool-max $pool ${relay[*]}")
        [ -n "$base" ] || variants+=(--variant "$BLOCKING.p$pool.t$pool$suffix=$BLOCKING --pool-max $pool --blocking-threads $pool ${relay[*]}")
        twice=$((2 * pool))
        variants+=(--variant "$BLOCKING.p$pool.t$twice$suffix=$BLOCKING --pool-max $pool --blocking-threads $twice ${relay[*]}")
    done
done

release_binaries

say "$(( ${#variants[@]} / 2 + 2 )) parties × scenarios $SCENARIOS at c=$CONCURRENCY; results $OUTPUT, page $PAGE"
exec "$BIN_DIR/loadgen" suite --bin-dir "$BIN_DIR" \
    --stacks "$ASYNC,$BLOCKING" --pool-max "$first_pool" --blocking-threads "$first_pool" \
    --scenarios "$SCENARIOS" --concurrency "$CONCURRENCY" --no-equal-load \
    "${timing[@]}" "${variants[@]}" --output "$OUTPUT" --report "$PAGE" "${extra[@]}"
