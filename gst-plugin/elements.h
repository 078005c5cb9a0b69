// The plugin's elements, each defined with GST_ELEMENT_REGISTER_DEFINE in its own file and
// registered by plugin.cpp, and what the elements share about their GObject enums.
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

GST_ELEMENT_REGISTER_DECLARE(weaveinfer);
GST_ELEMENT_REGISTER_DECLARE(weaveconvert);
GST_ELEMENT_REGISTER_DECLARE(weavedecode);
GST_ELEMENT_REGISTER_DECLARE(weavemeta);
GST_ELEMENT_REGISTER_DECLARE(weaveoverlay);
GST_ELEMENT_REGISTER_DECLARE(weavetrack);
GST_ELEMENT_REGISTER_DECLARE(weavepublish);
