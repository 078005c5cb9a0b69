// Registration entry points of the plugin's elements (plugin.cpp calls each one), and what the
// elements share about their GObject enums.
#pragma once

#include <gst/gst.h>

// The nick of `value` in the registered enum `type` (the name weave's core knows a mode or codec
// by), or `fallback` for a value the enum lacks. The class of a static enum is never freed, so
// the string lives as long as the process.
static inline const char* weave_enum_nick(GType type, int value, const char* fallback) {
  GEnumClass* klass = G_ENUM_CLASS(g_type_class_ref(type));
  GEnumValue* v = g_enum_get_value(klass, value);
  const char* nick = v != NULL ? v->value_nick : fallback;
  g_type_class_unref(klass);
  return nick;
}

G_BEGIN_DECLS

gboolean weave_register_weaveinfer(GstPlugin* plugin);
gboolean weave_register_weaveconvert(GstPlugin* plugin);
gboolean weave_register_weavedecode(GstPlugin* plugin);
gboolean weave_register_weavemeta(GstPlugin* plugin);
gboolean weave_register_weaveoverlay(GstPlugin* plugin);

G_END_DECLS
