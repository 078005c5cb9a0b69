// The `weave` plugin: one register function per element (declared in elements.h), each in its
// element's own file.
#include <gst/gst.h>

#include "gst-plugin/elements.h"

static gboolean plugin_init(GstPlugin* plugin) {
  gboolean ok = weave_register_weaveinfer(plugin);
  ok = weave_register_weaveconvert(plugin) && ok;
  ok = weave_register_weavedecode(plugin) && ok;
  ok = weave_register_weavemeta(plugin) && ok;
  ok = weave_register_weaveoverlay(plugin) && ok;
  return ok;
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, weave, "Weave neural-network inference elements",
                  plugin_init, WEAVE_VERSION, "MIT", GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
