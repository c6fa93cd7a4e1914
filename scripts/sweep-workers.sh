#!/usr/bin/env bash
# Runtime worker threads by measurement (docs/findings.md, "Where the CPU goes"): each stack started with
# --workers W for W in WORKERS, `loadgen http` on each path, over ROUNDS rounds whose worker
# order rotates (this machine drifts by tens of percent within minutes: a fixed order would
# hand that drift to the last setting). Prints the median req/s per stack, path and W.
#
#   scripts/sweep-workers.sh                        # 3 rounds, workers 2 3 4, health and bookById
#   ROUNDS=5 WORKERS="1 2 4" STACKS=axum-serde-sqlx scripts/sweep-workers.sh
# Quiet machine only.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ROUNDS=${ROUNDS:-3}
WORKERS=${WORKERS:-"2 3 4"}
PATHS=${PATHS:-"health api/books/4242"}
DURATION=${DURATION:-2s}

require_cargo
ensure_tool python3 python3
ensure_pg_binaries
# shellcheck disable=SC2046 # one -p argument per word
cargo build --release --locked $(run_packages)
# Every stack of the registry unless STACKS names some.
STACKS=${STACKS:-$(target/release/loadgen stacks | tr '\n' ' ')}

workdir=$(mktemp -d)
db_pid= server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    [ -n "$db_pid" ] && kill "$db_pid" 2>/dev/null && wait "$db_pid" 2>/dev/null
    rm -rf "$workdir"
}
trap cleanup EXIT

start_throwaway_db "$workdir"
port=$(free_port)

read -r -a workers <<< "$WORKERS"
for round in $(seq "$ROUNDS"); do
    # Rotate the order: round 1 runs 2 3 4, round 2 runs 3 4 2, ...
    shift_by=$(( (round - 1) % ${#workers[@]} ))
    order=("${workers[@]:shift_by}" "${workers[@]:0:shift_by}")
    for w in "${order[@]}"; do
        for stack in $STACKS; do
            target/release/"$stack" --bind "127.0.0.1:$port" --workers "$w" 2>>"$workdir/server.log" &
            server_pid=$!
            wait_http_ok "http://127.0.0.1:$port/health/db" || die "the stack did not start: $(tail -3 "$workdir/server.log")"
            for path in $PATHS; do
                target/release/loadgen http "http://127.0.0.1:$port/$path" -c 128 \
                    --duration "$DURATION" --warmup 0.5s --json "$workdir/r.json" > /dev/null
                rps=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["throughput_rps"]))' "$workdir/r.json")
                echo "$round $w $stack /$path $rps" | tee -a "$workdir/all.txt" >&2
            done
            kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
        done
    done
done

python3 - "$workdir/all.txt" "$WORKERS" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    _, w, stack, path, rps = line.split()
    runs[(stack, path, int(w))].append(int(rps))
workers = [int(w) for w in sys.argv[2].split()]
print("| stack | path | " + " | ".join(f"{w} workers" for w in workers) + " |")
print("|---|---|" + "---:|" * len(workers))
for stack, path in dict.fromkeys((s, p) for s, p, _ in runs):
    base = statistics.median(runs[(stack, path, workers[0])])
    cells = []
    for w in workers:
        m = statistics.median(runs[(stack, path, w)])
        cells.append(f"{m:.0f}" if w == workers[0] else f"{m:.0f} ({m / base - 1:+.0%})")
    print(f"| {stack} | `{path}` | " + " | ".join(cells) + " |")
PY
