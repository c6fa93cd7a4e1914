#!/usr/bin/env bash
# Calibrates the load generator against wrk on this machine: both drive the same minimal
# responder (target/release/responder: one current-thread runtime per core, SO_REUSEPORT),
# alternately, at each concurrency, and the ratio loadgen/wrk is printed per round.
# Run it on a quiet machine: a background build halves every figure.
#
#   scripts/calibrate-client.sh                 # 3 rounds of 5 s at c128 and c256
#   ROUNDS=5 DURATION=10 CONCURRENCY="128" scripts/calibrate-client.sh
#   LOADGEN_WORKERS=1 scripts/calibrate-client.sh   # try another client thread count
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
CONCURRENCY=${CONCURRENCY:-"128 256"}
THREADS=${THREADS:-$(nproc)}
LOADGEN_WORKERS=${LOADGEN_WORKERS:-}

ensure_tool wrk wrk

cargo build --release -q -p loadgen -p bookstore-responder
workdir=$(mktemp -d)
responder_pid=
cleanup() { [ -n "$responder_pid" ] && kill "$responder_pid" 2>/dev/null; rm -rf "$workdir"; }
trap cleanup EXIT

target/release/responder --bind 127.0.0.1:0 --threads "$THREADS" > "$workdir/responder.out" &
responder_pid=$!
for _ in $(seq 100); do grep -q LISTENING "$workdir/responder.out" 2>/dev/null && break; sleep 0.05; done
addr=$(awk '/LISTENING/ {print $2}' "$workdir/responder.out")
[ -n "$addr" ] || die "the responder did not start"
url="http://$addr/health"
echo "responder on $addr ($THREADS threads); ${DURATION}s per run, $ROUNDS rounds, wrk -t$THREADS"

workers_flag=()
[ -n "$LOADGEN_WORKERS" ] && workers_flag=(--workers "$LOADGEN_WORKERS")
printf '%-6s %-6s %12s %12s %7s %14s\n' conc round "wrk req/s" "loadgen req/s" ratio "loadgen CPU s"
for c in $CONCURRENCY; do
    for round in $(seq "$ROUNDS"); do
        wrk_rps=$(wrk -t"$THREADS" -c"$c" -d"${DURATION}s" "$url" | awk '/Requests\/sec/ {print $2}')
        target/release/loadgen http --url "$url" -c "$c" --duration "${DURATION}s" --warmup 0s \
            "${workers_flag[@]}" --json "$workdir/loadgen.json" > /dev/null
        read -r lg_rps lg_cpu < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["throughput_rps"], d["client_cpu_seconds"])' "$workdir/loadgen.json")
        ratio=$(python3 -c "print(f'{$lg_rps / $wrk_rps:.2f}')")
        printf '%-6s %-6s %12.0f %12.0f %7s %14.2f\n' "$c" "$round" "$wrk_rps" "$lg_rps" "$ratio" "$lg_cpu"
    done
done
