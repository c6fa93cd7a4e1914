#!/usr/bin/env bash
# The test command (see README): makes sure PostgreSQL's server binaries are there — on a
# fresh Debian machine, as root, it installs them with apt — builds the workspace's
# binaries (the suite's tests start real stacks), then runs every test. Tests start their
# own throwaway clusters; nothing here starts a server. docker-compose.yml is validated with
# Compose's `config` when Compose is there or can be installed (no engine needed).
# Extra arguments go to `cargo test` (e.g. `scripts/test.sh -p bookstore-domain`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

require_cargo
[ -n "${DATABASE_URL:-}" ] || ensure_pg_binaries
check_compose_file
cargo build --workspace --bins --locked
exec cargo test --workspace --locked "$@"
