#!/usr/bin/env bash
# The main job, from nothing: installs what is missing, builds, then reads the text in a video
# with PP-OCRv4 in one GStreamer pipeline -- text detection, direction classification and
# recognition, three models in a cascade (pipelines/ocr.sh, pipelines/ocr_cascade.txt) -- on a
# video of known text it renders with GStreamer's textoverlay. Prints the pipeline, the texts read
# (scored against what was drawn) and the frame rate; saves the annotated video, a frame from its
# middle as a PNG and the JSON lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
bash scripts/build.sh
out=build/quickstart
mkdir -p "$out"
pipelines/ocr.sh --frames 20 --json "$out/ocr.jsonl" --out "$out/ocr_annotated.webm" --frame "$out/ocr_frame.png"
echo "files: $out/ocr_frame.png (an annotated frame), $out/ocr_annotated.webm, $out/ocr.jsonl (one line a frame)"
