// What the weaveinfer tests (GstCheck + GstHarness) share: the models scripts/make_test_models.py
// writes into WEAVE_GST_MODELS, weaveinfer elements made from them, float tensors in and out of
// buffers, the reference of matmul_dyn.onnx and the error messages on a bus.
// Include it after the C++ headers a test needs: gstcheck.h's macros (fail, ...) clash with the
// C++ streams.
#pragma once

// clang-format off
#include <cstddef>
#include <string>
#include <vector>

#include <gst/check/gstcheck.h>
// clang-format on

// A model of WEAVE_GST_MODELS by file name.
inline std::string model_path(const char* name) {
  const char* d = g_getenv("WEAVE_GST_MODELS");
  return std::string(d != nullptr ? d : ".") + "/" + name;
}

// A weaveinfer running `model` (a path); `cache_dir` is set first (setting model loads it).
inline GstElement* make_infer(const std::string& model, const char* cache_dir = nullptr) {
  GstElement* e = gst_element_factory_make("weaveinfer", nullptr);
  fail_unless(e != nullptr, "weaveinfer not found (GST_PLUGIN_PATH?)");
  if (cache_dir != nullptr) g_object_set(e, "cache-dir", cache_dir, nullptr);
  g_object_set(e, "model", model.c_str(), nullptr);
  return e;
}

// A buffer of `v` at `pts`, one frame of 30 per second long.
inline GstBuffer* float_buffer(const std::vector<float>& v, GstClockTime pts) {
  GstBuffer* b = gst_buffer_new_allocate(nullptr, v.size() * sizeof(float), nullptr);
  gst_buffer_fill(b, 0, v.data(), v.size() * sizeof(float));
  GST_BUFFER_PTS(b) = pts;
  GST_BUFFER_DURATION(b) = GST_SECOND / 30;
  return b;
}

inline std::vector<float> floats_of(GstBuffer* b) {
  std::vector<float> v(gst_buffer_get_size(b) / sizeof(float));
  gst_buffer_extract(b, 0, v.data(), v.size() * sizeof(float));
  return v;
}

// x @ (scale * W) for rows of 4, W[i][j] = i + j (matmul_dyn.onnx: scale 1, matmul_dyn2.onnx: 2).
inline std::vector<float> matmul_ref(const std::vector<float>& x, float scale = 1.0f) {
  std::vector<float> y(x.size() / 4 * 3, 0.f);
  for (std::size_t r = 0; r < x.size() / 4; ++r)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 4; ++i) y[r * 3 + j] += x[r * 4 + i] * scale * static_cast<float>(i + j);
  return y;
}

inline guint64 prop_u64(GstElement* e, const char* name) {
  guint64 v = 0;
  g_object_get(e, name, &v, nullptr);
  return v;
}

// "element: message | debug" of an error message, which it takes.
inline std::string take_error(GstMessage* m) {
  GError* err = nullptr;
  gchar* dbg = nullptr;
  gst_message_parse_error(m, &err, &dbg);
  std::string s =
      std::string(GST_OBJECT_NAME(m->src)) + ": " + err->message + " | " + (dbg != nullptr ? dbg : "") + "\n";
  g_error_free(err);
  g_free(dbg);
  gst_message_unref(m);
  return s;
}

// Every error message waiting on the bus, in order, joined (a refused sticky event is retried
// and may post the same error more than once).
inline std::string error_text(GstBus* bus) {
  std::string all;
  while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) all += take_error(m);
  return all;
}
