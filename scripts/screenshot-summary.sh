#!/usr/bin/env bash
# Renders an HTML summary to PNG with headless Chromium (Debian's package; installed with
# apt when missing and run as root), to look at the page as a person would.
#   scripts/screenshot-summary.sh [page.html] [out.png] [width] [height]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

page=${1:-summary/five-stack-summary.html}
out=${2:-summary/five-stack-summary.png}
width=${3:-1400}
height=${4:-9000}
[ -f "$page" ] || die "$page not found: run scripts/bench.sh (or loadgen report) first"

ensure_tool chromium chromium

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# The flags keep Chromium from reaching for the network (this page needs none) and from
# needing a GPU or a sandbox (root in CI).
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars --window-size="$width,$height" \
    --screenshot="$(realpath -m "$out")" "file://$(realpath "$page")" 2>/dev/null
echo "$out"
