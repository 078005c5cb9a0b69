#!/usr/bin/env bash
# Configures (once) and builds Weave into build/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
meson compile -C build
