#!/usr/bin/env bash
# Two weaveinfer elements running the same model in one pipeline share one immutable Factory
# (graph, params, packed kernels); each has only its own Executor (activation arena). The
# debug log (GST_DEBUG=weaveinfer:4) shows both elements loading the model and getting the same
# factory; the script prints those lines, checks the two ids are equal and prints the fps.
#   pipelines/shared.sh [FRAMES]      FRAMES: buffers (default 30)
source "$(dirname "$0")/lib.sh"
frames=${1:-30}
model=$models/squeezenet1_1.onnx
need "$model" "the build exports it (ninja -C build)"
log=$out/shared.log
norm="mean=0.485,0.456,0.406 std=0.229,0.224,0.225"
GST_DEBUG=weaveinfer:4 GST_DEBUG_NO_COLOR=1 GST_DEBUG_FILE=$log \
  launch "$frames" "videotestsrc num-buffers=$frames pattern=ball ! weaveconvert $norm ! tee name=t
  t. ! queue ! weaveinfer name=left cache-dir=$cache model=$model ! fakesink
  t. ! queue ! weaveinfer name=right cache-dir=$cache model=$model ! fakesink" ", through both elements"
echo "from the debug log ($log):"
grep -E "<(left|right)> model '.*' loaded" "$log" | sed -E 's/.*<(left|right)> /  \1: /'
factory() { grep -E "<$1> model '.*' loaded" "$log" | sed -E 's/.*\(factory ([^,]*),.*/\1/' | tail -n 1; }
left=$(factory left)
right=$(factory right)
if [ -n "$left" ] && [ "$left" = "$right" ]; then
  echo "left and right share one Factory: $left"
else
  echo "left and right do NOT share a Factory: '$left' vs '$right'" >&2
  exit 1
fi
