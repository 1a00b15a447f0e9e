#!/usr/bin/env bash
# A screenshot of a `trace` plugin file in the chrome://tracing viewer (the
# README's docs/images/trace.png): catapult's trace2html turns the JSON into a
# standalone viewer page, headless Chromium renders it (scripts/dev/screenshot.mjs
# drives it over the DevTools protocol, since the viewer imports after load).
#
#   scripts/dev/trace_screenshot.sh TRACE.json OUT.png [CATAPULT_DIR]
#
# CATAPULT_DIR is a checkout of https://github.com/catapult-project/catapult
# (default ~/.cache/rocjitsu/catapult); needs python3, chromium and node >= 20.
set -euo pipefail
trace=$1 out=$2
catapult=${3:-${ROCJITSU_CACHE:-$HOME/.cache/rocjitsu}/catapult}
[ -x "$catapult/tracing/bin/trace2html" ] || { echo "no catapult checkout at $catapult (git clone https://github.com/catapult-project/catapult)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$catapult/tracing/bin/trace2html" "$trace" --output="$tmp/trace.html" >/dev/null
node --experimental-websocket "$(dirname "$0")/screenshot.mjs" "file://$tmp/trace.html" "$out" 15000
echo "wrote $out"
