#!/usr/bin/env bash
# Runs every benchmark of docs/performance.md and writes build/bench/results.md + results.json.
#   bash bench/run.sh [--quick] [--build DIR] [--only memory,setup,artifact,latency,broad,pipeline,streams]
# Builds what it needs first (release build; -j1 because the machines are shared). ONNX Runtime
# comes from ORT_NODE, else third_party/npm (bench/install_peers.sh, run here when it is missing);
# OpenCV DNN, PyTorch and matplotlib from Debian (scripts/install-deps.sh). A missing peer leaves
# its columns empty, with the reason.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
cd "$root"
[ -n "${ORT_NODE:-}" ] || bash bench/install_peers.sh || echo "bench: ONNX Runtime could not be installed" >&2
[ -d "$build" ] || meson setup "$build"
targets=(tools/weave bench/bench_instances bench/bench_artifact)
# Optional parts: the GStreamer benches (need the plugin), the FMA peak (needs the fast kernels)
# and the exported torchvision and LSTM models.
grep -q 'build bench/bench_gst_instances:' "$build/build.ninja" &&
  targets+=(bench/bench_gst_instances bench/bench_pipeline gst-plugin/libgstweave.so)
grep -q 'build bench/bench_fma_peak:' "$build/build.ninja" && targets+=(bench/bench_fma_peak)
grep -q 'build tests/resnet18.onnx' "$build/build.ninja" && targets+=(tests/resnet18.onnx)
ninja -C "$build" -j1 "${targets[@]}" >/dev/null
exec /usr/bin/python3 "$root/bench/run.py" --build "$build" "${args[@]}"
