#!/usr/bin/env bash
# OCR accuracy and speed on a varied set of rendered videos, Weave's cascade (pipelines/ocr.sh)
# beside a peer built on ONNX Runtime with the same PP-OCRv4 weights (@gutenye/ocr-node from npm,
# bench/ocr_peer.mjs), on the same frames, scored by one rule (pipelines/ocr_score).
#
#   bash bench/ocr_accuracy.sh [--frames N] [--threads N] [--scenes "demo spacing ..."] [--no-peer]
#
# Scenes (render_text --scene, pipelines/app/text_scene.h): demo (the quick start's video) and the
# varied set -- spacing (monospaced and wide-spaced words), patterned (outlined and coloured text
# over grey spokes), small (11-14 pt), colours (light text on dark). Each is rendered once into
# build/bench/ocr_set/ with its truth (where each string's ink is on each frame) and its frames as
# PNG files for the peer. For each scene, one after the other (interleaved):
#   - weave, by box: pipelines/ocr.sh, one JSON text per detected box;
#   - weave, by line: pipelines/ocr.sh --lines (weavemeta merge=line);
#   - weave speed: build/bench/bench_ocr_cascade --scene S --json (frames from memory, after a
#     warm-up; streaming fps);
#   - peer: node bench/ocr_peer.mjs on the PNG frames (it joins the boxes of a line itself; time
#     per frame with PNG decoding, without loading the models).
# Accuracy: a string shown on a frame is read when the reader's text whose box matches it (IoU >=
# 0.5 or centres inside each other) equals it exactly, spaces runs counted as one ("exact"); and
# when that text was read anywhere on the frame ("anywhere": the peer's boxes sit a few pixels
# below the text, which fails the box rule on small text). Threads: --threads (default 2) for
# both. The last line is one JSON object with every figure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEAVE_BUILD:-$root/build}
export WEAVE_BUILD=$build  # pipelines/ocr.sh reads the same build
out=$build/bench/ocr_set
frames=20 threads=2 peer=1 scenes="demo spacing patterned small colours mixed"
while [ $# -gt 0 ]; do
  case $1 in
    --frames | --threads | --scenes) [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; } ;;&
    --frames) frames=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --scenes) scenes=$2; shift 2 ;;
    --no-peer) peer=0; shift ;;
    -h | --help) sed -n '2,/^set /p' "$0" | grep '^#'; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$scenes" ] || { echo "ocr_accuracy: no scenes" >&2; exit 2; }
for tool in pipelines/render_text pipelines/ocr_score bench/bench_ocr_cascade; do
  [ -x "$build/$tool" ] || { echo "ocr_accuracy: $build/$tool is missing (ninja -C build)" >&2; exit 1; }
done
if [ "$peer" = 1 ]; then bash "$root/bench/install_peers.sh" >/dev/null; fi
export GST_PLUGIN_PATH=$build/gst-plugin
mkdir -p "$out"

# "read R of S ..." lines of ocr_score -> "R S A": exact by box, strings shown, exact anywhere.
# ocr_score exits 1 below its own bar, which is a result here; bad input (2) stops the run.
score() {
  local status=0
  "$build/pipelines/ocr_score" "$1" "$2" >"$2.score" 2>&1 || status=$?
  [ $status -le 1 ] || { echo "ocr_accuracy: ocr_score $1 $2 failed:" >&2; cat "$2.score" >&2; exit 1; }
  local exact anywhere
  exact=$(sed -n 's/^read \([0-9]*\) of \([0-9]*\) strings exactly (.*found.*/\1 \2/p' "$2.score")
  anywhere=$(sed -n 's/^read \([0-9]*\) of [0-9]* strings exactly anywhere.*/\1/p' "$2.score")
  [ -n "$exact" ] && [ -n "$anywhere" ] || { echo "ocr_accuracy: no score in $2.score" >&2; exit 1; }
  echo "$exact $anywhere"
}
# Runs a step, its output in LOG; on failure prints the log and stops.
step() {
  local log=$1
  shift
  "$@" >"$log" 2>&1 || { echo "ocr_accuracy: failed: $* (log $log):" >&2; tail -20 "$log" >&2; exit 1; }
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }'; }

json="" rows=""
declare -A total
for sc in $scenes; do
  video=$out/$sc.webm truth=$out/$sc.truth.jsonl pngs=$out/$sc.frames
  if [ ! -s "$truth" ] || [ "$video" -ot "$build/pipelines/render_text" ] || [ "$(wc -l <"$truth")" != "$frames" ]; then
    "$build/pipelines/render_text" "$video" --truth "$truth" --frames "$frames" --scene "$sc" >/dev/null
    rm -rf "$pngs"
  fi
  if [ "$peer" = 1 ] && [ ! -d "$pngs" ]; then
    mkdir -p "$pngs"
    gst-launch-1.0 -q filesrc location="$video" ! decodebin ! videoconvert ! video/x-raw,format=RGB \
      ! pngenc ! multifilesink location="$pngs/%05d.png"
  fi
  export WEAVE_NUM_THREADS=$threads
  step "$out/$sc.weave-box.log" bash "$root/pipelines/ocr.sh" "$video" --json "$out/$sc.weave-box.jsonl" --out none
  step "$out/$sc.weave-line.log" bash "$root/pipelines/ocr.sh" "$video" --json "$out/$sc.weave-line.jsonl" --out none --lines
  read -r box_read shown box_any <<<"$(score "$truth" "$out/$sc.weave-box.jsonl")"
  read -r line_read _ line_any <<<"$(score "$truth" "$out/$sc.weave-line.jsonl")"
  step "$out/$sc.bench.log" "$build/bench/bench_ocr_cascade" --scene "$sc" --frames "$frames" --json \
    --source "$root" --cache "$build/bench/cache"
  fps=$(sed -n 's/.*"fps":\([0-9.]*\).*/\1/p' "$out/$sc.bench.log")
  [ -n "$fps" ] || { echo "ocr_accuracy: no fps in $out/$sc.bench.log" >&2; exit 1; }
  peer_read=0 peer_any=0 peer_fps=0
  if [ "$peer" = 1 ]; then
    step "$out/$sc.peer.log" node "$root/bench/ocr_peer.mjs" "$pngs" "$out/$sc.peer.jsonl" --threads "$threads"
    ms=$(sed -n 's/.*, \([0-9.]*\) ms a frame.*/\1/p' "$out/$sc.peer.log")
    [ -n "$ms" ] || { echo "ocr_accuracy: no time in $out/$sc.peer.log" >&2; exit 1; }
    peer_fps=$(awk -v m="$ms" 'BEGIN { printf "%.2f", 1000 / m }')
    read -r peer_read _ peer_any <<<"$(score "$truth" "$out/$sc.peer.jsonl")"
  fi
  rows+="| $sc | $shown | $(pct "$box_read" "$shown")% | $(pct "$line_read" "$shown")% | $(pct "$line_any" "$shown")% | $(pct "$peer_read" "$shown")% | $(pct "$peer_any" "$shown")% | $fps | $peer_fps |"$'\n'
  json+="${json:+,}\"$sc\":{\"shown\":$shown,\"weave_box\":$box_read,\"weave_line\":$line_read,\"weave_line_anywhere\":$line_any,\"peer\":$peer_read,\"peer_anywhere\":$peer_any,\"weave_fps\":$fps,\"peer_fps\":$peer_fps}"
  for k in shown box_read line_read line_any peer_read peer_any; do total[$k]=$((${total[$k]:-0} + ${!k})); done
done
echo "OCR on the varied set: $frames frames a scene, 1280x720, $threads threads each ($(date -u +%F))"
echo
echo "| scene | strings | weave by box | weave by line | weave anywhere | peer | peer anywhere | weave fps | peer fps |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s' "$rows"
echo "| all | ${total[shown]} | $(pct "${total[box_read]}" "${total[shown]}")% | $(pct "${total[line_read]}" "${total[shown]}")% | $(pct "${total[line_any]}" "${total[shown]}")% | $(pct "${total[peer_read]}" "${total[shown]}")% | $(pct "${total[peer_any]}" "${total[shown]}")% | | |"
echo
echo "{\"frames\":$frames,\"threads\":$threads,\"scenes\":{$json}}"
