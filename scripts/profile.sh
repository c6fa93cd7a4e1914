#!/usr/bin/env bash
# Profiles the stacks (see docs/findings.md, "Where the CPU goes"): per stack and GET scenario, the CPU
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
ensure_tool python3 python3
ensure_tool perf linux-perf
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
    die "system-wide perf needs root or kernel.perf_event_paranoid <= 0 (sudo sysctl kernel.perf_event_paranoid=0)"
fi
ensure_pg_binaries
# shellcheck disable=SC2046 # one -p argument per word
cargo build --release --locked $(run_packages)
exec python3 scripts/profile.py "$@"
