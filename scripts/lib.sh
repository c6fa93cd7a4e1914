# Shared by scripts/test.sh and scripts/bench.sh (sourced, not run): checks for the tools
# they need and installs PostgreSQL's server binaries with apt when missing and allowed.

die() { echo "${0##*/}: $*" >&2; exit 1; }
say() { echo "${0##*/}: $*" >&2; }

# Makes sure `command` is on PATH: as root on Debian it installs `package` with apt-get,
# otherwise it says in one line what to install. With a third argument `optional` it
# returns 1 instead of stopping the script.
ensure_tool() {
    local command=$1 package=$2 optional=${3:-}
    command -v "$command" >/dev/null && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "${0##*/}: installing $package with apt-get" >&2
        { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null 2>&1 \
            || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null 2>&1; }; } \
            && command -v "$command" >/dev/null && return 0
        [ -n "$optional" ] && return 1
        die "could not install $package: apt-get install $package"
    fi
    [ -n "$optional" ] && return 1
    die "$command not found: install it (Debian: sudo apt-get install $package)"
}

require_cargo() {
    command -v cargo >/dev/null || die "cargo not found: install a Rust toolchain (https://rustup.rs)"
    # The workspace's rust-version, said in one line rather than as a long cargo error.
    local needed found
    needed=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
    found=$(rustc --version 2>/dev/null | awk '{print $2}')
    [ -n "$needed" ] && [ -n "$found" ] || return 0
    [ "$(printf '%s\n%s\n' "$needed" "${found%%-*}" | sort -V | head -n 1)" = "$needed" ] \
        || die "rustc $found is older than the $needed this workspace needs: rustup update stable (https://rustup.rs)"
}

# The packages whose binaries a suite run starts: every stack (crates/servers/*), the HTTP
# ceiling (responder), the database latency relay (db-relay) and loadgen itself, as `-p`
# arguments. dbbench and the fixture's bookstore-db are not among them: a run needs
# neither, and their release links were part of every main job's first build.
run_packages() {
    local dir
    for dir in crates/servers/*/; do printf -- '-p %s ' "$(basename "$dir")"; done
    printf -- '-p bookstore-responder -p bookstore-relay -p loadgen'
}

# For the study scripts: PostgreSQL's binaries, and the release binaries a run starts in
# BIN_DIR — those given (BIN_DIR=… set by the caller), else built into target/release, with
# any further packages named as arguments (`-p axum-any …`: the composed stacks).
release_binaries() {
    ensure_pg_binaries
    if [ -z "${BIN_DIR:-}" ]; then
        require_cargo
        # shellcheck disable=SC2046 # one -p argument per word
        cargo build --release --locked $(run_packages) "$@"
        BIN_DIR=target/release
    fi
}

have_pg_binaries() {
    local dir
    for dir in ${PG_BIN_DIR:-} $(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/x)") /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ] && return 0
    done
    return 1
}

# Installs Debian packages with apt-get without letting them start a system-wide server
# (only the binaries are needed: the benchmarks and tests start throwaway ones).
apt_install_quietly() {
    local policy=/usr/sbin/policy-rc.d added_policy=
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && added_policy=1
    fi
    local status=0
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null; } || status=$?
    [ -n "$added_policy" ] && rm -f "$policy"
    return $status
}

install_pg_binaries() {
    echo "${0##*/}: installing PostgreSQL server binaries with apt-get (no server is started)" >&2
    apt_install_quietly postgresql
}

# MariaDB for dbbench's bulk and batch sections: the server binary (mariadbd: a throwaway
# instance is started per run) and the client library diesel's `mysql` backend links
# (found with pkg-config).
have_mariadb() {
    { command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ]; } \
        && command -v pkg-config >/dev/null && pkg-config --exists libmariadb
}

# Succeeds when MariaDB is there or could be installed (as root, with apt); otherwise says
# in one line what is missing and fails, for the caller to build without it.
ensure_mariadb_optional() {
    have_mariadb && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "${0##*/}: installing MariaDB's server binaries and client library with apt-get (no server is started)" >&2
        apt_install_quietly mariadb-server-core libmariadb-dev pkg-config && have_mariadb && return 0
    fi
    echo "${0##*/}: MariaDB left out (server binaries or libmariadb not found; Debian: sudo apt-get install mariadb-server-core libmariadb-dev pkg-config)" >&2
    return 1
}

# dbbench's cargo features: SQLite always (built from source), MariaDB when installed. Only
# the list goes to stdout (callers capture it); what installing says goes to stderr.
dbbench_features() {
    local features=bookstore-dbbench/sqlite
    ensure_mariadb_optional >&2 && features+=,bookstore-dbbench/mariadb
    echo "$features"
}

# Whether a Docker engine looks reachable (as bookstore-fixture's container provider sees it).
docker_available() {
    [ -n "${DOCKER_HOST:-}" ] || [ -S /var/run/docker.sock ]
}

# Makes sure a throwaway cluster can be started, or says in one line what to do.
ensure_pg_binaries() {
    have_pg_binaries && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        install_pg_binaries || die "installing PostgreSQL failed: run 'apt-get install postgresql' yourself, or use an existing server"
        have_pg_binaries || die "PostgreSQL was installed but initdb/postgres are still not found: set PG_BIN_DIR to their directory"
    else
        die "PostgreSQL server binaries (initdb, postgres) not found: install them (Debian: sudo apt-get install postgresql), set PG_BIN_DIR to their directory, or use an existing server"
    fi
}

# Whether a benchmark's arguments ask for its throwaway PostgreSQL in a container.
wants_containers() {
    case " $* " in
        *" --db-provider testcontainers "* | *" --db-provider=testcontainers "*) return 0 ;;
    esac
    return 1
}

# For a script whose arguments go to a benchmark: makes sure a throwaway cluster can be
# started, unless the arguments name an existing server (--database-url, or the compose
# file's with --compose) or ask for a container (--db-provider testcontainers).
ensure_pg_binaries_unless_database_url() {
    wants_containers "$@" && return 0
    case " $* " in
        *" --database-url"* | *" --compose "* | *" --compose="*) ;;   # an existing server: nothing to install
        *) ensure_pg_binaries ;;
    esac
}

# Validates docker-compose.yml with Compose itself (no engine needed for `config`): the
# `docker compose` plugin or Debian's docker-compose, installed with apt when running as
# root. Without either it says so in one line; crates/app/tests/compose.rs checks the file
# in any case.
check_compose_file() {
    local compose=()
    if docker compose version >/dev/null 2>&1; then
        compose=(docker compose)
    elif ensure_tool docker-compose docker-compose optional; then
        compose=(docker-compose)
    fi
    if [ ${#compose[@]} = 0 ]; then
        echo "${0##*/}: docker-compose.yml not validated by Compose (install docker-compose or the docker compose plugin); its test still runs" >&2
        return 0
    fi
    "${compose[@]}" -f docker-compose.yml config -q || die "docker-compose.yml is invalid (${compose[*]} config)"
    echo "${0##*/}: docker-compose.yml valid (${compose[*]} config)" >&2
}

# Starts a throwaway seeded cluster (`bookstore-db up`, built in target/release) in the
# background, its output in $1/db.env; sets db_pid (the caller's cleanup kills it, which
# stops and deletes the cluster) and exports DATABASE_URL.
start_throwaway_db() {
    target/release/bookstore-db up > "$1/db.env" &
    db_pid=$!
    for _ in $(seq 300); do grep -q POSTGRES_DIR "$1/db.env" 2>/dev/null && break; sleep 0.1; done
    DATABASE_URL=$(sed -n 's/^DATABASE_URL=//p' "$1/db.env")
    [ -n "$DATABASE_URL" ] || die "bookstore-db up did not start a database"
    export DATABASE_URL
}

# A free loopback port.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits up to 10 s for GET $1 to answer 2xx.
wait_http_ok() {
    for _ in $(seq 100); do
        python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=1)" "$1" \
            2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
