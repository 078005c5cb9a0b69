#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer job: builds everything in the
# sanitizer build (scripts/asan_setup.sh: clang-16, -Db_sanitize=address,undefined, the same
# build the fuzzers use) and runs the whole `meson test` suite (units, models, conformance,
# GStreamer elements, pipelines, CLI) there. Any memory error, undefined behaviour or leak fails
# the test it happens in.
#
#   bash scripts/asan.sh                  # configure once, build, run every test
#   bash scripts/asan.sh gst-weaveinfer   # some tests only (names as in `meson test --list`)
#   ASAN_BUILD_DIR=/tmp/a bash scripts/asan.sh
#
# GStreamer programs that are not ours (gst-launch-1.0, gst-inspect-1.0) load the instrumented
# plugin: a wrapper on PATH preloads the ASan runtime for them (clang links it statically into
# our own programs only). Plugins are scanned by GStreamer's scanner process under such a
# wrapper too (scripts/asan_scanner.sh), so that what other plugins leak when they are loaded
# for the scan stays out of the tested process. Leaks inside system libraries are suppressed in scripts/lsan.supp, each with its reason.
# allocator_may_return_null=1: a malloc the system refuses (the fault tests plan a bound of
# hundreds of GiB) returns null as in a release build, which the code turns into an error; ASan
# would abort there otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${ASAN_BUILD_DIR:-build-asan}
bash scripts/asan_setup.sh "$dir"
# What the tests need (and the soak), not the benchmarks: the ASan build is the slow part.
ninja -C "$dir" -j"${ASAN_JOBS:-2}" meson-test-prereq tests/soak/soak

libasan=$(clang++-16 -print-file-name=libclang_rt.asan-x86_64.so)
wrap="$root/$dir/asan-bin"
mkdir -p "$wrap"
for prog in gst-launch-1.0 gst-inspect-1.0; do
  printf '#!/bin/sh\nLD_PRELOAD=%s${LD_PRELOAD:+:$LD_PRELOAD} exec %s "$@"\n' "$libasan" "$(command -v $prog)" \
    >"$wrap/$prog"
  chmod +x "$wrap/$prog"
done
export PATH="$wrap:$PATH"
source scripts/asan_scanner.sh "$wrap" "$libasan"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_odr_violation=0:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
# The inference sweep imports about 445,000 one-node models; each costs ten times its release
# time under ASan (331 s of this job on a 2-core EPYC). The release build's test runs them all;
# here every third (tests/import/test_inference_sweep.cpp), each schema from its own offset.
export WEAVE_SWEEP_STRIDE=${WEAVE_SWEEP_STRIDE:-3}
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
# LeakSanitizer matches the suppressions on the allocation's stack. clang's default unwinder
# (frame pointers) stops in GLib, so the processes that load GStreamer use the slow, complete
# unwinder; the others keep the fast one (the slow one makes the malloc-heavy tests much slower).
slow_unwind="fast_unwind_on_malloc=0:$ASAN_OPTIONS"
run_tests() {
  meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "${ASAN_TEST_JOBS:-2}" \
    --timeout-multiplier 4 "$@"
}
if [ $# -gt 0 ]; then
  ASAN_OPTIONS=$slow_unwind run_tests "$@"
  exit
fi
gst_suites=(gst pipelines ocr fuzz)  # fuzz: fuzz-replay-caps parses caps with GStreamer
status=0
run_tests $(printf -- '--no-suite %s ' "${gst_suites[@]}") || status=1
ASAN_OPTIONS=$slow_unwind run_tests $(printf -- '--suite %s ' "${gst_suites[@]}") || status=1
exit $status
