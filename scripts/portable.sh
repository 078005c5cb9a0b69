#!/usr/bin/env bash
# The portable build: no fast CPU path (-Dfast_kernels=disabled), the reference kernels run
# everything, as on a CPU without AVX2 or an architecture other than x86-64. Builds the core,
# the CLI and the tests (no GStreamer plugin: it does not depend on the kernels) in
# build-portable/ and runs every test there, the seven models against ONNX Runtime included.
#
#   bash scripts/portable.sh                      # configure once, build, test
#   PORTABLE_BUILD_DIR=/tmp/p PORTABLE_JOBS=2 bash scripts/portable.sh
#
# The exported test models are taken from the main build (build/tests) when there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${PORTABLE_BUILD_DIR:-build-portable}
if [ ! -f "$dir/build.ninja" ]; then
  models=()
  if [ -f build/tests/resnet18.onnx ] && [ -f build/tests/lstm_lm.onnx ]; then
    models=(-Dmodels_dir="$root/build/tests")
  fi
  meson setup "$dir" --buildtype=release -Dfast_kernels=disabled -Dgstreamer=disabled "${models[@]}" >/dev/null
fi
ninja -C "$dir" -j"${PORTABLE_JOBS:-2}"
meson test -C "$dir" --print-errorlogs --num-processes 2
