// Shared helpers for the vision element tests: GStreamer set-up and RAII for harnesses.
#pragma once

#include <gst/check/gstharness.h>
#include <gst/gst.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <string>
#include <vector>

struct GstSetup {
  GstSetup() { gst_init(nullptr, nullptr); }
};

struct Harness {
  GstHarness* h;
  explicit Harness(GstHarness* harness) : h(harness) {}
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;
  ~Harness() { gst_harness_teardown(h); }
  GstHarness* operator->() const { return h; }
  operator GstHarness*() const { return h; }  // NOLINT: used as a handle
};

inline std::vector<float> floats_of(GstBuffer* buf) {
  GstMapInfo map;
  BOOST_TEST_REQUIRE(gst_buffer_map(buf, &map, GST_MAP_READ));
  std::vector<float> v(map.size / sizeof(float));
  std::memcpy(v.data(), map.data, v.size() * sizeof(float));
  gst_buffer_unmap(buf, &map);
  return v;
}

// Caps equality regardless of field order.
inline bool same_caps(const std::string& got, const char* want) {
  GstCaps* a = gst_caps_from_string(got.c_str());
  GstCaps* b = gst_caps_from_string(want);
  const bool eq = a != nullptr && b != nullptr && gst_caps_is_equal(a, b);
  if (a) gst_caps_unref(a);
  if (b) gst_caps_unref(b);
  return eq;
}

inline std::string caps_string(GstCaps* caps) {
  gchar* s = gst_caps_to_string(caps);
  std::string out = s;
  g_free(s);
  return out;
}
