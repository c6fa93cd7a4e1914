#!/usr/bin/env bash
# `docker compose up` for real: builds the project's images with its own Dockerfile, brings
# up its own docker-compose.yml unchanged, waits for all six services to turn healthy, checks
# every stack's published port, runs the loadgen service's suite in the compose network
# (`--compose=network --quick`, a few scenarios) and checks that it wrote results and the
# page with its contract checks and audits passing (exit 0). Run by .ci/run.
#
# No registry is reachable here: the base images are local stand-ins built by
# docker/standins/build.sh under the names the files use. Nothing is pulled — no `# syntax=`
# line, builds without --pull, `up --no-build` (Compose v2: `--pull never`) — and the
# engine's containers reach nothing but each other and the host (dockerd runs with
# --iptables=false: no NAT, no host firewall change).
#
# As root it installs what it needs (docker.io, docker-compose, debootstrap) and starts
# dockerd if none runs; it stops what it started and removes what dockerd added to the host
# (its bridge), and checks the firewall rules and links are as before. Images and the
# build cache are kept for the next run. Without root or cgroups, it says so and skips.
#   scripts/compose-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

skip() { say "skipped: $*"; exit 0; }

[ "$(id -u)" = 0 ] || skip "needs root to run a Docker engine (run as root, or run the compose file by hand: docs/running.md, \"With Docker\")"
[ -d /sys/fs/cgroup ] && [ -n "$(ls -A /sys/fs/cgroup 2>/dev/null)" ] || skip "no cgroups mounted at /sys/fs/cgroup: no container engine can run here"
# Installed without letting a package start its own daemon (apt_install_quietly): on a
# systemd host docker.io would start a dockerd with its firewall rules, and this script
# would then use it.
missing=()
for tool in dockerd:docker.io docker-compose:docker-compose debootstrap:debootstrap iptables-save:iptables; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} with apt-get (no service started)"
    apt_install_quietly "${missing[@]}" || die "could not install ${missing[*]}: apt-get install ${missing[*]}"
fi

started=$(date +%s)
work=$(mktemp -d /tmp/compose-test.XXXXXX)
project=bookstore-compose-test
started_dockerd=

# The docker CLI: Compose 1.29 builds through it (BuildKit, for the Dockerfile's cache
# mounts), so it must be one that builds with BuildKit itself — Debian's (20.10) does; a
# newer CLI without its buildx plugin refuses DOCKER_BUILDKIT=1.
mkdir -p "$work/bin"
if docker buildx version >/dev/null 2>&1; then
    ln -s "$(command -v docker)" "$work/bin/docker"
elif [ -x /usr/bin/docker ]; then
    ln -s /usr/bin/docker "$work/bin/docker"
else
    die "no docker CLI that builds with BuildKit (Debian: apt-get install docker.io)"
fi
export PATH=$work/bin:$PATH DOCKER_BUILDKIT=1 COMPOSE_DOCKER_CLI_BUILD=1
if docker compose version >/dev/null 2>&1; then
    compose=(docker compose -p "$project" -f docker-compose.yml)
else
    compose=(docker-compose -p "$project" -f docker-compose.yml)
fi

# What the host's network looks like before: checked again at the end.
iptables-save | grep -v '^#' > "$work/iptables.before" || true
ip -o link show | awk -F': ' '{print $2}' | sort > "$work/links.before"

# Stops the dockerd this script started (20 s, then killed) and removes its bridge, which
# outlives it; nothing else it made does (no iptables rules).
# Every step may find its work done already (a process gone, no bridge): none of them may
# stop the script under `set -e`.
stop_dockerd() {
    [ -n "$started_dockerd" ] || return 0
    kill "$started_dockerd" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$started_dockerd" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$started_dockerd" 2>/dev/null || true
    wait "$started_dockerd" 2>/dev/null || true
    ip link delete docker0 2>/dev/null || true
    started_dockerd=
}

cleanup() {
    local status=$?
    set +e
    if docker info >/dev/null 2>&1; then
        "${compose[@]}" --profile loadgen down -v --remove-orphans >/dev/null 2>&1
    fi
    stop_dockerd
    rm -rf "$work"
    exit $status
}
trap cleanup EXIT

if ! docker info >/dev/null 2>&1; then
    # No NAT and no firewall rules: containers talk to each other and to published ports on
    # the host, not beyond (nothing they do needs more).
    dockerd --iptables=false --ip-forward=false --ip-masq=false > "$work/dockerd.log" 2>&1 &
    started_dockerd=$!
    for _ in $(seq 150); do docker info >/dev/null 2>&1 && break; kill -0 "$started_dockerd" 2>/dev/null || break; sleep 0.2; done
    if ! docker info >/dev/null 2>&1; then
        # Root and cgroups are there (checked above): an engine that does not start is a
        # failure to look at, not a machine to skip.
        tail -n 20 "$work/dockerd.log" >&2
        die "dockerd did not start ($(grep -iE 'error|failed' "$work/dockerd.log" | tail -n 1 | cut -c1-200))"
    fi
    say "dockerd started ($(docker version -f '{{.Server.Version}}'), storage $(docker info -f '{{.Driver}}'), cgroup v$(docker info -f '{{.CgroupVersion}}'))"
fi
say "$("${compose[@]}" version 2>/dev/null | head -n 1)"
# A run cut short before leaves its containers and volumes: start from none.
"${compose[@]}" --profile loadgen down -v --remove-orphans >/dev/null 2>&1 || true

step() { say "$1 ($(( $(date +%s) - started )) s so far)"; }

step "stand-in base images"
DOCKER=docker docker/standins/build.sh

step "building the images (Dockerfile, BuildKit, nothing pulled)"
"${compose[@]}" --profile loadgen build > "$work/build.log" 2>&1 \
    || { tail -n 30 "$work/build.log" >&2; die "the images did not build"; }

step "docker compose up"
if [ "${compose[0]}" = docker ]; then
    "${compose[@]}" up -d --no-build --pull never --wait
else
    # Compose 1.29 has no --wait: the services' health, as the engine reports it.
    "${compose[@]}" up -d --no-build
fi
# The stacks as the file declares them: their build's STACK and their BIND port — those
# `up` starts, not the services of a profile (loadgen, the composed stacks).
default_services() {
    awk '/^  [a-z0-9-]+:$/ { if (stack != "" && !profiled) print stack, port; stack = ""; port = ""; profiled = 0 }
         /^    profiles:/ { profiled = 1 }
         /^        STACK: / { stack = $2 }
         /^ *BIND: "0.0.0.0:[0-9]+"$/ { port = $2; sub(/^"0\.0\.0\.0:/, "", port); sub(/"$/, "", port) }
         END { if (stack != "" && !profiled) print stack, port }' docker-compose.yml
}
mapfile -t stacks < <(default_services | awk '{ print $1 }')
mapfile -t ports < <(default_services | awk '{ print $2 }')
[ ${#stacks[@]} -gt 0 ] && [ ${#stacks[@]} = ${#ports[@]} ] || die "expected a port per stack in docker-compose.yml, read ${stacks[*]} on ${ports[*]}"
services=(postgres "${stacks[@]}")
# One container id per service, then the engine's view of each until all are healthy.
ids=()
for service in "${services[@]}"; do ids+=("$("${compose[@]}" ps -q "$service")"); done
deadline=$(( $(date +%s) + 120 ))
while :; do
    unhealthy=()
    for i in "${!services[@]}"; do
        health=$(docker inspect -f '{{.State.Status}}/{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "${ids[$i]}" 2>/dev/null || echo missing)
        case $health in
            running/healthy) ;;
            exited/* | dead/* | missing)
                "${compose[@]}" logs --tail 10 "${services[$i]}" >&2
                die "${services[$i]}: $health" ;;
            *) unhealthy+=("${services[$i]}=$health") ;;
        esac
    done
    [ ${#unhealthy[@]} = 0 ] && break
    if [ "$(date +%s)" -ge "$deadline" ]; then
        "${compose[@]}" logs --tail 20 >&2
        die "not healthy after 120 s: ${unhealthy[*]}"
    fi
    sleep 1
done
step "all ${#services[@]} services healthy"

# From the host, through the ports the file publishes on 127.0.0.1.
for port in "${ports[@]}"; do
    wait_http_ok "http://127.0.0.1:$port/health/db" || die "127.0.0.1:$port/health/db does not answer 200"
done
step "every stack answers on its published port"

# The loadgen service, as docs/running.md ("With Docker") runs it, with the suite shortened: the stacks pass the
# contract check, checkouts are audited, results and page are written — as an unprivileged
# user into a directory of this run.
mkdir -p "$work/summary"
chown 65534:65534 "$work/summary"
step "loadgen --compose=network --quick in the compose network"
SUMMARY_DIR=$work/summary LOADGEN_UID=65534 LOADGEN_GID=65534 \
    "${compose[@]}" --profile loadgen run --rm --no-deps loadgen \
    suite --compose=network --bin-dir /usr/local/bin --quick \
    --scenarios bookById,bookList,checkoutCreate --concurrency 64 2>&1 | tail -n 25 >&2 \
    || die "the loadgen service's suite failed (exit ${PIPESTATUS[0]})"
# The suite writes .json.zst by default (summary/README.md); a plain .json counts too.
results=$(find "$work/summary/results" \( -name '*.json.zst' -o -name '*.json' \) 2>/dev/null | head -n 1 || true)
[ -n "$results" ] || die "no results file in summary/results"
[ -s "$work/summary/five-stack-summary.html" ] || die "no summary page"
[ "$(stat -c %u "$results")" = 65534 ] || die "the results file is owned by uid $(stat -c %u "$results"), not the user given"
step "results and page written ($(du -h "$results" | cut -f1) of results)"

"${compose[@]}" --profile loadgen down -v --remove-orphans >/dev/null 2>&1
if [ -n "$started_dockerd" ]; then
    stop_dockerd
    iptables-save | grep -v '^#' > "$work/iptables.after" || true
    ip -o link show | awk -F': ' '{print $2}' | sort > "$work/links.after"
    diff "$work/iptables.before" "$work/iptables.after" >&2 || die "the host's firewall rules changed"
    diff "$work/links.before" "$work/links.after" >&2 || die "the host's network links changed"
    step "dockerd stopped; the host's links and firewall rules are as before"
fi
say "passed in $(( $(date +%s) - started )) s"
