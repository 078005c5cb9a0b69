# Sourced by scripts/asan.sh and scripts/soak.sh for sanitizer builds: GStreamer scans plugins in
# a helper process (gst-plugin-scanner), here started through a wrapper that preloads the ASan
# runtime, since it loads our instrumented plugin. The scan loads every system plugin, and some
# leak in their init (gstreamer1.0-plugins-bad's openni2 enumerating devices, GLib's quark
# table growing as many plugins register their names); with the scan in its own process, with
# leak detection off there, those leaks stay out of the processes under test, which load only
# the plugins they use. Before gst-rtsp-server pulled in plugins-bad, the scan ran in-process
# (GST_REGISTRY_FORK=no).
#   source scripts/asan_scanner.sh WRAPPER_DIR LIBASAN
scanner_dir=$(pkg-config --variable=pluginscannerdir gstreamer-1.0)
printf '#!/bin/sh\nLD_PRELOAD=%s${LD_PRELOAD:+:$LD_PRELOAD} ASAN_OPTIONS="detect_leaks=0:$ASAN_OPTIONS" exec %s "$@"\n' \
  "$2" "$scanner_dir/gst-plugin-scanner" >"$1/gst-plugin-scanner"
chmod +x "$1/gst-plugin-scanner"
export GST_PLUGIN_SCANNER="$1/gst-plugin-scanner"
unset GST_REGISTRY_FORK
