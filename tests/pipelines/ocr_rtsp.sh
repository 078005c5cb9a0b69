#!/usr/bin/env bash
# Live input: render_text's video of known text served over RTSP on a loopback port
# (build/pipelines/rtsp_serve, gst-rtsp-server), read by pipelines/ocr.sh rtsp://..., and what
# was read scored against what was drawn.
#   tests/pipelines/ocr_rtsp.sh FRAMES
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEAVE_BUILD:-$root/build}
out=$build/pipelines/rtsp
mkdir -p "$out"
frames=${1:-4}
for p in rtsp_serve render_text ocr_score; do
  [ -x "$build/pipelines/$p" ] || { echo "missing $build/pipelines/$p" >&2; exit 77; }
done
"$build/pipelines/render_text" "$out/input.webm" --truth "$out/truth.jsonl" --frames "$frames"
rm -f "$out/urls.txt" "$out/ocr.jsonl"
"$build/pipelines/rtsp_serve" --seconds 120 "$out/input.webm" >"$out/urls.txt" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$out/urls.txt" ] && break; sleep 0.1; done
url=$(head -1 "$out/urls.txt")
[ -n "$url" ] || { echo "rtsp_serve printed no URL" >&2; exit 1; }
echo "serving $url"
bash "$root/pipelines/ocr.sh" "$url" --json "$out/ocr.jsonl" --out none
if "$build/pipelines/ocr_score" "$out/truth.jsonl" "$out/ocr.jsonl"; then
  echo "ocr over rtsp: every string found, at least 90% read exactly"
fi
