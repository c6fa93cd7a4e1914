#!/usr/bin/env bash
# Renders an HTML page of this project to PNG with headless Chromium (Debian's package;
# installed with apt when missing and run as root), to look at it as a person would — or,
# with --fits, checks that it reads at a width with nothing clipped: no element whose content
# is wider than its box (a table scrolling inside its box is a clipped column too).
#   scripts/screenshot-summary.sh [page.html] [out.png] [width] [height]
#   scripts/screenshot-summary.sh --fits WIDTH page.html   # exit 1, naming them, if any clips
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
    # The pages carry no script; a copy gets one that lists, in a <pre> Chromium dumps with
    # the DOM, every element laid out narrower than its content (scrollWidth > clientWidth:
    # text cut off, or a table scrolling sideways inside its box).
    copy=$(mktemp --suffix=.html)
    check='<pre id="clip-check">'
    check+='<script>const out=document.getElementById("clip-check");let n=0;'
    check+='for(const e of document.body.querySelectorAll("*")){if(e.id==="clip-check"||e.tagName==="SCRIPT"||(e instanceof SVGElement&&e.tagName!=="svg"))continue;'
    check+='if(e.clientWidth>0&&e.scrollWidth>e.clientWidth+1){n++;if(n<=20){'
    check+='const name=e.tagName.toLowerCase()+(typeof e.className==="string"&&e.className?"."+e.className.trim().split(/ +/).join("."):"");'
    check+='out.append("clipped: "+name+" content "+e.scrollWidth+" px in a "+e.clientWidth+" px box: "+(e.textContent||"").replace(/\s+/g," ").trim().slice(0,80)+"\n")}}}'
    check+='out.append("checked: "+document.body.querySelectorAll("*").length+" elements, "+n+" clipped, page "+document.documentElement.scrollWidth+" px\n")'
    check+='</script></pre>'
    # After the page's end: the parser still puts it in the body, and the page is left as is.
    { cat "$page"; printf '%s\n' "$check"; } > "$copy"
    report=$(browse --window-size="$fits,900" --dump-dom "file://$copy" \
        | sed -n '/<pre id="clip-check">/,/<\/pre>/p' | sed 's|^<pre id="clip-check"><script>.*</script>||' | grep -E '^(clipped|checked)' || true)
    summary=$(grep '^checked:' <<< "$report" || true)
    [ -n "$summary" ] || die "Chromium did not lay out $page"
    if grep -q '^clipped:' <<< "$report"; then
        echo "$page at a $fits px window:" >&2
        grep '^clipped:' <<< "$report" >&2
        echo "$summary" >&2
        exit 1
    fi
    echo "$page: fits $fits px ($summary)"
    exit 0
fi

browse --window-size="$width,$height" --screenshot="$(realpath -m "$out")" "file://$(realpath "$page")"
echo "$out"
