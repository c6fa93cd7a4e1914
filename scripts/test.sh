#!/usr/bin/env bash
# The test command (see README): makes sure PostgreSQL's server binaries are there — on a
# fresh Debian machine, as root, it installs them with apt; without them but with Docker,
# the tests' databases run in containers — builds the workspace's
# binaries (the suite's tests start real stacks), then runs every test. Tests start their
# own throwaway clusters; nothing here starts a server. docker-compose.yml is validated with
# Compose's `config` when Compose is there or can be installed (no engine needed). MariaDB's
# server binary and client library are installed the same way, for dbbench's tests, and
# Chromium, for the check that the pages fit a 1,280 px screen.
# Extra arguments go to `cargo test` (e.g. `scripts/test.sh -p bookstore-domain`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

require_cargo
features=() skip=()
if [ -z "${DATABASE_URL:-}" ] && ! have_pg_binaries && [ "$(id -u)" != 0 ] && docker_available; then
    # Docker but no PostgreSQL binaries, and no right to install them: the tests' databases
    # come from postgres:17 containers (bookstore-fixture's testcontainers provider). The
    # tests of the binaries' throwaway cluster itself, and those that stop its server or
    # start one for a URL of their own, need the binaries and are left out — said here.
    features=(--features bookstore-fixture/testcontainers)
    skip=(a_cluster_runs test_cluster_is_gone bookstore_db_up killing_the_owner database_outage a_database_password
          no_row_value_ever_appears_in_the_sql_text the_statement_log_shows_a_value)
    echo "${0##*/}: no PostgreSQL binaries; test databases in Docker containers (testcontainers); skipping the tests that need the binaries: ${skip[*]}" >&2
elif [ -z "${DATABASE_URL:-}" ]; then
    ensure_pg_binaries
fi
check_compose_file
# The pages' width check renders them in headless Chromium (installed here as root).
if ! ensure_tool chromium chromium optional; then
    echo "${0##*/}: no Chromium: the check that the pages read at 1,280 px is skipped (Debian: apt-get install chromium)" >&2
    export BOOKSTORE_NO_BROWSER=1
fi
# dbbench's bulk and batch sections on SQLite (always) and MariaDB (installed here as root,
# else left out with a line saying how to get it): their tests run with them.
features+=(--features "$(dbbench_features)")
cargo build --workspace --bins --locked "${features[@]}"
args=("$@")
if [ ${#skip[@]} -gt 0 ]; then
    case " $* " in *" -- "*) ;; *) args+=(--) ;; esac # after the caller's own harness arguments
    args+=("${skip[@]/#/--skip=}")
fi
exec cargo test --workspace --locked "${features[@]}" "${args[@]}"
