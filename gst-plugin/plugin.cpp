// The "weave" GStreamer plugin: registers every element.
#include <gst/gst.h>

#include "gst-plugin/elements.h"

static gboolean plugin_init(GstPlugin* plugin) {
  gboolean ok = TRUE;
  ok &= weave_register_weaveconvert(plugin);
  ok &= weave_register_weavedecode(plugin);
  return ok;
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, weave, "Neural-network inference in pipelines",
                  plugin_init, WEAVE_VERSION, "MIT", GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
