#!/usr/bin/env bash
# Designs of a suite run compared on the same build and hour: each is run in turn, RUNS
# times over (A B A B …), so the hour's drift falls on all of them alike; then
# scripts/noise-study.py prints each run's spread (the per-round scatter of a pair's log
# ratio: lower sees more), the seconds a round took, the equal-load p99's spread per window
# and per minute, and how far a twin came out from its stack, and each run's page
# (/tmp/STUDY-DESIGN-RUN.html) says in its method section how many pairs it called, what it
# could detect and what its twin was called.
#
#   scripts/alternation-study.sh STUDY NAME='FLAGS' NAME='FLAGS' … [-- FLAGS FOR EVERY RUN]
#   RUNS=2 scripts/alternation-study.sh windows short='--duration 200ms --warmup 100ms' default= \
#       -- --scenarios health,bookById --no-equal-load --rounds 6 --max-rounds 6
# Kept as summary/results/<time>-STUDY-NAME-RUN.json. BIN_DIR=… uses binaries already built
# (else a release build). Quiet machine only: the runs compare each other.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

[ $# -ge 3 ] || { echo "usage: ${0##*/} STUDY NAME='FLAGS' NAME='FLAGS' … [-- FLAGS]" >&2; exit 2; }
study=$1
shift
designs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
        *=*) designs+=("$1") ;;
        *) echo "${0##*/}: a design is NAME='FLAGS', not '$1'" >&2; exit 2 ;;
    esac
    shift
done
[ "${1:-}" = -- ] && shift
RUNS=${RUNS:-2}
stamp=$(date -u +%Y-%m-%dT%H-%M-%SZ)

release_binaries

files=()
for run in $(seq 1 "$RUNS"); do
    for design in "${designs[@]}"; do
        name=${design%%=*}
        read -ra flags <<< "${design#*=}"
        output=summary/results/$stamp-$study-$name-$run.json
        say "run $run, $name (${flags[*]:-the defaults}): $output"
        start=$SECONDS
        "$BIN_DIR/loadgen" suite --bin-dir "$BIN_DIR" "${flags[@]}" "$@" --output "$output" \
            --report "/tmp/$study-$name-$run.html" || [ $? -eq 5 ]
        say "run $run, $name: $((SECONDS - start)) s"
        files+=("$output")
    done
done
say "kept: ${files[*]}"
scripts/noise-study.py "${files[@]}"
