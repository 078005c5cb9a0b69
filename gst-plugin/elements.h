// Registration entry points of the plugin's elements; plugin.cpp calls each one.
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

gboolean weave_register_weaveinfer(GstPlugin* plugin);
gboolean weave_register_weaveconvert(GstPlugin* plugin);
gboolean weave_register_weavedecode(GstPlugin* plugin);

G_END_DECLS
