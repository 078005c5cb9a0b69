// Helpers shared by the GStreamer benchmark programs in bench/ (bench_gst_instances,
// bench_pipeline). Benchmarks only: errors end the program (die), they are not values.
#pragma once

#include <gst/gst.h>

#include <string>

#include "bench/bench_util.h"

namespace weave::bench {

// Bytes of one buffer for caps "tensor/x-raw,dtype=float32,shape=<...>"; `program` names the
// caller in the message when the caps are not that.
inline std::size_t float_tensor_bytes(const std::string& caps_text, const std::string& program) {
  GstCaps* caps = gst_caps_from_string(caps_text.c_str());
  if (!caps || gst_caps_get_size(caps) != 1) die(program + ": bad caps '" + caps_text + "'");
  const GValue* shape = gst_structure_get_value(gst_caps_get_structure(caps, 0), "shape");
  if (!shape || !GST_VALUE_HOLDS_ARRAY(shape)) die(program + ": caps need shape=(int)<...>");
  std::size_t n = 4;  // float32
  for (guint i = 0; i < gst_value_array_get_size(shape); ++i)
    n *= static_cast<std::size_t>(g_value_get_int(gst_value_array_get_value(shape, i)));
  gst_caps_unref(caps);
  return n;
}

}  // namespace weave::bench
