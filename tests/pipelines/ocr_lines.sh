#!/usr/bin/env bash
# Boxes joined into lines, end to end: render_text's "spacing" scene (words three spaces apart in
# monospaced and serif fonts, which the detector splits into two boxes) read by pipelines/ocr.sh
# --lines (weavemeta merge=line) and scored against what was drawn. Without --lines "Word   12"
# is two texts, neither of which is the string.
#   tests/pipelines/ocr_lines.sh FRAMES
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${WEAVE_BUILD:-$root/build}
out=$build/pipelines/lines
mkdir -p "$out"
frames=${1:-4}
for p in render_text ocr_score; do
  [ -x "$build/pipelines/$p" ] || { echo "missing $build/pipelines/$p" >&2; exit 77; }
done
"$build/pipelines/render_text" "$out/spacing.webm" --truth "$out/truth.jsonl" --frames "$frames" --scene spacing
bash "$root/pipelines/ocr.sh" "$out/spacing.webm" --lines --json "$out/ocr.jsonl" --out none
grep -q '"words":\[' "$out/ocr.jsonl" || { echo "no line of several boxes in $out/ocr.jsonl" >&2; exit 1; }
if "$build/pipelines/ocr_score" "$out/truth.jsonl" "$out/ocr.jsonl"; then
  echo "ocr --lines: every string found, at least 90% read exactly"
fi
