#!/usr/bin/env bash
# Installs the peers the benchmarks compare Weave with, into the project's own third_party/npm
# (outside git; scripts/install-deps.sh installs Debian's OpenCV DNN, PyTorch and matplotlib):
# ONNX Runtime 1.30 for CPU, the npm package onnxruntime-node, whose install script is skipped
# (it only fetches GPU extras; the CPU library is in the package), and the OCR peer
# @gutenye/ocr-node 1.4.8. Idempotent.
#   bash bench/install_peers.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
npmdir="$root/third_party/npm"
if [ ! -f "$npmdir/node_modules/onnxruntime-node/package.json" ]; then
  command -v npm >/dev/null 2>&1 || { echo "install_peers: npm is missing (bash scripts/install-deps.sh)" >&2; exit 1; }
  mkdir -p "$npmdir"
  (cd "$npmdir" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --ignore-scripts --no-audit --no-fund onnxruntime-node@1.30.0 >/dev/null)
fi
# The OCR peer of bench/ocr_accuracy.sh: PaddleOCR's PP-OCRv4 on ONNX Runtime in Node (its image
# library sharp comes with its prebuilt binary as an npm dependency; no install script is run).
if [ ! -f "$npmdir/node_modules/@gutenye/ocr-node/package.json" ]; then
  (cd "$npmdir" && npm install --ignore-scripts --no-audit --no-fund @gutenye/ocr-node@1.4.8 >/dev/null)
fi
echo "peers ready: ONNX Runtime in $npmdir/node_modules/onnxruntime-node, @gutenye/ocr-node"
