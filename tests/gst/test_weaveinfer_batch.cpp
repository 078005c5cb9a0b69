// weaveinfer batch-size: elements of one model batch their streams' frames into one run and each
// gets its own results, timestamps intact; a stream that ends or flushes never stalls the others;
// a model whose first dim is fixed says it cannot batch and runs every frame alone.
#include <gst/check/gstharness.h>

#include <string>
#include <vector>

#include "tests/gst/gst_test_helpers.h"

namespace {

// `n` rows of 4 counting up from `from`.
std::vector<float> rows_from(float from, int n) {
  std::vector<float> v(static_cast<std::size_t>(n) * 4);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = from + static_cast<float>(i);
  return v;
}

GstElement* batching_infer(int batch_size, guint timeout_ms, const char* model = "matmul_dyn.onnx") {
  GstElement* e = make_infer(model_path(model));
  g_object_set(e, "batch-size", batch_size, "batch-timeout", timeout_ms, nullptr);
  return e;
}

GstHarness* harness_of(GstElement* e, const char* caps, const char* sink = "sink_input_1",
                       const char* src = "src_scores") {
  GstHarness* h = gst_harness_new_with_element(e, sink, src);
  gst_harness_set_src_caps_str(h, caps);
  gst_harness_play(h);
  return h;
}

// Pulls one output and checks it is matmul_dyn's result for `x` at `pts`.
void expect_output(GstHarness* h, const std::vector<float>& x, GstClockTime pts) {
  GstBuffer* out = gst_harness_pull(h);
  fail_unless(out != nullptr);
  fail_unless(floats_of(out) == matmul_ref(x));
  fail_unless_equals_uint64(GST_BUFFER_PTS(out), pts);
  fail_unless_equals_uint64(GST_BUFFER_DURATION(out), GST_SECOND / 30);
  gst_buffer_unref(out);
}

}  // namespace

// Two streams of one model, batch-size=2 and a long timeout: every frame runs in a batch of two
// (a frame of 1 row with one of 2 rows), and each stream gets exactly its own results. The same
// max-shape makes them one model (the bounds of upstream caps of 1 and 2 rows would be two).
GST_START_TEST(test_two_streams_batch_and_each_gets_its_own_rows) {
  GstElement* a = batching_infer(2, 10000);
  GstElement* b = batching_infer(2, 10000);
  for (GstElement* e : {a, b}) g_object_set(e, "max-shape", "Input.1=2x4", nullptr);
  GstHarness* ha = harness_of(a, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  GstHarness* hb = harness_of(b, "tensor/x-raw, dtype=float32, shape=(int)<2,4>");
  for (int k = 0; k < 3; ++k) {
    const GstClockTime pts = static_cast<GstClockTime>(k) * GST_SECOND / 30;
    const auto xa = rows_from(static_cast<float>(k), 1), xb = rows_from(100.f + static_cast<float>(k), 2);
    fail_unless_equals_int(gst_harness_push(ha, float_buffer(xa, pts)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(hb, float_buffer(xb, pts + GST_MSECOND)), GST_FLOW_OK);
    expect_output(ha, xa, pts);
    expect_output(hb, xb, pts + GST_MSECOND);
  }
  for (GstElement* e : {a, b}) {
    fail_unless_equals_uint64(prop_u64(e, "frames-processed"), 3);
    fail_unless_equals_uint64(prop_u64(e, "frames-batched"), 3);
    fail_unless_equals_uint64(prop_u64(e, "input-copies"), 3);  // each frame copied into its batch
  }
  // Output caps are each stream's own.
  GstCaps* caps = gst_pad_get_current_caps(hb->sinkpad);
  gchar* s = gst_caps_to_string(caps);
  fail_unless_equals_string(s,
                            "tensor/x-raw, name=(string)Scores, dtype=(string)float32, shape=(int)< 2, 3 >");
  g_free(s);
  gst_caps_unref(caps);
  gst_harness_teardown(ha);
  gst_harness_teardown(hb);
  gst_object_unref(a);
  gst_object_unref(b);
}
GST_END_TEST;

// One stream ends (EOS) and another flushes while a third goes on: the third's frames run alone
// after the timeout, every one of them comes out, and the flushed stream runs again afterwards.
GST_START_TEST(test_a_stream_ending_or_flushing_never_stalls_the_others) {
  GstElement* a = batching_infer(3, 30);
  GstElement* b = batching_infer(3, 30);
  GstElement* c = batching_infer(3, 30);
  GstHarness* ha = harness_of(a, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  GstHarness* hb = harness_of(b, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  GstHarness* hc = harness_of(c, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  const auto x0 = rows_from(1.f, 1);
  fail_unless_equals_int(gst_harness_push(ha, float_buffer(x0, 0)), GST_FLOW_OK);
  fail_unless(gst_harness_push_event(ha, gst_event_new_eos()));
  fail_unless(gst_harness_push_event(hb, gst_event_new_flush_start()));
  fail_unless(gst_harness_push_event(hb, gst_event_new_flush_stop(TRUE)));
  for (int k = 0; k < 6; ++k) {
    const auto x = rows_from(static_cast<float>(10 * k), 1);
    const GstClockTime pts = static_cast<GstClockTime>(k) * GST_SECOND / 30;
    fail_unless_equals_int(gst_harness_push(hc, float_buffer(x, pts)), GST_FLOW_OK);
    expect_output(hc, x, pts);
  }
  expect_output(ha, x0, 0);
  bool eos = false;
  while (GstEvent* ev = gst_harness_pull_event(ha)) {
    eos = GST_EVENT_TYPE(ev) == GST_EVENT_EOS;
    gst_event_unref(ev);
    if (eos) break;
  }
  fail_unless(eos);
  // After its flush, b runs again (and may batch with c).
  gst_harness_set_src_caps_str(hb, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  const auto xb = rows_from(7.f, 1);
  fail_unless_equals_int(gst_harness_push(hb, float_buffer(xb, GST_SECOND)), GST_FLOW_OK);
  expect_output(hb, xb, GST_SECOND);
  fail_unless_equals_uint64(prop_u64(c, "frames-processed"), 6);
  for (GstHarness* h : {ha, hb, hc}) gst_harness_teardown(h);
  for (GstElement* e : {a, b, c}) gst_object_unref(e);
}
GST_END_TEST;

// Streams of different frame rates (30 and 10 a second) batch when their frames meet and run
// alone when they do not: every frame of both comes out, right and in order.
GST_START_TEST(test_streams_of_different_rates_each_get_every_frame) {
  GstElement* a = batching_infer(2, 20);
  GstElement* b = batching_infer(2, 20);
  GstHarness* ha = harness_of(a, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  GstHarness* hb = harness_of(b, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  std::vector<std::vector<float>> sent_b;
  for (int k = 0; k < 9; ++k) {
    const GstClockTime pts = static_cast<GstClockTime>(k) * GST_SECOND / 30;
    const auto x = rows_from(static_cast<float>(k), 1);
    fail_unless_equals_int(gst_harness_push(ha, float_buffer(x, pts)), GST_FLOW_OK);
    if (k % 3 == 0) {
      sent_b.push_back(rows_from(50.f + static_cast<float>(k), 1));
      fail_unless_equals_int(gst_harness_push(hb, float_buffer(sent_b.back(), pts)), GST_FLOW_OK);
    }
    expect_output(ha, x, pts);
  }
  for (std::size_t i = 0; i < sent_b.size(); ++i)
    expect_output(hb, sent_b[i], static_cast<GstClockTime>(3 * i) * GST_SECOND / 30);
  fail_unless_equals_uint64(prop_u64(a, "frames-processed"), 9);
  fail_unless_equals_uint64(prop_u64(b, "frames-processed"), 3);
  fail_unless(prop_u64(a, "frames-batched") <= 3);  // at most the frames b had
  for (GstHarness* h : {ha, hb}) gst_harness_teardown(h);
  for (GstElement* e : {a, b}) gst_object_unref(e);
}
GST_END_TEST;

// two_outputs.onnx takes x float32[1,4]: no batch dim to join frames along. A warning names the
// input and every frame runs alone, right; its max-shape is taken as it is (not widened for a
// batch, which a static dim refuses).
GST_START_TEST(test_a_fixed_first_dim_warns_and_runs_alone) {
  GstElement* e = batching_infer(4, 10000, "two_outputs.onnx");
  g_object_set(e, "max-shape", "x=1x4", nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  GstHarness* h = harness_of(e, "tensor/x-raw, dtype=float32, shape=(int)<1,4>", "sink_x", "src_logits");
  GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
  fail_unless(m != nullptr);
  GError* err = nullptr;
  gchar* dbg = nullptr;
  gst_message_parse_warning(m, &err, &dbg);
  fail_unless(std::string(err->message).find("batch-size=4 ignored") != std::string::npos, err->message);
  fail_unless(std::string(dbg).find("model input 'x' has shape 1x4") != std::string::npos, dbg);
  g_error_free(err);
  g_free(dbg);
  gst_message_unref(m);
  // Alone and at once, not after the 10 s timeout.
  const gint64 t0 = g_get_monotonic_time();
  fail_unless_equals_int(gst_harness_push(h, float_buffer({1, 0, 0, 0}, 0)), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  fail_unless(g_get_monotonic_time() - t0 < 5 * G_USEC_PER_SEC);
  fail_unless(out != nullptr);
  fail_unless(floats_of(out) == matmul_ref({1, 0, 0, 0}));
  gst_buffer_unref(out);
  fail_unless_equals_uint64(prop_u64(e, "frames-batched"), 0);
  gst_harness_teardown(h);
  gst_element_set_bus(e, nullptr);
  gst_object_unref(bus);
  gst_object_unref(e);
}
GST_END_TEST;

// A stream alone with batch-size=2 and a 10 s timeout: its task waits for a partner. A flush
// runs the batch at once (the flush does not wait out the timeout), and the stream goes on.
GST_START_TEST(test_a_flush_does_not_wait_for_the_batch_timeout) {
  GstElement* e = batching_infer(2, 10000);
  GstHarness* h = harness_of(e, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  fail_unless_equals_int(gst_harness_push(h, float_buffer(rows_from(1.f, 1), 0)), GST_FLOW_OK);
  g_usleep(100 * 1000);  // the task is waiting in its batch
  const gint64 t0 = g_get_monotonic_time();
  fail_unless(gst_harness_push_event(h, gst_event_new_flush_start()));
  fail_unless(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
  fail_unless(g_get_monotonic_time() - t0 < 5 * G_USEC_PER_SEC);
  g_object_set(e, "batch-timeout", 1u, nullptr);
  gst_harness_set_src_caps_str(h, "tensor/x-raw, dtype=float32, shape=(int)<1,4>");
  const auto x = rows_from(3.f, 1);
  fail_unless_equals_int(gst_harness_push(h, float_buffer(x, GST_SECOND)), GST_FLOW_OK);
  // The frame before the flush may have come out before it; the one after does.
  GstBuffer* out = nullptr;
  while ((out = gst_harness_pull(h)) != nullptr && GST_BUFFER_PTS(out) != GST_SECOND) gst_buffer_unref(out);
  fail_unless(out != nullptr);
  fail_unless(floats_of(out) == matmul_ref(x));
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  gst_object_unref(e);
}
GST_END_TEST;

static Suite* weaveinfer_batch_suite(void) {
  Suite* s = suite_create("weaveinfer-batch");
  TCase* tc = tcase_create("general");
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_two_streams_batch_and_each_gets_its_own_rows);
  tcase_add_test(tc, test_a_stream_ending_or_flushing_never_stalls_the_others);
  tcase_add_test(tc, test_streams_of_different_rates_each_get_every_frame);
  tcase_add_test(tc, test_a_fixed_first_dim_warns_and_runs_alone);
  tcase_add_test(tc, test_a_flush_does_not_wait_for_the_batch_timeout);
  return s;
}

GST_CHECK_MAIN(weaveinfer_batch);
