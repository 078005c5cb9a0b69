#!/usr/bin/env bash
# Configures the one sanitizer build that serves both scripts/asan.sh (the whole test suite under
# ASan + UBSan + LSan) and scripts/fuzz.sh (the libFuzzer targets): clang-16, debugoptimized,
# -Db_sanitize=address,undefined, -Dfuzzing=true (every library carries libFuzzer's coverage
# instrumentation, UBSan findings abort). Sharing it means CI compiles the instrumented core once.
#
#   bash scripts/asan_setup.sh DIR     # configures DIR unless it already has a build.ninja
#
# -gline-tables-only: the sanitizers' stack traces need function names and lines only; full
# debug information made every unit of this build about 10% slower to compile.
#
# The test models are taken from the main build (build/tests, exported by scripts/build.sh) when
# there, else this build exports its own.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${1:?usage: asan_setup.sh BUILD_DIR}
[ ! -f "$dir/build.ninja" ] || exit 0
models=()
if [ -f build/tests/squeezenet1_1.onnx ] && [ -f build/tests/resnet18.onnx ]; then
  models=(-Dmodels_dir="$root/build/tests")
fi
CC=clang-16 CXX=clang++-16 meson setup "$dir" --buildtype=debugoptimized -Dfuzzing=true \
  -Db_sanitize=address,undefined -Db_lundef=false -Dcpp_args=-gline-tables-only -Dc_args=-gline-tables-only \
  "${models[@]}" >/dev/null
