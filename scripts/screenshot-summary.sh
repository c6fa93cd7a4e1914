#!/usr/bin/env bash
# Renders an HTML page of this project to PNG with headless Chromium (Debian's package;
# installed with apt when missing and run as root), to look at it as a person would — or,
# with --fits, checks that it reads at a width without scrolling the whole page sideways.
#   scripts/screenshot-summary.sh [page.html] [out.png] [width] [height]
#   scripts/screenshot-summary.sh --fits WIDTH page.html   # exit 1 if the page is wider
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

fits=
if [ "${1:-}" = --fits ]; then
    fits=${2:?--fits needs a width in px}
    shift 2
fi
page=${1:-summary/five-stack-summary.html}
out=${2:-summary/five-stack-summary.png}
width=${3:-1400}
height=${4:-9000}
[ -f "$page" ] || die "$page not found: run scripts/bench.sh (or loadgen report) first"

ensure_tool chromium chromium

profile=$(mktemp -d)
copy=
trap 'rm -rf "$profile" ${copy:+"$copy"}' EXIT
# The flags keep Chromium from reaching for the network (these pages need none) and from
# needing a GPU or a sandbox (root in CI).
browse() {
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars "$@" 2>/dev/null
}

if [ -n "$fits" ]; then
    # The pages carry no script; a copy gets one line that writes the document's laid-out
    # width into the DOM Chromium dumps.
    copy=$(mktemp --suffix=.html)
    sed 's|</body>|<script>document.body.setAttribute("data-scroll-width", document.documentElement.scrollWidth)</script></body>|' \
        "$page" > "$copy"
    laid_out=$(browse --window-size="$fits,900" --dump-dom "file://$copy" \
        | grep -o 'data-scroll-width="[0-9]*"' | grep -o '[0-9]*' || true)
    [ -n "$laid_out" ] || die "Chromium did not lay out $page"
    if [ "$laid_out" -gt "$fits" ]; then
        echo "$page: $laid_out px wide at a $fits px window: something runs off the right edge" >&2
        exit 1
    fi
    echo "$page: fits $fits px ($laid_out px laid out)"
    exit 0
fi

browse --window-size="$width,$height" --screenshot="$(realpath -m "$out")" "file://$(realpath "$page")"
echo "$out"
