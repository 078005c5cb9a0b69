#!/usr/bin/env bash
# Throughput of N weaveinfer elements in one process, with and without the process-wide thread
# budget (R12). Report only: prints frames per second, asserts nothing.
#
#   bash bench/budget_throughput.sh [MODEL]     # default build/tests/squeezenet1_1.onnx
#   ELEMENTS=4 FRAMES=40 CAP=2 REPEAT=3 bash bench/budget_throughput.sh
#
# One gst-launch process runs ELEMENTS branches `videotestsrc ! weaveconvert ! weaveinfer
# threads=CAP ! fakesink`. Configurations:
#   budget      WEAVE_NUM_THREADS=<cores>: all elements share <cores> slots (the default)
#   no-budget   WEAVE_NUM_THREADS=ELEMENTS*CAP: every element can have its CAP threads at once,
#               like private per-element pools (oversubscribed when that exceeds the cores)
#   budget-cap1 WEAVE_NUM_THREADS=<cores>, threads=1: one thread per element, no intra-op split
# Each configuration runs REPEAT times, interleaved; the median is reported.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
model=${1:-$build/tests/squeezenet1_1.onnx}
elements=${ELEMENTS:-4}
frames=${FRAMES:-40}
cap=${CAP:-2}
repeat=${REPEAT:-3}
cores=$(nproc)
export GST_PLUGIN_PATH=$build/gst-plugin
export GST_REGISTRY=$build/bench-registry.bin
export XDG_CACHE_HOME=$build/bench-cache
[ -f "$model" ] || { echo "no model $model (run the build first)" >&2; exit 1; }

pipeline() {  # $1 = threads property
  local p="" i
  for ((i = 0; i < elements; i++)); do
    p+=" videotestsrc num-buffers=$frames pattern=ball ! video/x-raw,width=224,height=224"
    p+=" ! weaveconvert ! weaveinfer model=$model threads=$1 ! fakesink sync=false"
  done
  echo "$p"
}

run() {  # $1 = budget, $2 = threads property; prints seconds
  local t0 t1
  t0=$(date +%s.%N)
  # shellcheck disable=SC2046
  WEAVE_NUM_THREADS=$1 gst-launch-1.0 -q $(pipeline "$2") > /dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "model $(basename "$model"), $elements elements x $frames frames, cap $cap, $cores cores"
run "$cores" 1 > /dev/null  # compiles the model into the cache once; not timed
declare -A secs
configs=("budget:$cores:$cap" "no-budget:$((elements * cap)):$cap" "budget-cap1:$cores:1")
for ((r = 0; r < repeat; r++)); do
  for c in "${configs[@]}"; do
    IFS=: read -r name budget threads <<< "$c"
    secs[$name]+="$(run "$budget" "$threads") "
  done
done
printf '%-12s %8s %10s %8s\n' config budget seconds fps
for c in "${configs[@]}"; do
  IFS=: read -r name budget threads <<< "$c"
  m=$(tr ' ' '\n' <<< "${secs[$name]}" | grep . | median)
  printf '%-12s %8s %10.2f %8.1f\n' "$name" "$budget" "$m" "$(echo "$elements * $frames / $m" | bc -l)"
done
