#!/usr/bin/env bash
# The portable path: the reference kernels running everything, as on a CPU without AVX2 or an
# architecture other than x86-64. Two checks:
#
# 1. The tests whose results depend on the kernels run in the main build (build/, which
#    scripts/test.sh built) with WEAVE_ISA=none in their environment, which turns the fast path
#    off for the process: the kernel registry then holds the reference kernels alone, as in a
#    build without the fast path (core/kernels/registry.cpp). Which tests: those a build without
#    the fast path defines (the fast kernels' own tests are not among them), less the suites that
#    never reach a kernel (publish, track, loader, gst, fuzz replays, style).
# 2. That build configures (build-portable/, -Dfast_kernels=disabled) and its sources that
#    differ from the main build's (those that test WEAVE_HAVE_FAST) compile.
#
# A build of its own for the tests (the core and 59 tests compiled again) took 365-641 s of CI's
# two cores for the same reference kernels; this takes about 2 minutes (docs/reliability.md, CI).
#
#   bash scripts/portable.sh                      # after scripts/test.sh (or scripts/build.sh)
#   PORTABLE_BUILD_DIR=/tmp/p bash scripts/portable.sh
#   PORTABLE_ALL=1 bash scripts/portable.sh       # a whole build without the fast path, every test in it
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
if [ -n "${PORTABLE_ALL:-}" ]; then
  ninja -C "$dir" -j"${PORTABLE_JOBS:-2}"
  meson test -C "$dir" --print-errorlogs --num-processes 2
  exit
fi
[ -f build/build.ninja ] || {
  echo "portable.sh: no main build in build/ (run scripts/test.sh or scripts/build.sh first)" >&2
  exit 1
}
mapfile -t plan < <(meson introspect "$dir" --tests | /usr/bin/python3 -c '
import json, os, sys
skip = {"weave:" + s for s in ("publish", "track", "loader", "gst", "fuzz", "style")}
tests = [t["name"] for t in json.load(sys.stdin) if not skip & set(t["suite"])]
objs = []
for c in json.load(open(os.path.join(sys.argv[1], "compile_commands.json"))):
    src = os.path.normpath(os.path.join(c["directory"], c["file"]))
    with open(src, errors="replace") as f:
        if "WEAVE_HAVE_FAST" in f.read():
            objs.append(c["output"])
if not tests or not objs:
    sys.exit("portable.sh: found no tests or no sources to check in " + sys.argv[1])
print(" ".join(sorted(set(objs))))
print(" ".join(tests))
' "$dir")
read -ra objects <<<"${plan[0]}"
read -ra names <<<"${plan[1]}"
echo "portable: compiling ${#objects[@]} sources that differ without the fast path: ${objects[*]}"
ninja -C "$dir" -j"${PORTABLE_JOBS:-2}" "${objects[@]}"
echo "portable: ${#names[@]} tests in build/ with WEAVE_ISA=none"
WEAVE_ISA=none meson test -C build --no-rebuild --print-errorlogs --num-processes 2 "${names[@]}"
