// weaveinfer zero-copy and bounds (GstCheck + GstHarness): aligned single-block input buffers
// are read in place and outputs are written in place (0 copies per frame); misaligned inputs
// are copied once and multi-block inputs merged once, both counted; large outputs are pages of
// their own; max-shape (property or finite upstream
// caps bounds) plans memory once and refuses larger caps.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstharness.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/gst/gst_test_helpers.h"

// A buffer whose mapped data starts `offset` bytes into a malloc'd block (offset 1: misaligned).
static GstBuffer* wrapped_buffer(const std::vector<float>& v, gsize offset) {
  const gsize size = v.size() * sizeof(float);
  auto* block = static_cast<guint8*>(g_malloc(size + 64));
  std::memcpy(block + offset, v.data(), size);
  return gst_buffer_new_wrapped_full(static_cast<GstMemoryFlags>(0), block, size + 64, offset, size, block,
                                     g_free);
}

static GstBuffer* aligned_buffer(const std::vector<float>& v) {
  GstAllocationParams params;
  gst_allocation_params_init(&params);
  params.align = 63;
  GstBuffer* b = gst_buffer_new_allocate(nullptr, v.size() * sizeof(float), &params);
  gst_buffer_fill(b, 0, v.data(), v.size() * sizeof(float));
  return b;
}

// Pushes `in`, pulls the output and checks its values, timestamp and memory: one block, aligned
// to `align` bytes, writable (downstream may write into it).
static void push_and_check(GstHarness* h, GstBuffer* in, const std::vector<float>& x, GstClockTime pts,
                           std::uintptr_t align = 64) {
  GST_BUFFER_PTS(in) = pts;
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  fail_unless(out != nullptr);
  fail_unless(floats_of(out) == matmul_ref(x));
  fail_unless_equals_uint64(GST_BUFFER_PTS(out), pts);
  // Outputs are allocated aligned, one block, written in place.
  fail_unless_equals_int(gst_buffer_n_memory(out), 1);
  GstMapInfo m;
  fail_unless(gst_buffer_map(out, &m, GST_MAP_READWRITE));
  fail_unless(reinterpret_cast<std::uintptr_t>(m.data) % align == 0);
  gst_buffer_unmap(out, &m);
  gst_buffer_unref(out);
}

// matmul_dyn.onnx in a harness with input caps <2,4>, playing.
static GstHarness* start_matmul(GstElement* e) {
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<2,4>");
  gst_harness_play(h);
  return h;
}

GST_START_TEST(test_aligned_input_is_not_copied) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstHarness* h = start_matmul(e);
  for (int f = 0; f < 3; ++f) {
    std::vector<float> x{1, 2, 3, 4, static_cast<float>(f), 0, -1, 1};
    push_and_check(h, aligned_buffer(x), x, f * GST_SECOND);
  }
  // A default-allocated buffer is aligned enough for float32 too.
  std::vector<float> x{0, 0, 0, 1, 1, 0, 0, 0};
  push_and_check(h, wrapped_buffer(x, 4), x, 3 * GST_SECOND);
  fail_unless_equals_uint64(prop_u64(e, "frames-processed"), 4);
  fail_unless_equals_uint64(prop_u64(e, "input-copies"), 0);
  fail_unless_equals_uint64(prop_u64(e, "output-copies"), 0);
  fail_unless_equals_uint64(prop_u64(e, "bytes-copied"), 0);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_misaligned_input_is_copied_once_and_counted) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstHarness* h = start_matmul(e);
  std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};
  push_and_check(h, wrapped_buffer(x, 1), x, 0);
  fail_unless_equals_uint64(prop_u64(e, "input-copies"), 1);
  fail_unless_equals_uint64(prop_u64(e, "bytes-copied"), 32);
  x = {-1, 0.5f, 2, 0, 0, 0, 3, 1};
  push_and_check(h, wrapped_buffer(x, 3), x, GST_SECOND);
  fail_unless_equals_uint64(prop_u64(e, "input-copies"), 2);
  // Back to an aligned buffer: no copy for that frame.
  push_and_check(h, aligned_buffer(x), x, 2 * GST_SECOND);
  fail_unless_equals_uint64(prop_u64(e, "input-copies"), 2);
  fail_unless_equals_uint64(prop_u64(e, "output-copies"), 0);
  fail_unless_equals_uint64(prop_u64(e, "frames-processed"), 3);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_multi_block_input_counts_the_merge) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstHarness* h = start_matmul(e);
  std::vector<float> x{1, 0, 0, 2, 0, 3, 0, 0};
  GstBuffer* b = aligned_buffer({x.begin(), x.begin() + 4});
  b = gst_buffer_append(b, aligned_buffer({x.begin() + 4, x.end()}));
  fail_unless_equals_int(gst_buffer_n_memory(b), 2);
  push_and_check(h, b, x, 0);
  // gst_buffer_map merged the two blocks (one copy, counted); the merged block is read in place.
  fail_unless_equals_uint64(prop_u64(e, "input-copies"), 1);
  fail_unless_equals_uint64(prop_u64(e, "bytes-copied"), 32);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_max_shape_property) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  // Malformed text is refused with a warning; the property keeps its value.
  ASSERT_WARNING(g_object_set(e, "max-shape", "Input.1=4xq", nullptr));
  gchar* v = nullptr;
  g_object_get(e, "max-shape", &v, nullptr);
  fail_unless(v == nullptr);
  g_object_set(e, "max-shape", "Input.1=4x4", nullptr);
  g_object_get(e, "max-shape", &v, nullptr);
  fail_unless_equals_string(v, "Input.1=4x4");
  g_free(v);
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<3,4>");
  gst_harness_play(h);
  std::vector<float> x{1, 2, 3, 4, 0, 1, 0, 1, 2, 2, 2, 2};
  push_and_check(h, aligned_buffer(x), x, 0);
  // A bounded and an unbounded instance do not share a factory (its plans differ).
  GstElement* plain = make_infer(model_path("matmul_dyn.onnx"));
  GstHarness* hp = gst_harness_new_with_element(plain, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(hp, "tensor/x-raw, dtype=float32, shape=(int)<3,4>");
  gst_harness_play(hp);
  gchar *fa = nullptr, *fb = nullptr;
  g_object_get(e, "factory-id", &fa, nullptr);
  g_object_get(plain, "factory-id", &fb, nullptr);
  fail_if(g_str_equal(fa, fb));
  g_free(fa);
  g_free(fb);
  gst_harness_teardown(hp);
  gst_object_unref(plain);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_caps_beyond_max_shape_are_refused) {
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  g_object_set(e, "max-shape", "Input.1=4x4", nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<5,4>");
  gst_harness_play(h);
  std::vector<float> x(20, 1.f);
  fail_unless_equals_int(gst_harness_push(h, aligned_buffer(x)), GST_FLOW_NOT_NEGOTIATED);
  std::string all;
  while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
    GError* err = nullptr;
    gst_message_parse_error(m, &err, nullptr);
    all += err->message;
    g_error_free(err);
    gst_message_unref(m);
  }
  fail_unless(all.find("pad sink_input_1: input 'Input.1': dims 5x4 exceed the planned bound 4x4") !=
                  std::string::npos,
              "%s", all.c_str());
  fail_unless(all.find("max-shape") != std::string::npos, "%s", all.c_str());
  gst_harness_teardown(h);
  gst_element_set_bus(e, nullptr);
  gst_object_unref(bus);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_bound_from_upstream_caps) {
  // Upstream promises at most 8 rows: the element plans for 8x4, the same factory an explicit
  // max-shape=Input.1=8x4 gets.
  std::string desc =
      "appsrc name=src format=time ! capsfilter caps=\"tensor/x-raw,dtype=float32,shape=<[1,8],4>\" "
      "! weaveinfer name=inf model=\"" +
      model_path("matmul_dyn.onnx") + "\" ! appsink name=sink sync=false";
  GError* err = nullptr;
  GstElement* pipe = gst_parse_launch(desc.c_str(), &err);
  fail_unless(pipe != nullptr && err == nullptr, "%s", err ? err->message : "");
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipe), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipe), "sink");
  GstElement* inf = gst_bin_get_by_name(GST_BIN(pipe), "inf");
  fail_unless_equals_int(gst_element_set_state(pipe, GST_STATE_PLAYING), GST_STATE_CHANGE_ASYNC);
  GstCaps* caps = gst_caps_from_string("tensor/x-raw,dtype=float32,shape=<3,4>");
  g_object_set(src, "caps", caps, nullptr);
  gst_caps_unref(caps);
  std::vector<float> x{1, 1, 1, 1, 0, 0, 0, 2, 3, 0, 0, 0};
  fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), aligned_buffer(x)), GST_FLOW_OK);
  GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 30 * GST_SECOND);
  fail_unless(s != nullptr);
  fail_unless(floats_of(gst_sample_get_buffer(s)) == matmul_ref(x));
  gst_sample_unref(s);
  fail_unless_equals_uint64(prop_u64(inf, "input-copies"), 0);

  GstElement* explicit_bound = make_infer(model_path("matmul_dyn.onnx"));
  g_object_set(explicit_bound, "max-shape", "Input.1=8x4", nullptr);
  GstHarness* h = gst_harness_new_with_element(explicit_bound, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<2,4>");
  gst_harness_play(h);
  gchar *fa = nullptr, *fb = nullptr;
  g_object_get(inf, "factory-id", &fa, nullptr);
  g_object_get(explicit_bound, "factory-id", &fb, nullptr);
  fail_unless_equals_string(fa, fb);
  g_free(fa);
  g_free(fb);
  gst_harness_teardown(h);
  gst_object_unref(explicit_bound);

  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(inf);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipe);
}
GST_END_TEST;

GST_START_TEST(test_large_outputs_are_page_mapped) {
  // 22000 rows of 4 -> 22000 x 3 floats = 264000 bytes: past the 256 KiB from which an output
  // frame is its own mapping (unmapped when freed), so its data starts on a page.
  constexpr int kRows = 22000;
  GstElement* e = make_infer(model_path("matmul_dyn.onnx"));
  GstHarness* h = gst_harness_new_with_element(e, "sink_input_1", "src_scores");
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<22000,4>");
  gst_harness_play(h);
  std::vector<float> x(kRows * 4);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.f;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  // Each frame is a fresh mapping (the previous one was freed), written in place.
  for (int f = 0; f < 3; ++f) push_and_check(h, aligned_buffer(x), x, f * GST_SECOND, page);
  fail_unless_equals_uint64(prop_u64(e, "output-copies"), 0);
  fail_unless_equals_uint64(prop_u64(e, "input-copies"), 0);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

static Suite* weaveinfer_zero_copy_suite(void) {
  Suite* s = suite_create("weaveinfer-zero-copy");
  TCase* tc = tcase_create("general");
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_aligned_input_is_not_copied);
  tcase_add_test(tc, test_misaligned_input_is_copied_once_and_counted);
  tcase_add_test(tc, test_multi_block_input_counts_the_merge);
  tcase_add_test(tc, test_large_outputs_are_page_mapped);
  tcase_add_test(tc, test_max_shape_property);
  tcase_add_test(tc, test_caps_beyond_max_shape_are_refused);
  tcase_add_test(tc, test_bound_from_upstream_caps);
  return s;
}

GST_CHECK_MAIN(weaveinfer_zero_copy);
