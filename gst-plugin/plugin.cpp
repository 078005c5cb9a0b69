// The `weave` plugin: registers every element (declared in elements.h). Loading fails if any
// element cannot be registered.
#include <gst/gst.h>

#include "gst-plugin/elements.h"

static gboolean plugin_init(GstPlugin* plugin) {
  gboolean ok = GST_ELEMENT_REGISTER(weaveinfer, plugin);
  ok = GST_ELEMENT_REGISTER(weaveconvert, plugin) && ok;
  ok = GST_ELEMENT_REGISTER(weavedecode, plugin) && ok;
  ok = GST_ELEMENT_REGISTER(weavemeta, plugin) && ok;
  ok = GST_ELEMENT_REGISTER(weaveoverlay, plugin) && ok;
  ok = GST_ELEMENT_REGISTER(weavetrack, plugin) && ok;
  ok = GST_ELEMENT_REGISTER(weavepublish, plugin) && ok;
  return ok;
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, weave, "Weave neural-network inference elements",
                  plugin_init, WEAVE_VERSION, "MIT", GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
