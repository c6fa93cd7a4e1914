#!/usr/bin/env bash
# The test command (see README): makes sure PostgreSQL's server binaries are there — on a
# fresh Debian machine, as root, it installs them with apt — then runs every test of the
# workspace. Tests start their own throwaway clusters; nothing here starts a server.
# Extra arguments go to `cargo test` (e.g. `scripts/test.sh -p bookstore-domain`).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "scripts/test.sh: $*" >&2; exit 1; }

command -v cargo >/dev/null || die "cargo not found: install a Rust toolchain (https://rustup.rs)"

have_pg_binaries() {
    local dir
    for dir in ${PG_BIN_DIR:-} $(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/x)") /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ] && return 0
    done
    return 1
}

install_pg_binaries() {
    echo "scripts/test.sh: installing PostgreSQL server binaries with apt-get (no server is started)" >&2
    # Debian's package would start a system-wide cluster; the tests need only the binaries.
    local policy=/usr/sbin/policy-rc.d added_policy=
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && added_policy=1
    fi
    local status=0
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null; } || status=$?
    [ -n "$added_policy" ] && rm -f "$policy"
    return $status
}

if [ -z "${DATABASE_URL:-}" ] && ! have_pg_binaries; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        install_pg_binaries || die "installing PostgreSQL failed: run 'apt-get install postgresql' yourself, or set DATABASE_URL to an existing server"
        have_pg_binaries || die "PostgreSQL was installed but initdb/postgres are still not found: set PG_BIN_DIR to their directory"
    else
        die "PostgreSQL server binaries (initdb, postgres) not found: install them (Debian: sudo apt-get install postgresql), set PG_BIN_DIR to their directory, or set DATABASE_URL to an existing server"
    fi
fi

exec cargo test --workspace --locked "$@"
