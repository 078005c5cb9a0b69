#!/usr/bin/env bash
# Soak test (tests/soak/soak.cpp): ten weaveinfer streams of three models in one process (tee'd
# and separate sources, a two-input model among them, two streams of a detector batched across
# each other with weavetrack after it) with pauses, flushing seeks and elements
# added and removed under load. Checks that every buffer in is a buffer out per element, that the
# bus carries no error or warning, that EOS arrives, and prints RSS per phase (the slope from 40 %
# on is judged for runs of 10 minutes or more, see tests/soak/soak.cpp).
#
#   bash scripts/soak.sh                                 # 10 minutes, release build (build/)
#   SOAK_SECONDS=14400 bash scripts/soak.sh              # the long run: 4 hours
#   SOAK_SECONDS=60 SOAK_BUILD_DIR=build-asan bash scripts/soak.sh   # under ASan + LSan (leaks)
#   SOAK_CHANGE_INTERVAL=0.3 SOAK_SECONDS=400 bash scripts/soak.sh    # hundreds of state changes
#
# In a sanitizer build the RSS limit is not applied (ASan's quarantine holds freed memory);
# LeakSanitizer checks for leaks at exit instead. The other checks are the same.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${SOAK_BUILD_DIR:-build}
seconds=${SOAK_SECONDS:-600}
[ -f "$dir/build.ninja" ] || { echo "configure $dir first (scripts/build.sh or scripts/asan.sh)" >&2; exit 1; }
ninja -C "$dir" -j"${SOAK_JOBS:-1}" tests/soak/soak gst-plugin/libgstweave.so
work="$root/$dir/soak"
mkdir -p "$work"
/usr/bin/python3 scripts/make_soak_models.py "$work"
export GST_PLUGIN_PATH="$root/$dir/gst-plugin" GST_REGISTRY="$work/registry.bin"
sanitize=$(meson introspect "$dir" --buildoptions | /usr/bin/python3 -c \
  'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "b_sanitize"))')
if [ "$sanitize" != none ]; then
  export SOAK_MAX_SLOPE_MB=${SOAK_MAX_SLOPE_MB:-1000000}
  mkdir -p "$work/asan-bin"
  source scripts/asan_scanner.sh "$work/asan-bin" "$(clang++-16 -print-file-name=libclang_rt.asan-x86_64.so)"
  # fast_unwind_on_malloc=0: complete stacks through GLib, which the suppressions match on.
  export ASAN_OPTIONS="fast_unwind_on_malloc=0:detect_leaks=1:halt_on_error=1:detect_odr_violation=0:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
  export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
fi
echo "soak: $seconds s, build $dir (sanitize: $sanitize)"
"$dir/tests/soak/soak" "$work" "$work/cache" "$seconds"
