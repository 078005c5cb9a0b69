#!/usr/bin/env bash
# The portable build: no fast CPU path (-Dfast_kernels=disabled), the reference kernels run
# everything, as on a CPU without AVX2 or an architecture other than x86-64. Builds, in
# build-portable/, the core, the CLI and the tests whose results depend on the kernels (no
# GStreamer plugin), and runs those tests: units, kernels, conformance, import, models (the seven
# against ONNX Runtime), runtime, sharing, threads, stream, vision, CLI. The suites that never
# reach a kernel (publish, track, loader, gst, fuzz replays, style) run in the main build only;
# leaving them out here saves about a minute of CI's two cores.
#
#   bash scripts/portable.sh                      # configure once, build, test
#   PORTABLE_BUILD_DIR=/tmp/p PORTABLE_JOBS=2 bash scripts/portable.sh
#   PORTABLE_ALL=1 bash scripts/portable.sh       # every target and every test
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
# The tests to run and the targets they need, from meson's own description of the build.
mapfile -t plan < <(meson introspect "$dir" --tests --targets | /usr/bin/python3 -c '
import json, os, sys
info = json.load(sys.stdin)
skip = {"weave:" + s for s in ("publish", "track", "loader", "gst", "fuzz", "style")}
tests = [t for t in info["tests"] if not skip & set(t["suite"])]
files = {t["id"]: t["filename"] for t in info["targets"]}
build = os.path.realpath(sys.argv[1])
needed = sorted({os.path.relpath(f, build) for t in tests for d in t["depends"] for f in files.get(d, [])})
print(" ".join(needed))
print(" ".join(t["name"] for t in tests))
' "$dir")
read -ra targets <<<"${plan[0]}"
read -ra names <<<"${plan[1]}"
ninja -C "$dir" -j"${PORTABLE_JOBS:-2}" "${targets[@]}"
meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes 2 "${names[@]}"
