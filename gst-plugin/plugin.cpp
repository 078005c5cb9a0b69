// The `weave` plugin: one register function per element, each in its element's own file.
// Elements added later (weaveconvert in gstweaveconvert.*, weavedecode in gstweavedecode.*)
// are compiled in by gst-plugin/meson.build when their files exist, which defines
// WEAVE_HAVE_<ELEMENT>; their register calls below then take effect.
#include <gst/gst.h>

#include "gst-plugin/gstweaveinfer.h"
#ifdef WEAVE_HAVE_WEAVECONVERT
#include "gst-plugin/gstweaveconvert.h"
#endif
#ifdef WEAVE_HAVE_WEAVEDECODE
#include "gst-plugin/gstweavedecode.h"
#endif

#ifndef WEAVE_VERSION
#define WEAVE_VERSION "0.0.0"
#endif
#define PACKAGE "weave"

static gboolean plugin_init(GstPlugin* plugin) {
  gboolean ok = gst_weave_infer_register(plugin);
#ifdef WEAVE_HAVE_WEAVECONVERT
  ok = gst_weave_convert_register(plugin) && ok;
#endif
#ifdef WEAVE_HAVE_WEAVEDECODE
  ok = gst_weave_decode_register(plugin) && ok;
#endif
  return ok;
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, weave, "Weave neural-network inference elements",
                  plugin_init, WEAVE_VERSION, "MIT", "weave", "https://example.invalid/weave")
