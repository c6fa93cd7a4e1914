#!/usr/bin/env bash
# A study of `loadgen study --list` (the factorial study, capacity at an objective, idle
# connections, the deployment study, the schedule and sequential designs, or designs of your
# own with `alternation --design NAME='FLAGS'`): makes sure PostgreSQL's binaries are there,
# builds the release binaries a run starts (and the composed stacks' when the study measures
# them), then runs it. Its results go to summary/results/, its page to summary/.
#
#   scripts/study.sh factorial
#   scripts/study.sh capacity -- --stacks axum-serde-sqlx,actix-serde-diesel
#   scripts/study.sh alternation --design short= --design long='--fixed-load-duration 2s' -- --scenarios bookById
#
# BIN_DIR=… uses binaries built elsewhere instead.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

[ $# -ge 1 ] || { echo "usage: ${0##*/} NAME [loadgen study flags] [-- loadgen suite flags] (the studies: loadgen study --list)" >&2; exit 2; }
built_here=${BIN_DIR:-}
release_binaries
if [ -z "$built_here" ]; then
    # shellcheck disable=SC2046 # one -p argument per word
    packages=$("$BIN_DIR/loadgen" study --packages "$@")
    [ -z "$packages" ] || cargo build --release --locked $packages
fi
exec "$BIN_DIR/loadgen" study --bin-dir "$BIN_DIR" "$@"
