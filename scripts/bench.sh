#!/usr/bin/env bash
# The main job (see README): builds the release binaries a run starts and runs the whole suite — five
# stacks × twelve scenarios × concurrency 128 and 256, plus the HTTP and database ceilings —
# on a throwaway PostgreSQL, then writes summary/results/<time>.json.zst and
# summary/five-stack-summary.html. Arguments go to `loadgen suite` (see its --help), e.g.
#   scripts/bench.sh --quick                      # short windows, a few minutes
#   scripts/bench.sh --stacks axum-serde-sqlx,hyper-sonic-sqlx --repeat 3
# Run it on a quiet machine: another build or test run at the same time takes the stacks' CPU
# and lowers every figure.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

require_cargo
ensure_pg_binaries_unless_database_url "$@"
features=()
wants_containers "$@" && features=(--features loadgen/testcontainers)
# shellcheck disable=SC2046 # one -p argument per word
cargo build --release --locked $(run_packages) "${features[@]}"
exec target/release/loadgen suite "$@"
