#!/usr/bin/env bash
# Calibrates the load generator against wrk on this machine: both drive the same minimal
# responder (target/release/responder: one epoll loop and SO_REUSEPORT listener per core),
# alternately, at each concurrency, and each pair prints loadgen ÷ wrk of the requests per
# second and of the CPU seconds per request (each process's own user + system time, from
# the kernel's accounting of the child: /usr/bin/time). The last lines are the medians over
# the pairs. Run it on a quiet machine: a background build halves every figure.
#
#   scripts/calibrate-client.sh                 # 5 pairs of 5 s at c128 and c256
#   ROUNDS=7 DURATION=10 CONCURRENCY="128" scripts/calibrate-client.sh
#   LOADGEN_WORKERS=1 scripts/calibrate-client.sh   # try another client thread count
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5}
CONCURRENCY=${CONCURRENCY:-"128 256"}
THREADS=${THREADS:-$(nproc)}
LOADGEN_WORKERS=${LOADGEN_WORKERS:-}

ensure_tool wrk wrk
ensure_tool /usr/bin/time time

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
echo "responder on $addr ($THREADS threads); ${DURATION}s per run, $ROUNDS alternating pairs, wrk -t$THREADS"

workers_flag=()
[ -n "$LOADGEN_WORKERS" ] && workers_flag=(--workers "$LOADGEN_WORKERS")
# CPU seconds (user + system) of the command, from /usr/bin/time's last line.
cpu_of() { tail -n 1 "$1" | awk '{print $1 + $2}'; }
printf '%-5s %-5s %11s %11s %7s %13s %13s %7s\n' conc pair "wrk req/s" "loadgen" ratio "wrk µs CPU/r" "loadgen" ratio
for c in $CONCURRENCY; do
    : > "$workdir/ratios-$c"
    for round in $(seq "$ROUNDS"); do
        /usr/bin/time -f "%U %S" -o "$workdir/wrk.time" \
            wrk -t"$THREADS" -c"$c" -d"${DURATION}s" "$url" > "$workdir/wrk.out"
        wrk_requests=$(awk '/requests in/ {print $1}' "$workdir/wrk.out")
        wrk_rps=$(awk '/Requests\/sec/ {print $2}' "$workdir/wrk.out")
        wrk_us=$(python3 -c "print($(cpu_of "$workdir/wrk.time") / $wrk_requests * 1e6)")
        /usr/bin/time -f "%U %S" -o "$workdir/loadgen.time" \
            target/release/loadgen http --url "$url" -c "$c" --duration "${DURATION}s" --warmup 0s \
            "${workers_flag[@]}" --json "$workdir/loadgen.json" > /dev/null
        read -r lg_requests lg_rps < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["cell"]; n=lambda c: c["ok"] + c["rejected"] + c["errors"]; print(n(d["counts"]) + n(d["warmup_counts"]) + n(d["drained_counts"]), d["throughput_rps"])' "$workdir/loadgen.json")
        lg_us=$(python3 -c "print($(cpu_of "$workdir/loadgen.time") / $lg_requests * 1e6)")
        read -r rps_ratio cpu_ratio < <(python3 -c "print(f'{$lg_rps / $wrk_rps:.3f} {$lg_us / $wrk_us:.3f}')")
        echo "$rps_ratio $cpu_ratio" >> "$workdir/ratios-$c"
        printf '%-5s %-5s %11.0f %11.0f %7s %13.2f %13.2f %7s\n' "$c" "$round" "$wrk_rps" "$lg_rps" "$rps_ratio" "$wrk_us" "$lg_us" "$cpu_ratio"
    done
done
for c in $CONCURRENCY; do
    python3 - "$workdir/ratios-$c" "$c" <<'EOF'
import statistics, sys
rows = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
rps = statistics.median(r[0] for r in rows)
cpu = statistics.median(r[1] for r in rows)
print(f"c={sys.argv[2]}: loadgen ÷ wrk, median of {len(rows)} pairs: {rps:.3f}× the requests per second, {cpu:.3f}× the CPU per request")
EOF
done
