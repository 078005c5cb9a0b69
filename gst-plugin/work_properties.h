// The read-only `frames` and `mean-ms` properties of an element that counts its work in a
// weave::stream::WorkTime: installed and read the same way by each.
#pragma once

#include <gst/gst.h>

#include "core/stream/work_time.h"

namespace weave::gst {

// Installs `frames` (frames since start) and `mean-ms` (mean milliseconds per frame spent on
// `what`, e.g. "drawing").
inline void install_work_properties(GObjectClass* klass, guint frames_id, guint mean_ms_id,
                                    const char* frames_blurb, const char* mean_ms_blurb) {
  const auto ro = static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_property(
      klass, frames_id, g_param_spec_uint64("frames", "Frames", frames_blurb, 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property(
      klass, mean_ms_id, g_param_spec_double("mean-ms", "Mean time", mean_ms_blurb, 0, G_MAXDOUBLE, 0, ro));
}

// Sets `value` when `prop_id` is one of the two; false otherwise. Lock-free: WorkTime's
// counters are atomic.
inline bool get_work_property(const stream::WorkTime& work, guint prop_id, guint frames_id, guint mean_ms_id,
                              GValue* value) {
  if (prop_id == frames_id) {
    g_value_set_uint64(value, work.frames());
    return true;
  }
  if (prop_id == mean_ms_id) {
    g_value_set_double(value, work.mean_ms());
    return true;
  }
  return false;
}

}  // namespace weave::gst
