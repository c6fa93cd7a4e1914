#!/usr/bin/env bash
# Profiles the stacks (see docs/performance.md): per stack and GET scenario, the CPU
# microseconds of one request in the server, PostgreSQL and the client, and the server's
# split by where the time goes (framework, JSON, pool, driver, blocking hand-off, kernel...),
# from `perf record -a` over a fixed window of load on a throwaway seeded database.
#   scripts/profile.sh                                   # 5 stacks × health,smallJson,bookById,bookList
#   scripts/profile.sh --stacks axum-serde-sqlx --scenarios bookById --seconds 8
# Needs root (or perf_event_paranoid ≤ 0) for system-wide sampling. Quiet machine only.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

require_cargo
command -v python3 >/dev/null || die "python3 not found: install it (Debian: sudo apt-get install python3)"
if ! command -v perf >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "profile.sh: installing perf with apt-get (linux-perf)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null \
            || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null; } \
            || die "could not install perf: apt-get install linux-perf"
    else
        die "perf not found: install it (Debian: sudo apt-get install linux-perf)"
    fi
fi
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
    die "system-wide perf needs root or kernel.perf_event_paranoid <= 0 (sudo sysctl kernel.perf_event_paranoid=0)"
fi
ensure_pg_binaries
cargo build --release --bins --locked
exec python3 scripts/profile.py "$@"
