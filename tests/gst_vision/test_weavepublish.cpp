// weavepublish through GstHarness: one JSON message per frame with camera, frame number, pts and
// the frame's texts and objects (to a file, read back); a real mosquitto broker stopped and
// started mid-stream (nothing lost within the queue, connection events on the bus); the drop
// counter and its bus message beyond the queue's bound; a bad URI refused at start.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "caps/roi_meta.h"
#include "tests/gst_vision/gst_test_util.h"
#include "tests/publish/broker.h"

namespace wv = weave::vision;
namespace wc = weave::caps;
using namespace std::chrono_literals;

namespace {

GstBuffer* frame(int index, bool with_regions) {
  GstBuffer* b = gst_buffer_new_allocate(nullptr, 64 * 48 * 4, nullptr);
  GST_BUFFER_PTS(b) = static_cast<GstClockTime>(index) * GST_SECOND / 25;
  GST_BUFFER_DURATION(b) = GST_SECOND / 25;
  if (with_regions) {
    wv::Region t;
    t.type = "text";
    t.box = {4, 6, 30, 10};
    t.score = 0.9f;
    t.text = wv::TextResult{"Door " + std::to_string(index), 0.97f};
    wc::add_region(b, t);
    wv::Region o;
    o.type = "car";
    o.label = "car";
    o.class_id = 2;
    o.box = {10, 10, 20, 20};
    o.score = 0.8f;
    wc::add_region(b, o);
  }
  return b;
}

struct Publish {
  GstHarness* h;
  GstBus* bus = gst_bus_new();
  explicit Publish(const std::string& launch) : h(gst_harness_new_parse(launch.c_str())) {
    gst_element_set_bus(h->element, bus);
    gst_harness_set_src_caps_str(h, "video/x-raw,format=BGRx,width=64,height=48,framerate=25/1");
  }
  ~Publish() {
    gst_harness_teardown(h);
    gst_object_unref(bus);
  }
  void push(int index, bool regions = true) {
    GstBuffer* out = gst_harness_push_and_pull(h, frame(index, regions));
    BOOST_TEST_REQUIRE(out != nullptr);  // the frame passes on
    gst_buffer_unref(out);
  }
  void eos() { BOOST_TEST(gst_harness_push_event(h, gst_event_new_eos())); }
  GstElement* element() const { return gst_bin_get_by_name(GST_BIN(h->element), "p"); }
  guint64 u64(const char* prop) const {
    GstElement* e = element();
    guint64 v = 0;
    g_object_get(e, prop, &v, nullptr);
    gst_object_unref(e);
    return v;
  }
  // The "event" fields of the weavepublish bus messages so far.
  std::vector<std::string> events() {
    std::vector<std::string> out;
    while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT)) {
      const GstStructure* s = gst_message_get_structure(m);
      if (s != nullptr && gst_structure_has_name(s, "weavepublish"))
        out.emplace_back(gst_structure_get_string(s, "event"));
      gst_message_unref(m);
    }
    return out;
  }
};

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

using weave::test::TempDir;

}  // namespace

BOOST_AUTO_TEST_CASE(publish_writes_one_message_per_frame_to_a_file) {
  TempDir dir;
  const std::string path = (dir.path / "out.jsonl").string();
  {
    Publish p("weavepublish name=p camera=door-3 tags=site=north,worker=w1 uri=file://" + path);
    for (int i = 0; i < 10; ++i) p.push(i, /*regions=*/i != 4);
    p.eos();
    BOOST_TEST(p.u64("sent") == 10u);
    BOOST_TEST(p.u64("dropped") == 0u);
  }
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  BOOST_TEST_REQUIRE(lines.size() == 10u);
  for (int i = 0; i < 10; ++i) {
    const std::string& l = lines[static_cast<std::size_t>(i)];
    const std::string head = "{\"camera\":\"door-3\",\"frame\":" + std::to_string(i) + ",\"time\":";
    BOOST_TEST(l.rfind(head, 0) == 0u, l);
    // The wall clock in seconds, then the tags, then weavemeta's line.
    const double t = std::stod(l.substr(head.size()));
    BOOST_TEST(std::abs(t - static_cast<double>(g_get_real_time()) / 1e6) < 60.0, l);
    const std::string rest = ",\"site\":\"north\",\"worker\":\"w1\",\"pts\":" +
                             std::to_string(static_cast<long long>(i) * 40000000) + ",";
    BOOST_TEST(l.find(rest) != std::string::npos, l);
    if (i == 4) {
      BOOST_TEST(l.find("\"texts\":[]") != std::string::npos, l);  // a frame without: empty arrays
      BOOST_TEST(l.find("\"objects\":[]") != std::string::npos, l);
    } else {
      BOOST_TEST(l.find("\"text\":\"Door " + std::to_string(i) + "\"") != std::string::npos, l);
      BOOST_TEST(l.find("\"label\":\"car\"") != std::string::npos, l);
    }
  }
}

BOOST_AUTO_TEST_CASE(publish_to_mqtt_survives_a_broker_restart) {
  TempDir dir;
  weave::test::Mosquitto broker(dir.path.string());
  broker.start();
  Publish p("weavepublish name=p camera=cam1 uri=mqtt://127.0.0.1:" + std::to_string(broker.port()) +
            "/weave/cam1");
  for (int i = 0; i < 10; ++i) p.push(i);
  for (int i = 0; i < 500 && p.u64("sent") < 10; ++i) std::this_thread::sleep_for(10ms);
  BOOST_TEST(p.u64("sent") == 10u);
  broker.stop();
  for (int i = 10; i < 20; ++i) p.push(i);  // queued while the broker is away
  std::this_thread::sleep_for(300ms);
  broker.start();
  for (int i = 20; i < 30; ++i) p.push(i);
  p.eos();  // waits for the queue (flush-timeout)
  BOOST_TEST(p.u64("sent") == 30u);
  BOOST_TEST(p.u64("dropped") == 0u);
  // The outage is on the bus; the exact count of connections is tests/publish/test_mqtt.cpp's.
  const auto ev = p.events();
  BOOST_TEST(contains(ev, "disconnected"));
  BOOST_TEST(contains(ev, "connected"));
  GstElement* e = p.element();
  gboolean connected = FALSE;
  g_object_get(e, "connected", &connected, nullptr);
  gst_object_unref(e);
  BOOST_TEST(connected == TRUE);
}

BOOST_AUTO_TEST_CASE(publish_counts_and_reports_what_a_full_queue_drops) {
  TempDir dir;
  weave::test::Mosquitto broker(dir.path.string());  // not started: nobody listens
  Publish p("weavepublish name=p queue-size=5 flush-timeout=100 uri=mqtt://127.0.0.1:" +
            std::to_string(broker.port()) + "/weave/cam1");
  for (int i = 0; i < 12; ++i) p.push(i);
  BOOST_TEST(p.u64("dropped") == 7u);
  BOOST_TEST(contains(p.events(), "dropped"));
  p.eos();  // the five left are reported too
  BOOST_TEST(p.u64("dropped") == 12u);
  BOOST_TEST(contains(p.events(), "undelivered"));
}

// The message of the first error a pipeline posts when it is started.
std::string first_error(const char* launch) {
  GstElement* pipe = gst_parse_launch(launch, nullptr);
  BOOST_TEST_REQUIRE(pipe != nullptr);
  GstBus* bus = gst_element_get_bus(pipe);
  gst_element_set_state(pipe, GST_STATE_PLAYING);
  GstMessage* m = gst_bus_timed_pop_filtered(bus, 5 * GST_SECOND, GST_MESSAGE_ERROR);
  std::string text = "(no error)";
  if (m != nullptr) {
    GError* err = nullptr;
    gst_message_parse_error(m, &err, nullptr);
    text = err->message;
    g_error_free(err);
    gst_message_unref(m);
  }
  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(pipe);
  return text;
}

BOOST_AUTO_TEST_CASE(publish_refuses_tags_that_are_not_key_value) {
  const std::string e =
      first_error("fakesrc num-buffers=1 ! weavepublish uri=file:///dev/null tags=pts=1 ! fakesink");
  BOOST_TEST(e.find("'pts' is a key of the message itself") != std::string::npos, e);
}

BOOST_AUTO_TEST_CASE(publish_refuses_a_bad_uri_at_start) {
  const std::string e =
      first_error("fakesrc num-buffers=1 ! weavepublish uri=mqtt://host-without-topic ! fakesink");
  BOOST_TEST(e.find("no topic") != std::string::npos, e);
}
