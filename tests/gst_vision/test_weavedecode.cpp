// weavedecode through GstHarness: the bus message for a hand-made tensor, JSON lines, labels
// errors, caps it must refuse, and the statistics.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "tests/gst_vision/gst_test_util.h"

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("weave_gst_vision_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

GstBuffer* tensor_buffer(const std::vector<float>& v, GstClockTime pts) {
  GstBuffer* buf = gst_buffer_new_memdup(v.data(), v.size() * sizeof(float));
  GST_BUFFER_PTS(buf) = pts;
  return buf;
}

// A weavedecode with properties set before it starts, on its own bus, inside a harness.
struct Decode {
  GstElement* element = nullptr;
  GstBus* bus = nullptr;
  GstHarness* h = nullptr;
  explicit Decode(const std::function<void(GstElement*)>& configure, const char* caps) {
    element = gst_element_factory_make("weavedecode", nullptr);
    BOOST_TEST_REQUIRE(element != nullptr);
    configure(element);
    bus = gst_bus_new();
    gst_element_set_bus(element, bus);
    h = gst_harness_new_with_element(element, "sink", "src");
    gst_harness_set_src_caps_str(h, caps);
  }
  ~Decode() {
    gst_harness_teardown(h);
    gst_object_unref(element);
    gst_object_unref(bus);
  }
  GstMessage* pop(GstMessageType type) { return gst_bus_pop_filtered(bus, type); }
};

std::vector<std::string> strings_of(const GstStructure* s, const char* field) {
  std::vector<std::string> out;
  const GValue* arr = gst_structure_get_value(s, field);
  for (guint i = 0; i < gst_value_array_get_size(arr); ++i)
    out.emplace_back(g_value_get_string(gst_value_array_get_value(arr, i)));
  return out;
}
std::vector<double> doubles_of(const GstStructure* s, const char* field) {
  std::vector<double> out;
  const GValue* arr = gst_structure_get_value(s, field);
  for (guint i = 0; i < gst_value_array_get_size(arr); ++i)
    out.push_back(g_value_get_double(gst_value_array_get_value(arr, i)));
  return out;
}
std::vector<int> ints_of(const GstStructure* s, const char* field) {
  std::vector<int> out;
  const GValue* arr = gst_structure_get_value(s, field);
  for (guint i = 0; i < gst_value_array_get_size(arr); ++i)
    out.push_back(g_value_get_int(gst_value_array_get_value(arr, i)));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(decode_posts_classification_message_and_passes_buffer) {
  const std::string labels = temp_path("labels.txt");
  std::ofstream(labels) << "cat\ndog\nbird\nfish\n";
  Decode d([&](GstElement* e) { g_object_set(e, "labels", labels.c_str(), "top-k", 2u, nullptr); },
           "tensor/x-raw,name=logits,dtype=float32,shape=(int)<1,4>");
  const std::vector<float> scores = {0.1f, 0.7f, 0.05f, 0.15f};
  GstBuffer* in = tensor_buffer(scores, 42 * GST_MSECOND);
  GstBuffer* out = gst_harness_push_and_pull(d.h, in);
  BOOST_TEST_REQUIRE(out != nullptr);
  BOOST_TEST(floats_of(out) == scores, boost::test_tools::per_element());
  BOOST_TEST(GST_BUFFER_PTS(out) == 42 * GST_MSECOND);
  gst_buffer_unref(out);

  GstMessage* msg = d.pop(GST_MESSAGE_ELEMENT);
  BOOST_TEST_REQUIRE(msg != nullptr);
  const GstStructure* s = gst_message_get_structure(msg);
  BOOST_TEST(gst_structure_get_name(s) == std::string("weave-classification"));
  guint64 pts = 0;
  BOOST_TEST(gst_structure_get_uint64(s, "pts", &pts));
  BOOST_TEST(pts == 42 * GST_MSECOND);
  BOOST_TEST((strings_of(s, "labels") == std::vector<std::string>{"dog", "fish"}));
  BOOST_TEST((ints_of(s, "class-ids") == std::vector<int>{1, 3}));
  const auto sc = doubles_of(s, "scores");
  BOOST_TEST_REQUIRE(sc.size() == 2u);
  BOOST_TEST(std::fabs(sc[0] - 0.7) < 1e-6);
  BOOST_TEST(std::fabs(sc[1] - 0.15) < 1e-6);
  gst_message_unref(msg);

  guint64 results = 0, frames = 0;
  g_object_get(d.element, "results", &results, "frames", &frames, nullptr);
  BOOST_TEST(results == 2u);
  BOOST_TEST(frames == 1u);
  std::filesystem::remove(labels);
}

BOOST_AUTO_TEST_CASE(decode_softmax_threshold_and_id_labels) {
  Decode d([](GstElement* e) { g_object_set(e, "softmax", TRUE, "threshold", 0.3, nullptr); },
           "tensor/x-raw,dtype=float32,shape=(int)<3>");
  // logits 0, ln 3, 0 -> 0.2, 0.6, 0.2; only class 1 reaches 0.3.
  gst_buffer_unref(gst_harness_push_and_pull(d.h, tensor_buffer({0.0f, std::log(3.0f), 0.0f}, 0)));
  GstMessage* msg = d.pop(GST_MESSAGE_ELEMENT);
  BOOST_TEST_REQUIRE(msg != nullptr);
  const GstStructure* s = gst_message_get_structure(msg);
  BOOST_TEST((strings_of(s, "labels") == std::vector<std::string>{"1"}));
  const auto sc = doubles_of(s, "scores");
  BOOST_TEST_REQUIRE(sc.size() == 1u);
  BOOST_TEST(std::fabs(sc[0] - 0.6) < 1e-6);
  gst_message_unref(msg);
}

BOOST_AUTO_TEST_CASE(decode_writes_json_lines) {
  const std::string json = temp_path("out.jsonl");
  {
    Decode d([&](GstElement* e) { g_object_set(e, "json", json.c_str(), "top-k", 1u, nullptr); },
             "tensor/x-raw,dtype=float32,shape=(int)<1,2>");
    gst_buffer_unref(gst_harness_push_and_pull(d.h, tensor_buffer({0.25f, 0.75f}, 0)));
    gst_buffer_unref(gst_harness_push_and_pull(d.h, tensor_buffer({0.5f, 0.125f}, 40 * GST_MSECOND)));
    gst_buffer_unref(gst_harness_push_and_pull(d.h, tensor_buffer({0.5f, 0.125f}, GST_CLOCK_TIME_NONE)));
  }
  std::ifstream in(json);
  std::stringstream text;
  text << in.rdbuf();
  BOOST_TEST(text.str() ==
             "{\"pts\":0,\"results\":[{\"class_id\":1,\"label\":\"1\",\"score\":0.75}]}\n"
             "{\"pts\":40000000,\"results\":[{\"class_id\":0,\"label\":\"0\",\"score\":0.5}]}\n"
             "{\"pts\":null,\"results\":[{\"class_id\":0,\"label\":\"0\",\"score\":0.5}]}\n");
  std::filesystem::remove(json);
}

namespace {
// Brings a configured weavedecode to PAUSED without a harness and returns the error text.
std::string start_error(const std::function<void(GstElement*)>& configure) {
  GstElement* e = gst_element_factory_make("weavedecode", nullptr);
  configure(e);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  const GstStateChangeReturn ret = gst_element_set_state(e, GST_STATE_PAUSED);
  BOOST_TEST(ret == GST_STATE_CHANGE_FAILURE);
  std::string text;
  if (GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
    GError* err = nullptr;
    gst_message_parse_error(msg, &err, nullptr);
    text = err->message;
    g_error_free(err);
    gst_message_unref(msg);
  }
  gst_element_set_state(e, GST_STATE_NULL);
  gst_object_unref(e);
  gst_object_unref(bus);
  return text;
}
}  // namespace

BOOST_AUTO_TEST_CASE(bad_labels_path_is_an_element_error) {
  const std::string text =
      start_error([](GstElement* e) { g_object_set(e, "labels", "/nonexistent/weave/labels.txt", nullptr); });
  BOOST_TEST(text.find("/nonexistent/weave/labels.txt") != std::string::npos, text);
  BOOST_TEST(text.find("cannot open") != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(unwritable_json_path_is_an_element_error) {
  const std::string text =
      start_error([](GstElement* e) { g_object_set(e, "json", "/nonexistent/weave/out.jsonl", nullptr); });
  BOOST_TEST(text.find("/nonexistent/weave/out.jsonl") != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(tensor_of_rank_three_is_refused) {
  Decode d([](GstElement*) {}, "tensor/x-raw,dtype=float32,shape=(int)<1,2,3>");
  BOOST_TEST(gst_harness_push(d.h, tensor_buffer(std::vector<float>(6, 0.0f), 0)) == GST_FLOW_NOT_NEGOTIATED);
  GstMessage* msg = d.pop(GST_MESSAGE_ERROR);
  BOOST_TEST_REQUIRE(msg != nullptr);
  GError* err = nullptr;
  gst_message_parse_error(msg, &err, nullptr);
  BOOST_TEST(std::string(err->message).find("<N> or <B,N>, got 1x2x3") != std::string::npos, err->message);
  g_error_free(err);
  gst_message_unref(msg);
}

BOOST_AUTO_TEST_CASE(short_buffer_is_an_error_not_a_read_overrun) {
  Decode d([](GstElement*) {}, "tensor/x-raw,dtype=float32,shape=(int)<1,1000>");
  BOOST_TEST(gst_harness_push(d.h, tensor_buffer({1.0f, 2.0f}, 0)) == GST_FLOW_ERROR);
  GstMessage* msg = d.pop(GST_MESSAGE_ERROR);
  BOOST_TEST_REQUIRE(msg != nullptr);
  GError* err = nullptr;
  gst_message_parse_error(msg, &err, nullptr);
  BOOST_TEST(std::string(err->message).find("8 bytes is smaller than tensor 1x1000 (4000 bytes)") !=
                 std::string::npos,
             err->message);
  g_error_free(err);
  gst_message_unref(msg);
}

BOOST_AUTO_TEST_CASE(label_count_mismatch_warns) {
  const std::string labels = temp_path("three.txt");
  std::ofstream(labels) << "a\nb\nc\n";
  Decode d([&](GstElement* e) { g_object_set(e, "labels", labels.c_str(), nullptr); },
           "tensor/x-raw,dtype=float32,shape=(int)<1,5>");
  gst_buffer_unref(gst_harness_push_and_pull(d.h, tensor_buffer({0, 0, 0, 0, 1}, 0)));
  GstMessage* msg = d.pop(GST_MESSAGE_WARNING);
  BOOST_TEST_REQUIRE(msg != nullptr);
  GError* err = nullptr;
  gst_message_parse_warning(msg, &err, nullptr);
  BOOST_TEST(std::string(err->message).find("has 3 labels but the tensor has 5 classes") != std::string::npos,
             err->message);
  g_error_free(err);
  gst_message_unref(msg);
  std::filesystem::remove(labels);
}
