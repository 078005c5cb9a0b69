// weaveinfer element tests (GstCheck + GstHarness). Models come from
// scripts/make_test_models.py (WEAVE_GST_MODELS); resnet18 from the model export (WEAVE_MODELS_DIR).
// Before gstcheck.h, whose macros (fail, ...) clash with the C++ streams these headers use.
// clang-format off
#include "caps/tensor_origin.h"
// clang-format on

#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstharness.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/gst/gst_test_helpers.h"

static gboolean has_pad(GstElement* e, const char* name) {
  GstPad* p = gst_element_get_static_pad(e, name);
  if (p != nullptr) gst_object_unref(p);
  return p != nullptr;
}

GST_START_TEST(test_pads_from_model) {
  GstElement* e = make_infer(model_path("two_outputs.onnx"));
  fail_unless(has_pad(e, "sink_x"));
  fail_unless(has_pad(e, "src_logits"));
  fail_unless(has_pad(e, "src_probs"));
  fail_unless_equals_int(e->numpads, 3);
  // Sanitized names: "Input.1" -> sink_input_1, "Scores" -> src_scores.
  g_object_set(e, "model", model_path("matmul_dyn.onnx").c_str(), nullptr);
  fail_unless(has_pad(e, "sink_input_1"));
  fail_unless(has_pad(e, "src_scores"));
  fail_if(has_pad(e, "src_logits"));
  fail_unless_equals_int(e->numpads, 2);
  // Sink caps: the model's dtype and shape, dynamic batch as a range, no name constraint.
  GstPad* sink = gst_element_get_static_pad(e, "sink_input_1");
  GstCaps* caps = gst_pad_query_caps(sink, nullptr);
  gchar* s = gst_caps_to_string(caps);
  fail_unless_equals_string(s, "tensor/x-raw, dtype=(string)float32, shape=(int)< [ 1, 2147483647 ], 4 >");
  g_free(s);
  gst_caps_unref(caps);
  gst_object_unref(sink);
  GstPad* src = gst_element_get_static_pad(e, "src_scores");
  caps = gst_pad_query_caps(src, nullptr);
  s = gst_caps_to_string(caps);
  fail_unless_equals_string(
      s, "tensor/x-raw, name=(string)Scores, dtype=(string)float32, shape=(int)< [ 1, 2147483647 ], 3 >");
  g_free(s);
  gst_caps_unref(caps);
  gst_object_unref(src);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_negotiation_and_values) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<2,4>");
  gst_harness_play(h);
  fail_unless_equals_int(gst_harness_push(h, float_buffer({1, 2, 3, 4, 0, 0, 0, 1}, 5 * GST_SECOND)),
                         GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  fail_unless(out != nullptr);
  // x @ W with W[i][j] = i + j.
  std::vector<float> y = floats_of(out);
  std::vector<float> want{20, 30, 40, 3, 4, 5};
  fail_unless(y == want);
  fail_unless_equals_uint64(GST_BUFFER_PTS(out), 5 * GST_SECOND);
  fail_unless_equals_uint64(GST_BUFFER_DURATION(out), GST_SECOND / 30);
  gst_buffer_unref(out);
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  gchar* s = gst_caps_to_string(caps);
  fail_unless_equals_string(s,
                            "tensor/x-raw, name=(string)Scores, dtype=(string)float32, shape=(int)< 2, 3 >");
  g_free(s);
  gst_caps_unref(caps);
  guint64 processed = 0;
  double mean = -1, last = -1;
  g_object_get(e, "frames-processed", &processed, "mean-inference-ms", &mean, "last-inference-ms", &last,
               nullptr);
  fail_unless_equals_uint64(processed, 1);
  fail_unless(mean >= 0 && last >= 0 && std::fabs(mean - last) < 1e-9);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_negotiation_mismatch) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<1,5>");
  gst_harness_play(h);
  fail_unless_equals_int(gst_harness_push(h, float_buffer({1, 2, 3, 4, 5}, 0)), GST_FLOW_NOT_NEGOTIATED);
  std::string err = error_text(bus);
  fail_unless(err.find("pad sink_input_1: caps shape <1,5> does not fit model input 'Input.1' float32[") !=
                  std::string::npos,
              "%s", err.c_str());
  fail_unless(err.find("float32[batch,4]") != std::string::npos, "%s", err.c_str());
  // Wrong dtype.
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=uint8, shape=(int)<1,4>");
  fail_unless_equals_int(gst_harness_push(h, gst_buffer_new_allocate(nullptr, 4, nullptr)),
                         GST_FLOW_NOT_NEGOTIATED);
  err = error_text(bus);
  fail_unless(err.find("caps dtype uint8 does not fit model input 'Input.1'") != std::string::npos, "%s",
              err.c_str());
  gst_harness_teardown(h);
  gst_element_set_bus(e, nullptr);
  gst_object_unref(bus);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_buffer_size_checked) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  gst_harness_play(h);
  fail_unless_equals_int(gst_harness_push(h, float_buffer({1, 2, 3}, 0)), GST_FLOW_ERROR);
  std::string err = error_text(bus);
  fail_unless(err.find("buffer of 12 bytes, but caps float32 <1,4> need 16 bytes") != std::string::npos, "%s",
              err.c_str());
  gst_harness_teardown(h);
  gst_element_set_bus(e, nullptr);
  gst_object_unref(bus);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_properties) {
  GstElement* e = gst_element_factory_make("weaveinfer", nullptr);
  gchar* model = nullptr;
  gchar* fid = nullptr;
  g_object_get(e, "model", &model, "factory-id", &fid, nullptr);
  fail_unless(model == nullptr && fid == nullptr);
  gint threads = -1, qs = -1, leaky = -1, comp = -1;
  g_object_get(e, "threads", &threads, "queue-size", &qs, "leaky", &leaky, "compression", &comp, nullptr);
  fail_unless_equals_int(threads, 0);
  fail_unless_equals_int(qs, 4);
  fail_unless_equals_int(leaky, 0);
#ifdef WEAVE_HAVE_ZSTD
  fail_unless_equals_int(comp, 5);  // zstd-planes, the default codec
#else
  fail_unless_equals_int(comp, 4);  // zlib-planes, the default without zstd
#endif
  gst_util_set_object_arg(G_OBJECT(e), "compression", "zstd");
  gst_util_set_object_arg(G_OBJECT(e), "leaky", "downstream");
  g_object_set(e, "threads", 2, "queue-size", 9, "cache-dir", "/tmp/somewhere", nullptr);
  gchar* dir = nullptr;
  g_object_get(e, "threads", &threads, "queue-size", &qs, "leaky", &leaky, "compression", &comp, "cache-dir",
               &dir, nullptr);
  fail_unless_equals_int(threads, 2);
  fail_unless_equals_int(qs, 9);
  fail_unless_equals_int(leaky, 2);
  fail_unless_equals_int(comp, 3);
  fail_unless_equals_string(dir, "/tmp/somewhere");
  g_free(dir);
  // Default cache dir follows XDG_CACHE_HOME.
  g_object_set(e, "cache-dir", nullptr, nullptr);
  g_object_get(e, "cache-dir", &dir, nullptr);
  std::string want = std::string(g_getenv("XDG_CACHE_HOME")) + "/weave";
  fail_unless_equals_string(dir, want.c_str());
  g_free(dir);
  g_object_set(e, "model", model_path("square.onnx").c_str(), nullptr);
  g_object_get(e, "model", &model, "factory-id", &fid, nullptr);
  std::string square = model_path("square.onnx");
  fail_unless_equals_string(model, square.c_str());
  fail_unless(fid != nullptr && fid[0] == '0');
  g_free(model);
  g_free(fid);
  guint64 n = 1;
  g_object_get(e, "frames-processed", &n, nullptr);
  fail_unless_equals_uint64(n, 0);
  g_object_get(e, "frames-dropped", &n, nullptr);
  fail_unless_equals_uint64(n, 0);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_multi_input_gathers_by_timestamp) {
  GstElement* e = make_infer(model_path("two_inputs.onnx"));
  GstHarness* ha = gst_harness_new_with_element(e, "sink_a", "src_y");
  GstHarness* hb = gst_harness_new_with_element(e, "sink_b", nullptr);
  gst_harness_set_src_caps_str(ha, "tensor/x-raw, dtype=float32, shape=(int)<2,3>");
  gst_harness_set_src_caps_str(hb, "tensor/x-raw, dtype=float32, shape=(int)<3,2>");
  gst_harness_play(ha);
  gst_harness_play(hb);
  std::vector<float> a{1, 2, 3, 4, 5, 6};
  std::vector<float> b{1, 0, 0, 1, 1, 1};
  fail_unless_equals_int(gst_harness_push(ha, float_buffer(a, 0)), GST_FLOW_OK);
  fail_unless_equals_int(gst_harness_push(hb, float_buffer(b, 0)), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(ha);
  fail_unless(out != nullptr);
  fail_unless(floats_of(out) == (std::vector<float>{4, 5, 10, 11}));
  fail_unless_equals_uint64(GST_BUFFER_PTS(out), 0);
  gst_buffer_unref(out);
  // A at pts=1 alone: nothing until B at pts=1 arrives.
  fail_unless_equals_int(gst_harness_push(ha, float_buffer(a, 1 * GST_SECOND)), GST_FLOW_OK);
  g_usleep(200 * 1000);
  fail_unless(gst_harness_try_pull(ha) == nullptr);
  fail_unless_equals_int(gst_harness_push(hb, float_buffer({0, 0, 0, 0, 0, 1}, 1 * GST_SECOND)), GST_FLOW_OK);
  out = gst_harness_pull(ha);
  fail_unless(out != nullptr);
  fail_unless(floats_of(out) == (std::vector<float>{0, 3, 0, 6}));
  fail_unless_equals_uint64(GST_BUFFER_PTS(out), GST_SECOND);
  gst_buffer_unref(out);
  // A at 5 never gets a partner: when 6 completes, it is dropped and counted.
  fail_unless_equals_int(gst_harness_push(ha, float_buffer(a, 5 * GST_SECOND)), GST_FLOW_OK);
  fail_unless_equals_int(gst_harness_push(ha, float_buffer(a, 6 * GST_SECOND)), GST_FLOW_OK);
  fail_unless_equals_int(gst_harness_push(hb, float_buffer(b, 6 * GST_SECOND)), GST_FLOW_OK);
  out = gst_harness_pull(ha);
  fail_unless(out != nullptr);
  fail_unless_equals_uint64(GST_BUFFER_PTS(out), 6 * GST_SECOND);
  gst_buffer_unref(out);
  guint64 processed = 0, dropped = 0;
  g_object_get(e, "frames-processed", &processed, "frames-dropped", &dropped, nullptr);
  fail_unless_equals_uint64(processed, 3);
  fail_unless_equals_uint64(dropped, 1);
  gst_harness_teardown(hb);
  gst_harness_teardown(ha);
  gst_object_unref(e);
}
GST_END_TEST;

static bool got_eos(GstHarness* h) {
  GstEvent* ev;
  bool eos = false;
  while ((ev = gst_harness_try_pull_event(h)) != nullptr) {
    eos = eos || GST_EVENT_TYPE(ev) == GST_EVENT_EOS;
    gst_event_unref(ev);
  }
  return eos;
}

GST_START_TEST(test_two_outputs_and_eos_on_every_src) {
  GstElement* e = make_infer(model_path("two_outputs.onnx"));
  GstHarness* h = gst_harness_new_with_element(e, "sink_x", "src_logits");
  GstHarness* hp = gst_harness_new_with_element(e, nullptr, "src_probs");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  gst_harness_play(h);
  gst_harness_play(hp);
  fail_unless_equals_int(gst_harness_push(h, float_buffer({1, 2, 3, 4}, 0)), GST_FLOW_OK);
  GstBuffer* logits = gst_harness_pull(h);
  GstBuffer* probs = gst_harness_pull(hp);
  fail_unless(logits != nullptr && probs != nullptr);
  fail_unless(floats_of(logits) == (std::vector<float>{20, 30, 40}));
  std::vector<float> p = floats_of(probs);
  fail_unless_equals_int(p.size(), 4);
  double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0);
  for (int i = 0; i < 4; ++i) fail_unless(std::fabs(p[i] - std::exp(i + 1.0) / z) < 1e-6);
  gst_buffer_unref(logits);
  gst_buffer_unref(probs);
  fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
  // EOS goes out on both src pads once the queue has drained.
  for (int i = 0; i < 100 && gst_harness_events_received(hp) == 0; ++i) g_usleep(10 * 1000);
  g_usleep(50 * 1000);
  fail_unless(got_eos(h));
  fail_unless(got_eos(hp));
  gst_harness_teardown(hp);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_flush) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  gst_harness_play(h);
  fail_unless_equals_int(gst_harness_push(h, float_buffer({1, 0, 0, 0}, 0)), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  fail_unless(out != nullptr);
  gst_buffer_unref(out);
  fail_unless(gst_harness_push_event(h, gst_event_new_flush_start()));
  fail_unless_equals_int(gst_harness_push(h, float_buffer({1, 0, 0, 0}, GST_SECOND)), GST_FLOW_FLUSHING);
  fail_unless(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
  GstSegment seg;
  gst_segment_init(&seg, GST_FORMAT_TIME);
  fail_unless(gst_harness_push_event(h, gst_event_new_segment(&seg)));
  fail_unless_equals_int(gst_harness_push(h, float_buffer({0, 1, 0, 0}, 2 * GST_SECOND)), GST_FLOW_OK);
  out = gst_harness_pull(h);
  fail_unless(out != nullptr);
  fail_unless(floats_of(out) == (std::vector<float>{1, 2, 3}));
  fail_unless_equals_uint64(GST_BUFFER_PTS(out), 2 * GST_SECOND);
  gst_buffer_unref(out);
  // Downstream saw both flush events.
  bool start = false, stop = false;
  GstEvent* ev;
  while ((ev = gst_harness_try_pull_event(h)) != nullptr) {
    start = start || GST_EVENT_TYPE(ev) == GST_EVENT_FLUSH_START;
    stop = stop || GST_EVENT_TYPE(ev) == GST_EVENT_FLUSH_STOP;
    gst_event_unref(ev);
  }
  fail_unless(start && stop);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_bad_model_path) {
  GstElement* e = gst_element_factory_make("weaveinfer", nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  ASSERT_WARNING(g_object_set(e, "model", "/nonexistent/dir/missing.onnx", nullptr));
  fail_unless_equals_int(e->numpads, 0);
  fail_unless_equals_int(gst_element_set_state(e, GST_STATE_READY), GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  std::string err = error_text(bus);
  fail_unless(err.find("/nonexistent/dir/missing.onnx") != std::string::npos, "%s", err.c_str());
  // A corrupt model: same, no crash.
  gchar* path = g_build_filename(g_get_tmp_dir(), "weave-corrupt.onnx", nullptr);
  fail_unless(g_file_set_contents(path, "\x08\x07garbage, not protobuf", -1, nullptr));
  gst_element_set_state(e, GST_STATE_NULL);
  ASSERT_WARNING(g_object_set(e, "model", path, nullptr));
  fail_unless_equals_int(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  err = error_text(bus);
  fail_unless(err.find(path) != std::string::npos, "%s", err.c_str());
  g_unlink(path);
  g_free(path);
  gst_element_set_state(e, GST_STATE_NULL);
  gst_element_set_bus(e, nullptr);
  gst_object_unref(bus);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_instances_share_one_factory) {
  GstElement* a = make_infer(model_path("matmul_dyn.onnx"));
  GstElement* b = make_infer(model_path("matmul_dyn.onnx"));
  GstElement* c = make_infer(model_path("square.onnx"));
  gchar *fa = nullptr, *fb = nullptr, *fc = nullptr;
  g_object_get(a, "factory-id", &fa, nullptr);
  g_object_get(b, "factory-id", &fb, nullptr);
  g_object_get(c, "factory-id", &fc, nullptr);
  fail_unless(fa != nullptr && fc != nullptr);
  fail_unless_equals_string(fa, fb);
  fail_if(g_str_equal(fa, fc));
  g_free(fa);
  g_free(fb);
  g_free(fc);
  gst_object_unref(a);
  gst_object_unref(b);
  gst_object_unref(c);
}
GST_END_TEST;

static std::vector<float> run_once(GstElement* e, std::vector<float> in) {
  GstHarness* h = gst_harness_new_with_element(e, "sink_x", "src_logits");
  GstHarness* hp = gst_harness_new_with_element(e, nullptr, "src_probs");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  gst_harness_play(h);
  gst_harness_play(hp);
  fail_unless_equals_int(gst_harness_push(h, float_buffer(in, 0)), GST_FLOW_OK);
  GstBuffer* l = gst_harness_pull(h);
  GstBuffer* p = gst_harness_pull(hp);
  fail_unless(l != nullptr && p != nullptr);
  std::vector<float> out = floats_of(l);
  std::vector<float> probs = floats_of(p);
  out.insert(out.end(), probs.begin(), probs.end());
  gst_buffer_unref(l);
  gst_buffer_unref(p);
  gst_harness_teardown(hp);
  gst_harness_teardown(h);
  return out;
}

GST_START_TEST(test_compiled_cache_matches_direct) {
  gchar* dir = g_dir_make_tmp("weave-cache-XXXXXX", nullptr);
  fail_unless(dir != nullptr);
  GstElement* cached = gst_element_factory_make("weaveinfer", nullptr);
  g_object_set(cached, "cache-dir", dir, nullptr);
  gst_util_set_object_arg(G_OBJECT(cached), "compression", "none");
  g_object_set(cached, "model", model_path("two_outputs.onnx").c_str(), nullptr);
  gchar* artifact = nullptr;
  g_object_get(cached, "artifact", &artifact, nullptr);
  fail_unless(artifact != nullptr);
  fail_unless(g_str_has_prefix(artifact, dir) && g_str_has_suffix(artifact, ".weave"), "%s", artifact);
  fail_unless(g_file_test(artifact, G_FILE_TEST_IS_REGULAR));

  GstElement* direct = make_infer(model_path("two_outputs.onnx"), "");  // cache disabled: compiled in memory
  gchar* none = nullptr;
  g_object_get(direct, "artifact", &none, nullptr);
  fail_unless(none == nullptr);
  GstElement* from_artifact = gst_element_factory_make("weaveinfer", nullptr);
  g_object_set(from_artifact, "model", artifact, nullptr);

  std::vector<float> x{0.5f, -1.25f, 3.0f, 2.0f};
  std::vector<float> r1 = run_once(cached, x);
  std::vector<float> r2 = run_once(direct, x);
  std::vector<float> r3 = run_once(from_artifact, x);
  fail_unless_equals_int(r1.size(), 7);
  fail_unless(std::memcmp(r1.data(), r2.data(), r1.size() * sizeof(float)) == 0);
  fail_unless(std::memcmp(r1.data(), r3.data(), r1.size() * sizeof(float)) == 0);

  // Changing the compression makes a second cache entry when going to PAUSED.
  gst_util_set_object_arg(G_OBJECT(cached), "compression", "zstd");
  std::vector<float> r4 = run_once(cached, x);
  fail_unless(std::memcmp(r1.data(), r4.data(), r1.size() * sizeof(float)) == 0);
  gchar* artifact2 = nullptr;
  g_object_get(cached, "artifact", &artifact2, nullptr);
  fail_unless(artifact2 != nullptr && !g_str_equal(artifact, artifact2));
  fail_unless(g_file_test(artifact2, G_FILE_TEST_IS_REGULAR));
  g_unlink(artifact);
  g_unlink(artifact2);
  g_rmdir(dir);
  g_free(artifact);
  g_free(artifact2);
  g_free(dir);
  gst_object_unref(cached);
  gst_object_unref(direct);
  gst_object_unref(from_artifact);
}
GST_END_TEST;

GST_START_TEST(test_model_change_refused_while_running) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  gst_harness_play(h);
  ASSERT_WARNING(g_object_set(e, "model", model_path("square.onnx").c_str(), nullptr));
  gchar* model = nullptr;
  g_object_get(e, "model", &model, nullptr);
  std::string mm = model_path("matmul_dyn.onnx");
  fail_unless_equals_string(model, mm.c_str());
  g_free(model);
  fail_unless(has_pad(e, "src_scores"));
  // Still runs the old model.
  fail_unless_equals_int(gst_harness_push(h, float_buffer({0, 0, 0, 1}, 0)), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  fail_unless(out != nullptr);
  fail_unless(floats_of(out) == (std::vector<float>{3, 4, 5}));
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_state_cycles) {
  GstElement* e = make_infer(model_path("two_outputs.onnx"));
  static const GstState seq[] = {GST_STATE_READY, GST_STATE_PLAYING, GST_STATE_NULL,   GST_STATE_PAUSED,
                                 GST_STATE_READY, GST_STATE_PLAYING, GST_STATE_PAUSED, GST_STATE_NULL};
  for (int round = 0; round < 3; ++round)
    for (GstState s : seq) fail_if(gst_element_set_state(e, s) == GST_STATE_CHANGE_FAILURE);
  gst_object_unref(e);
}
GST_END_TEST;

// Four chained instances over hundreds of buffers: square.onnx rotates a 4-vector by one, so
// four of them give back the input exactly.
GST_START_TEST(test_pipeline_four_elements) {
  std::string m = model_path("square.onnx");
  std::string desc =
      "appsrc name=src format=time caps=\"tensor/x-raw,dtype=float32,shape=(int)<1,4>\" ! "
      "weaveinfer name=w1 model=" +
      m + " ! weaveinfer model=" + m +
      " threads=1 ! queue ! "
      "weaveinfer model=" +
      m + " queue-size=2 ! weaveinfer name=w4 model=" + m +
      " ! appsink name=sink sync=false max-buffers=1000";
  GError* err = nullptr;
  GstElement* pipe = gst_parse_launch(desc.c_str(), &err);
  fail_unless(pipe != nullptr && err == nullptr, "%s", err ? err->message : "");
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipe), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipe), "sink");
  fail_unless(gst_element_set_state(pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  const int n = 300;
  for (int i = 0; i < n; ++i) {
    float f = static_cast<float>(i);
    fail_unless_equals_int(
        gst_app_src_push_buffer(GST_APP_SRC(src), float_buffer({f, f + 1, f + 2, f + 3}, i * GST_MSECOND)),
        GST_FLOW_OK);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  int got = 0;
  for (;;) {
    GstSample* s = gst_app_sink_pull_sample(GST_APP_SINK(sink));
    if (s == nullptr) break;
    GstBuffer* b = gst_sample_get_buffer(s);
    float f = static_cast<float>(got);
    fail_unless(floats_of(b) == (std::vector<float>{f, f + 1, f + 2, f + 3}), "buffer %d", got);
    fail_unless_equals_uint64(GST_BUFFER_PTS(b), got * GST_MSECOND);
    gst_sample_unref(s);
    ++got;
  }
  fail_unless_equals_int(got, n);
  fail_unless(gst_app_sink_is_eos(GST_APP_SINK(sink)));
  GstBus* bus = gst_element_get_bus(pipe);
  GstMessage* msg = gst_bus_timed_pop_filtered(
      bus, 10 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  fail_unless(msg != nullptr && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS);
  gst_message_unref(msg);
  GstElement* w4 = gst_bin_get_by_name(GST_BIN(pipe), "w4");
  guint64 processed = 0, dropped = 0;
  g_object_get(w4, "frames-processed", &processed, "frames-dropped", &dropped, nullptr);
  fail_unless_equals_uint64(processed, n);
  fail_unless_equals_uint64(dropped, 0);
  gst_object_unref(w4);
  gst_object_unref(bus);
  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipe);
}
GST_END_TEST;

// A real model: resnet18 from the project's model export, three frames through a pipeline.
GST_START_TEST(test_pipeline_resnet18) {
  const char* dir = g_getenv("WEAVE_MODELS_DIR");
  std::string model = std::string(dir != nullptr ? dir : "") + "/resnet18.onnx";
  if (!g_file_test(model.c_str(), G_FILE_TEST_IS_REGULAR)) {
    GST_WARNING("skipping: %s not found", model.c_str());
    return;
  }
  std::string desc =
      "appsrc name=src format=time caps=\"tensor/x-raw,dtype=float32,shape=(int)<1,3,224,224>\" ! "
      "weaveinfer name=net model=" +
      model + " ! appsink name=sink sync=false";
  GError* err = nullptr;
  GstElement* pipe = gst_parse_launch(desc.c_str(), &err);
  fail_unless(pipe != nullptr && err == nullptr, "%s", err ? err->message : "");
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipe), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipe), "sink");
  fail_unless(gst_element_set_state(pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (int i = 0; i < 3; ++i) {
    std::vector<float> img(3 * 224 * 224);
    for (std::size_t k = 0; k < img.size(); ++k)
      img[k] = static_cast<float>((k * 7 + i) % 255) / 255.0f - 0.5f;
    fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), float_buffer(img, i * GST_SECOND)),
                           GST_FLOW_OK);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  int got = 0;
  while (GstSample* s = gst_app_sink_pull_sample(GST_APP_SINK(sink))) {
    GstCaps* caps = gst_sample_get_caps(s);
    gchar* c = gst_caps_to_string(caps);
    fail_unless(g_strrstr(c, "shape=(int)< 1, 1000 >") != nullptr, "%s", c);
    g_free(c);
    std::vector<float> y = floats_of(gst_sample_get_buffer(s));
    fail_unless_equals_int(y.size(), 1000);
    for (float v : y) fail_unless(std::isfinite(v));
    gst_sample_unref(s);
    ++got;
  }
  fail_unless_equals_int(got, 3);
  GstBus* bus = gst_element_get_bus(pipe);
  GstMessage* msg = gst_bus_timed_pop_filtered(
      bus, 10 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  fail_unless(msg != nullptr && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS);
  gst_message_unref(msg);
  gst_object_unref(bus);
  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipe);
}
GST_END_TEST;

// Caps may change while earlier buffers still wait in the queue (weaveconvert mode=rois sends a
// batch of another size every frame): each buffer runs with the dims its own caps gave.
GST_START_TEST(test_caps_change_while_buffers_wait) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  // The task blocks in its push until the test pulls: later buffers pile up in the queue.
  gst_harness_set_blocking_push_mode(h);
  gst_harness_play(h);
  for (int rows = 1; rows <= 3; ++rows) {
    gchar* caps = g_strdup_printf("tensor/x-raw, dtype=float32, shape=(int)<%d,4>", rows);
    gst_harness_set_src_caps_str(h, caps);
    g_free(caps);
    std::vector<float> x(static_cast<std::size_t>(rows) * 4, 0.0f);
    for (int r = 0; r < rows; ++r) x[static_cast<std::size_t>(r) * 4 + 3] = static_cast<float>(r + 1);
    fail_unless_equals_int(gst_harness_push(h, float_buffer(x, rows * GST_SECOND)), GST_FLOW_OK);
  }
  for (int rows = 1; rows <= 3; ++rows) {
    GstBuffer* out = gst_harness_pull(h);
    fail_unless(out != nullptr);
    // Row r is (0,0,0,r+1) @ W = (r+1) * (3,4,5).
    std::vector<float> want;
    for (int r = 0; r < rows; ++r)
      for (float w : {3.0f, 4.0f, 5.0f}) want.push_back(w * static_cast<float>(r + 1));
    fail_unless(floats_of(out) == want, "output for %d rows", rows);
    fail_unless_equals_uint64(GST_BUFFER_PTS(out), rows * GST_SECOND);
    gst_buffer_unref(out);
  }
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

// Several buffers with one timestamp (batches of crops of one frame) each run: a model of one
// input has nothing to gather.
GST_START_TEST(test_buffers_sharing_a_timestamp_all_run) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  gst_harness_play(h);
  for (int k = 1; k <= 3; ++k)
    fail_unless_equals_int(gst_harness_push(h, float_buffer({0, 0, 0, static_cast<float>(k)}, GST_SECOND)),
                           GST_FLOW_OK);
  for (int k = 1; k <= 3; ++k) {
    GstBuffer* out = gst_harness_pull(h);
    fail_unless(out != nullptr);
    fail_unless(floats_of(out) == (std::vector<float>{3.0f * k, 4.0f * k, 5.0f * k}));
    gst_buffer_unref(out);
  }
  guint64 dropped = 1;
  g_object_get(e, "frames-dropped", &dropped, nullptr);
  fail_unless_equals_uint64(dropped, 0);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

// A frame without data upstream (a GAP event, e.g. no region to crop) goes out on every src pad
// in its place; stream metas of the input (untagged, like the tensor origin) go onto the outputs.
GST_START_TEST(test_gap_and_origin_meta_pass_through) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  gst_harness_play(h);
  GstBuffer* in = float_buffer({1, 0, 0, 0}, 0);
  weave::caps::TensorOrigin origin;
  origin.frame_width = 640;
  origin.frame_height = 360;
  origin.roi_ids = {4, 2};
  origin.batch = 1;
  origin.batches = 3;
  weave::caps::set_tensor_origin(in, origin);
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  fail_unless(gst_harness_push_event(h, gst_event_new_gap(GST_SECOND / 30, GST_SECOND / 30)));
  fail_unless_equals_int(gst_harness_push(h, float_buffer({0, 1, 0, 0}, 2 * GST_SECOND / 30)), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  auto got = weave::caps::tensor_origin(out);
  fail_unless(got.has_value());
  fail_unless_equals_int(got->frame_width, 640);
  fail_unless(got->roi_ids == (std::vector<int>{4, 2}));
  fail_unless_equals_int(got->batches, 3);
  gst_buffer_unref(out);
  // The gap came out before the second buffer (the harness keeps events apart from buffers).
  GstBuffer* second = gst_harness_pull(h);
  bool gap = false;
  while (GstEvent* ev = gst_harness_try_pull_event(h)) {
    if (GST_EVENT_TYPE(ev) == GST_EVENT_GAP) {
      GstClockTime ts = 0, dur = 0;
      gst_event_parse_gap(ev, &ts, &dur);
      fail_unless_equals_uint64(ts, GST_SECOND / 30);
      gap = true;
    }
    gst_event_unref(ev);
  }
  out = second;
  fail_unless(gap);
  fail_unless_equals_uint64(GST_BUFFER_PTS(out), 2 * GST_SECOND / 30);
  fail_unless(!weave::caps::tensor_origin(out).has_value());
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

// inference-interval=3: sets 0, 3, 6 run; the others go out as a GAP of their time, in order,
// counted in frames-skipped; a new segment (a seek) starts the count again.
GST_START_TEST(test_inference_interval_runs_every_nth_set_and_gaps_the_rest) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  g_object_set(e, "inference-interval", 3, nullptr);
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  gst_harness_play(h);
  for (int k = 0; k < 7; ++k)
    fail_unless_equals_int(
        gst_harness_push(h, float_buffer({static_cast<float>(k), 0, 0, 0}, k * GST_SECOND / 30)),
        GST_FLOW_OK);
  std::vector<GstClockTime> gaps;
  std::vector<GstClockTime> runs;
  for (int k = 0; k < 3; ++k) {
    GstBuffer* out = gst_harness_pull(h);
    fail_unless(out != nullptr);
    runs.push_back(GST_BUFFER_PTS(out));
    // x @ W with x = (k', 0, 0, 0): row 0 of W times k' = (0, k', 2k').
    fail_unless(floats_of(out)[1] == static_cast<float>(GST_BUFFER_PTS(out) * 30 / GST_SECOND));
    gst_buffer_unref(out);
  }
  while (GstEvent* ev = gst_harness_try_pull_event(h)) {
    if (GST_EVENT_TYPE(ev) == GST_EVENT_GAP) {
      GstClockTime ts = 0, dur = 0;
      gst_event_parse_gap(ev, &ts, &dur);
      gaps.push_back(ts);
      fail_unless_equals_uint64(dur, GST_SECOND / 30);
    }
    gst_event_unref(ev);
  }
  fail_unless(runs == (std::vector<GstClockTime>{0, 3 * GST_SECOND / 30, 6 * GST_SECOND / 30}));
  fail_unless(gaps == (std::vector<GstClockTime>{GST_SECOND / 30, 2 * GST_SECOND / 30, 4 * GST_SECOND / 30,
                                                 5 * GST_SECOND / 30}));
  fail_unless_equals_uint64(prop_u64(e, "frames-skipped"), 4);
  fail_unless_equals_uint64(prop_u64(e, "frames-processed"), 3);
  // A new segment: its first set runs, whatever the count was.
  GstSegment seg;
  gst_segment_init(&seg, GST_FORMAT_TIME);
  fail_unless(gst_harness_push_event(h, gst_event_new_segment(&seg)));
  fail_unless_equals_int(gst_harness_push(h, float_buffer({9, 0, 0, 0}, 7 * GST_SECOND / 30)), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  fail_unless_equals_uint64(GST_BUFFER_PTS(out), 7 * GST_SECOND / 30);
  gst_buffer_unref(out);
  fail_unless_equals_uint64(prop_u64(e, "frames-skipped"), 4);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

static Suite* weaveinfer_suite(void) {
  Suite* s = suite_create("weaveinfer");
  TCase* tc = tcase_create("general");
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_pads_from_model);
  tcase_add_test(tc, test_negotiation_and_values);
  tcase_add_test(tc, test_negotiation_mismatch);
  tcase_add_test(tc, test_buffer_size_checked);
  tcase_add_test(tc, test_properties);
  tcase_add_test(tc, test_multi_input_gathers_by_timestamp);
  tcase_add_test(tc, test_two_outputs_and_eos_on_every_src);
  tcase_add_test(tc, test_flush);
  tcase_add_test(tc, test_bad_model_path);
  tcase_add_test(tc, test_instances_share_one_factory);
  tcase_add_test(tc, test_compiled_cache_matches_direct);
  tcase_add_test(tc, test_model_change_refused_while_running);
  tcase_add_test(tc, test_state_cycles);
  tcase_add_test(tc, test_pipeline_four_elements);
  tcase_add_test(tc, test_pipeline_resnet18);
  tcase_add_test(tc, test_caps_change_while_buffers_wait);
  tcase_add_test(tc, test_gap_and_origin_meta_pass_through);
  tcase_add_test(tc, test_buffers_sharing_a_timestamp_all_run);
  tcase_add_test(tc, test_inference_interval_runs_every_nth_set_and_gaps_the_rest);
  return s;
}

GST_CHECK_MAIN(weaveinfer);
