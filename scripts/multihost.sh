#!/usr/bin/env bash
# Several hosts for real, on one machine: PostgreSQL, one stack and two load-generator
# shards, each in a network namespace of its own with its own address, joined by veth pairs
# to a bridge — traffic crosses real (virtual) interfaces and the kernel's bridge, not
# loopback. Read it as the recipe of docs/running.md's "Across machines", step by step; run by
# `loadgen/tests/suite` (multihost) as the test that the sharded client works across hosts.
#
#   scripts/multihost.sh [--bin-dir target/release] [--out DIR]
#
# Writes shard1.json, shard2.json, merged.json and merged.html into --out (default: a new
# directory under /tmp, printed at the end). Root only (namespaces, and PostgreSQL run as an
# unprivileged user); otherwise it says so in one line and exits 0. Leaves nothing behind:
# the namespaces go, and with them every interface it made; the host's own network is never
# touched (the bridge lives in a namespace too).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

bin_dir=target/release out=
while [ $# -gt 0 ]; do
    case $1 in
        --bin-dir) bin_dir=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) die "unknown argument $1 (expected --bin-dir DIR, --out DIR)" ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "${0##*/}: skipped: network namespaces need root" >&2; exit 0; }
for binary in loadgen axum-serde-sqlx bookstore-db; do
    [ -x "$bin_dir/$binary" ] || die "$bin_dir/$binary not found: cargo build --release --bins (or --bin-dir)"
done
bin_dir=$(cd "$bin_dir" && pwd)
ensure_tool ip iproute2
ensure_pg_binaries
pg_bin=${PG_BIN_DIR:-$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")}
out=${out:-$(mktemp -d /tmp/multihost.XXXXXX)}
mkdir -p "$out"

# The hosts: a name and an address on 10.88.0.0/24 each, the bridge in a namespace of its
# own. The names carry this shell's pid, so two runs never meet.
tag=bb$$
net=$tag-net
declare -A address=([db]=10.88.0.2 [app]=10.88.0.3 [client1]=10.88.0.11 [client2]=10.88.0.12)
hosts=(db app client1 client2)
ns() { echo "$tag-$1"; }
on() { local host=$1; shift; ip netns exec "$(ns "$host")" "$@"; }

pgdata=$(mktemp -d /tmp/multihost-pg.XXXXXX)
cleanup() {
    local status=$?
    set +e
    # The clients and the stack first, then PostgreSQL with a fast shutdown (SIGINT: it
    # does not wait for clients), each given up to 5 s before being killed.
    for host in client1 client2 app db; do
        local signal=TERM
        [ "$host" = db ] && signal=INT
        ip netns pids "$(ns "$host")" 2>/dev/null | xargs -r kill -s "$signal" 2>/dev/null
        for _ in $(seq 50); do [ -z "$(ip netns pids "$(ns "$host")" 2>/dev/null)" ] && break; sleep 0.1; done
        ip netns pids "$(ns "$host")" 2>/dev/null | xargs -r kill -9 2>/dev/null
    done
    for host in "${hosts[@]}"; do ip netns delete "$(ns "$host")" 2>/dev/null; done
    ip netns delete "$net" 2>/dev/null
    rm -rf "$pgdata"
    exit $status
}
trap cleanup EXIT

# 1. The network: a bridge, and per host a veth pair, one end on the bridge, the other the
#    host's eth0 with its address.
ip netns add "$net"
ip -n "$net" link add br0 type bridge
ip -n "$net" link set br0 up
for host in "${hosts[@]}"; do
    ip netns add "$(ns "$host")"
    ip -n "$net" link add "$host" type veth peer name eth0 netns "$(ns "$host")"
    ip -n "$net" link set "$host" master br0 up
    on "$host" ip addr add "${address[$host]}/24" dev eth0
    on "$host" ip link set eth0 up
    on "$host" ip link set lo up
done
say "hosts: $(for h in "${hosts[@]}"; do printf '%s=%s ' "$h" "${address[$h]}"; done)"

# 2. The database host: PostgreSQL listening on its own address only, clients of the
#    network allowed, as an unprivileged user (it refuses root).
user=postgres
id -u "$user" >/dev/null 2>&1 || user=nobody
chown "$user" "$pgdata"
runuser -u "$user" -- "$pg_bin/initdb" -D "$pgdata/data" -U postgres --auth=trust \
    --encoding=UTF8 --lc-collate=C --lc-ctype=C.UTF-8 >/dev/null
echo "host all all 10.88.0.0/24 trust" >> "$pgdata/data/pg_hba.conf"
on db runuser -u "$user" -- "$pg_bin/postgres" -D "$pgdata/data" \
    -c "listen_addresses=${address[db]}" -c unix_socket_directories="$pgdata" \
    -c shared_preload_libraries=pg_stat_statements -c max_connections=200 \
    -c fsync=off -c synchronous_commit=off > "$pgdata/postgres.log" 2>&1 &
for _ in $(seq 100); do on app "$pg_bin/pg_isready" -q -h "${address[db]}" && break; sleep 0.1; done
on app "$pg_bin/pg_isready" -q -h "${address[db]}" || { tail "$pgdata/postgres.log" >&2; die "PostgreSQL did not start"; }
database_url=postgres://postgres@${address[db]}:5432/bookstore
on app "$pg_bin/psql" -q -h "${address[db]}" -U postgres -c "CREATE DATABASE bookstore"
on app "$pg_bin/psql" -q -h "${address[db]}" -U postgres -d bookstore -f docker/00-pg-stat-statements.sql
on app "$bin_dir/bookstore-db" init --database-url "$database_url"

# 3. The application host: one stack, listening on the network.
stack_url=http://${address[app]}:8081
on app "$bin_dir/axum-serde-sqlx" --bind "${address[app]}:8081" --database-url "$database_url" \
    --pool-max 8 --workers 1 > "$out/stack.log" 2>&1 &
on client1 bash -c "source scripts/lib.sh; wait_http_ok $stack_url/health/db" || die "the stack does not answer from client1"
say "PostgreSQL on ${address[db]}, axum-serde-sqlx on ${address[app]}:8081, seen from the clients"

# 4. Two client hosts, one start time: each runs its shard of the same suite.
start_at=$(( $(date +%s) + 10 ))
pids=()
for k in 1 2; do
    on "client$k" "$bin_dir/loadgen" suite --targets "axum-serde-sqlx=$stack_url" \
        --database-url "$database_url" --no-ceilings --no-equal-load \
        --shard "$k/2" --start-at "$start_at" \
        --scenarios bookById,checkoutCreate --concurrency 16 --rounds 1 \
        --warmup 200ms --duration 1s --request-timeout 2s \
        --output "$out/shard$k.json" --report "$out/shard$k.html" > "$out/shard$k.log" 2>&1 &
    pids+=($!)
done
status=0
for k in 1 2; do wait "${pids[$((k - 1))]}" || { status=$?; say "shard $k exited $status:"; tail -n 15 "$out/shard$k.log" >&2; }; done
[ "$status" = 0 ] || die "a shard failed"

# 5. On one host, the shards' files merged into one run.
"$bin_dir/loadgen" merge "$out/shard1.json" "$out/shard2.json" -o "$out/merged.json" --report "$out/merged.html"
say "merged into $out/merged.json (page $out/merged.html)"
