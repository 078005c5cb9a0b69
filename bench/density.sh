#!/usr/bin/env bash
# Camera density: how many 1280x720 streams this machine keeps up with in real time, in one
# process, for (a) a classifier at 30 frames a second and (b) the PP-OCRv4 cascade at 5, with and
# without frame skipping (inference-interval), tracking (weavetrack) and batching (batch-size),
# beside the same pipelines built on ONNX Runtime.
#
#   bash bench/density.sh [--seconds T] [--model MODEL.onnx] [--no-peer] [--chart PNG]
#
# Weave (build/bench/bench_density, frames of the rendered text scene pushed from memory):
#   1. capacity: 8 classifier streams (4 OCR streams) fed as fast as they take frames; total
#      frames per second / the stream rate = the streams the process could carry;
#   2. live: that many streams, each sent its frames at the stream rate as a camera would, for
#      T seconds after 3 s of warm-up; kept up with when every stream put out its frames, with no
#      growing backlog (bench/density.cpp says exactly); then more streams, or fewer, until the
#      largest count that keeps up is found (to one stream). That count is the result.
#   3. the latency batching adds: half the classifier streams that kept up, live, without and
#      with batch-size=4.
# Peers (ONNX Runtime 1.30 in Node, bash bench/install_peers.sh):
#   - classifier: bench/ort_camera.js, one worker thread and session per stream, each frame
#     resized with sharp and normalized in JavaScript, then run: 2, 4 and 8 streams, the best
#     total frames per second / 30;
#   - OCR: bench/ocr_peer.mjs (@gutenye/ocr-node, the same PP-OCRv4 weights) on the scene's
#     frames as PNG files: one process of 2 threads and two processes of 1 thread side by side,
#     the better total frames per second / 5.
#   The peers' counts are capacities (the live check is Weave's): an upper bound for them.
# Threads: WEAVE_NUM_THREADS = the machine's cores for Weave. Results: build/bench/density/
# results.jsonl, a markdown table on stdout, and a chart (--chart, default
# build/bench/density/density.png).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEAVE_BUILD:-$root/build}
out=$build/bench/density
seconds=8 warmup=3 peer=1
model=$build/tests/mobilenet_v2.onnx
chart=$out/density.png
while [ $# -gt 0 ]; do
  case $1 in
    --seconds | --model | --chart) [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; } ;;&
    --seconds) seconds=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --chart) chart=$2; shift 2 ;;
    --no-peer) peer=0; shift ;;
    -h | --help) sed -n '2,/^set /p' "$0" | grep '^#'; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for tool in bench/bench_density pipelines/render_text; do
  [ -x "$build/$tool" ] || { echo "density: $build/$tool is missing (ninja -C build)" >&2; exit 1; }
done
[ -f "$model" ] || { echo "density: no model $model (ninja -C build exports the test models)" >&2; exit 1; }
if [ "$peer" = 1 ]; then bash "$root/bench/install_peers.sh" >/dev/null; fi
export GST_PLUGIN_PATH=$build/gst-plugin WEAVE_SOURCE_ROOT=$root
export WEAVE_NUM_THREADS=${WEAVE_NUM_THREADS:-$(nproc)}
export ORT_NODE=${ORT_NODE:-$root/third_party/npm/node_modules/onnxruntime-node}
mkdir -p "$out"
results=$out/results.jsonl
: >"$results"
py=/usr/bin/python3
# KEY of the JSON line in FILE.
jget() { "$py" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])[sys.argv[2]])' "$1" "$2"; }

# The scene's frames as PNG files, for the peers.
frames=$out/frames
if [ "$peer" = 1 ] && [ ! -f "$frames/00019.png" ]; then
  mkdir -p "$frames"
  "$build/pipelines/render_text" "$out/demo.webm" --frames 20 --scene demo >/dev/null
  gst-launch-1.0 -q filesrc location="$out/demo.webm" ! decodebin ! videoconvert ! video/x-raw,format=RGB \
    ! pngenc ! multifilesink location="$frames/%05d.png"
fi

density() {  # LOG ARGS...: one bench_density run; its JSON line in LOG
  local log=$1
  shift
  "$build/bench/bench_density" "$@" --seconds "$seconds" --warmup "$warmup" --cache "$build/bench/cache" \
    >"$log" 2>"$log.err" || true
  grep -q '^{' "$log" || { echo "density: bench_density $* failed:" >&2; tail -5 "$log.err" >&2; exit 1; }
}

# Whether N streams of the variant keep up live (its JSON in $out/TAG.liveN.json).
keeps_up() {  # TAG WORKLOAD RATE N ARGS...
  local tag=$1 workload=$2 rate=$3 n=$4
  shift 4
  density "$out/$tag.live$n.json" "$workload" "$@" --fps "$rate" --streams "$n" --live
  [ "$(jget "$out/$tag.live$n.json" realtime)" = True ]
}

# LABEL WORKLOAD RATE CAPACITY_STREAMS ARGS...: capacity, then the live search; one result line.
# The search starts at the capacity's count, steps by an eighth of it (at least 1) up while the
# streams keep up or down until they do, then halves the gap between the largest count that kept
# up and the smallest that did not.
weave() {
  local label=$1 workload=$2 rate=$3 s0=$4
  shift 4
  local tag=${workload}_${label//[^a-z0-9=-]/_}
  density "$out/$tag.capacity.json" "$workload" "$@" --fps "$rate" --streams "$s0"
  local cap n step good=0 bad=0
  cap=$(jget "$out/$tag.capacity.json" capacity_streams)
  n=$(awk -v c="$cap" 'BEGIN { n = int(c); print (n < 1 ? 1 : n) }')
  step=$(((n + 7) / 8))
  if keeps_up "$tag" "$workload" "$rate" "$n" "$@"; then
    good=$n
    # Up to four times the capacity estimate, whatever happens.
    while bad=$((good + step)) && [ "$bad" -le $((4 * n + 4)) ] && keeps_up "$tag" "$workload" "$rate" "$bad" "$@"; do
      good=$bad
    done
  else
    bad=$n
    while [ "$bad" -gt 1 ]; do
      n=$((bad > step ? bad - step : 1))
      if keeps_up "$tag" "$workload" "$rate" "$n" "$@"; then good=$n; break; fi
      bad=$n
    done
  fi
  while [ "$good" -gt 0 ] && [ $((bad - good)) -gt 1 ]; do
    n=$(((good + bad) / 2))
    if keeps_up "$tag" "$workload" "$rate" "$n" "$@"; then good=$n; else bad=$n; fi
  done
  echo "density: $label: $good streams kept up live ($bad did not; capacity $cap)" >&2
  local p50=0 p99=0
  if [ "$good" -gt 0 ]; then
    p50=$(jget "$out/$tag.live$good.json" late_ms_p50)
    p99=$(jget "$out/$tag.live$good.json" late_ms_p99)
  fi
  echo "{\"side\":\"weave\",\"workload\":\"$workload\",\"variant\":\"$label\",\"rate\":$rate,\"capacity_fps\":$(jget "$out/$tag.capacity.json" total_fps),\"capacity_streams\":$cap,\"live_streams\":$good,\"late_ms_p50\":$p50,\"late_ms_p99\":$p99}" >>"$results"
}

weave "every frame" classify 30 8 "$model"
weave "inference-interval=3" classify 30 8 "$model" --interval 3
weave "batch-size=4" classify 30 8 "$model" --batch-size 4
weave "every frame" ocr 5 4
weave "weavetrack, detector every 5th frame" ocr 5 4 --track --interval 5

# The latency batching adds: the same streams live without and with batch-size=4 (half the count
# that kept up without batching, so neither is near its limit).
half=$("$py" -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; print(max(1, [x for x in r if x["variant"]=="every frame" and x["workload"]=="classify"][0]["live_streams"] // 2))' "$results")
for b in 1 4; do
  density "$out/latency_b$b.json" classify "$model" --fps 30 --streams "$half" --live --batch-size "$b"
  echo "{\"side\":\"latency\",\"workload\":\"classify\",\"batch_size\":$b,\"streams\":$half,\"late_ms_p50\":$(jget "$out/latency_b$b.json" late_ms_p50),\"late_ms_p99\":$(jget "$out/latency_b$b.json" late_ms_p99)}" >>"$results"
done

if [ "$peer" = 1 ]; then
  best=0
  for s in 2 4 8; do
    node "$root/bench/ort_camera.js" "$model" "$frames" "$s" --frames 150 >"$out/peer_classify$s.json" 2>"$out/peer_classify$s.err" || true
    grep -q '^{' "$out/peer_classify$s.json" || { echo "density: ort_camera.js failed:" >&2; tail -5 "$out/peer_classify$s.err" >&2; exit 1; }
    best=$(awk -v a="$best" -v b="$(jget "$out/peer_classify$s.json" total_fps)" 'BEGIN { print (b > a ? b : a) }')
  done
  echo "{\"side\":\"peer\",\"workload\":\"classify\",\"variant\":\"every frame\",\"rate\":30,\"capacity_fps\":$best,\"capacity_streams\":$(awk -v f="$best" 'BEGIN { print f / 30 }')}" >>"$results"
  # OCR: one process of 2 threads, then two processes of 1 thread at once.
  peer_fps() { sed -n 's/.*, \([0-9.]*\) ms a frame.*/\1/p' "$1" | awk '{ s += 1000 / $1 } END { print s + 0 }'; }
  node "$root/bench/ocr_peer.mjs" "$frames" "$out/peer_ocr.jsonl" --threads 2 >"$out/peer_ocr2.log" 2>&1
  one=$(peer_fps "$out/peer_ocr2.log")
  node "$root/bench/ocr_peer.mjs" "$frames" "$out/peer_ocr_a.jsonl" --threads 1 >"$out/peer_ocr1a.log" 2>&1 &
  node "$root/bench/ocr_peer.mjs" "$frames" "$out/peer_ocr_b.jsonl" --threads 1 >"$out/peer_ocr1b.log" 2>&1
  wait
  two=$(cat "$out/peer_ocr1a.log" "$out/peer_ocr1b.log" | sed -n 's/.*, \([0-9.]*\) ms a frame.*/\1/p' |
    awk '{ s += 1000 / $1 } END { print s + 0 }')
  best=$(awk -v a="$one" -v b="$two" 'BEGIN { print (b > a ? b : a) }')
  [ "$(awk -v b="$best" 'BEGIN { print (b > 0) }')" = 1 ] || { echo "density: no time in the OCR peer's logs" >&2; exit 1; }
  echo "{\"side\":\"peer\",\"workload\":\"ocr\",\"variant\":\"every frame\",\"rate\":5,\"capacity_fps\":$best,\"capacity_streams\":$(awk -v f="$best" 'BEGIN { print f / 5 }'),\"one_process_2_threads_fps\":$one,\"two_processes_1_thread_fps\":$two}" >>"$results"
fi

"$py" "$root/bench/density_report.py" "$results" --cores "$(nproc)" --chart "$chart"
