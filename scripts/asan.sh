#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer job: builds everything in a
# separate build directory with -Db_sanitize=address,undefined and runs the whole `meson test`
# suite (units, models, GStreamer elements, pipelines, CLI) there. Any memory error, undefined
# behaviour or leak fails the test it happens in.
#
#   bash scripts/asan.sh                  # configure once, build, run every test
#   bash scripts/asan.sh gst-weaveinfer   # some tests only (names as in `meson test --list`)
#   ASAN_BUILD_DIR=/tmp/a bash scripts/asan.sh
#
# The test models are taken from the main build (build/tests, exported by scripts/build.sh) when
# there, else this build exports its own. GStreamer programs that are not ours (gst-launch-1.0,
# gst-inspect-1.0) load the instrumented plugin: a wrapper on PATH preloads the ASan runtime for
# them. Plugins are scanned in-process (GST_REGISTRY_FORK=no) for the same reason. Leaks inside
# system libraries are suppressed in scripts/lsan.supp, each entry with its reason.
# allocator_may_return_null=1: a malloc the system refuses (the fault tests plan a bound of
# hundreds of GiB) returns null as in a release build, which the code turns into an error; ASan
# would abort there otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${ASAN_BUILD_DIR:-build-asan}
if [ ! -f "$dir/build.ninja" ]; then
  models=()
  if [ -f build/tests/squeezenet1_1.onnx ] && [ -f build/tests/resnet18.onnx ]; then
    models=(-Dmodels_dir="$root/build/tests")
  fi
  meson setup "$dir" --buildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false \
    "${models[@]}" >/dev/null
fi
# What the tests need (and the soak), not the benchmarks: the ASan build is the slow part.
ninja -C "$dir" -j"${ASAN_JOBS:-1}" meson-test-prereq tests/soak/soak

libasan=$(g++ -print-file-name=libasan.so)
wrap="$root/$dir/asan-bin"
mkdir -p "$wrap"
for prog in gst-launch-1.0 gst-inspect-1.0; do
  printf '#!/bin/sh\nLD_PRELOAD=%s${LD_PRELOAD:+:$LD_PRELOAD} exec %s "$@"\n' "$libasan" "$(command -v $prog)" \
    >"$wrap/$prog"
  chmod +x "$wrap/$prog"
done
export PATH="$wrap:$PATH"
export GST_REGISTRY_FORK=no
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_odr_violation=0:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "${ASAN_TEST_JOBS:-2}" \
  --timeout-multiplier 4 "$@"
