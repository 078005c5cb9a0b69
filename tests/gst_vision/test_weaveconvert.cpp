// weaveconvert through GstHarness: negotiation against fixed and open downstream shapes, every
// input format, every property, and a gst_parse_launch pipeline.
#define BOOST_TEST_MODULE gst_vision
#include <gst/video/video.h>

#include <array>
#include <cmath>
#include <functional>

#include "tests/gst_vision/gst_test_util.h"

BOOST_TEST_GLOBAL_FIXTURE(GstSetup);

namespace {

// A w x h frame whose every pixel is `px` (bytes in memory order of one pixel) for packed formats,
// or Y = px[0], U = px[1], V = px[2] for I420/NV12.
GstBuffer* solid_frame(const char* format, int w, int h, std::array<guint8, 4> px) {
  GstVideoInfo info;
  gst_video_info_set_format(&info, gst_video_format_from_string(format), w, h);
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
  GstVideoFrame f;
  BOOST_TEST_REQUIRE(gst_video_frame_map(&f, &info, buf, GST_MAP_WRITE));
  const GstVideoFormat vf = GST_VIDEO_INFO_FORMAT(&info);
  const int bpp = GST_VIDEO_FORMAT_INFO_PSTRIDE(info.finfo, 0);
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&f); ++p) {
    auto* data = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&f, p));
    const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&f, p);
    const int rows = p == 0 ? h : (h + 1) / 2;
    for (int y = 0; y < rows; ++y) {
      guint8* row = data + y * stride;
      if (vf == GST_VIDEO_FORMAT_I420 || vf == GST_VIDEO_FORMAT_NV12) {
        const int cw = (w + 1) / 2;
        if (p == 0) std::fill(row, row + w, px[0]);
        if (vf == GST_VIDEO_FORMAT_I420 && p > 0) std::fill(row, row + cw, px[p]);
        if (vf == GST_VIDEO_FORMAT_NV12 && p == 1)
          for (int x = 0; x < cw; ++x) {
            row[2 * x] = px[1];
            row[2 * x + 1] = px[2];
          }
      } else {
        for (int x = 0; x < w; ++x) std::copy_n(px.begin(), bpp, row + x * bpp);
      }
    }
  }
  gst_video_frame_unmap(&f);
  GST_BUFFER_PTS(buf) = 0;
  return buf;
}

std::string video_caps(const char* format, int w, int h) {
  return std::string("video/x-raw,format=") + format + ",width=" + std::to_string(w) +
         ",height=" + std::to_string(h) + ",framerate=30/1";
}

// Pushes one frame and returns the output tensor and the negotiated caps.
struct Converted {
  std::vector<float> values;
  std::string caps;
  GstFlowReturn flow = GST_FLOW_OK;
};
Converted convert(GstHarness* h, const char* format, int w, int h_, std::array<guint8, 4> px,
                  const char* sink_caps = nullptr) {
  if (sink_caps != nullptr) gst_harness_set_sink_caps_str(h, sink_caps);
  gst_harness_set_src_caps_str(h, video_caps(format, w, h_).c_str());
  Converted c;
  c.flow = gst_harness_push(h, solid_frame(format, w, h_, px));
  if (c.flow != GST_FLOW_OK) return c;
  GstBuffer* out = gst_harness_pull(h);
  BOOST_TEST_REQUIRE(out != nullptr);
  c.values = floats_of(out);
  gst_buffer_unref(out);
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  BOOST_TEST_REQUIRE(caps != nullptr);
  c.caps = caps_string(caps);
  gst_caps_unref(caps);
  return c;
}

bool all_near(const std::vector<float>& v, std::size_t from, std::size_t n, float want, float tol = 1e-6f) {
  for (std::size_t i = from; i < from + n; ++i)
    if (std::fabs(v[i] - want) > tol) return false;
  return true;
}

constexpr const char* kOpen = "tensor/x-raw,dtype=float32,shape=(int)<1,3,[1,4096],[1,4096]>";
constexpr const char* kOpenNhwc = "tensor/x-raw,dtype=float32,shape=(int)<1,[1,4096],[1,4096],3>";

}  // namespace

BOOST_AUTO_TEST_CASE(fixed_downstream_shape_resizes) {
  Harness h(gst_harness_new("weaveconvert"));
  auto c = convert(h, "RGB", 8, 6, {200, 100, 50, 0}, "tensor/x-raw,dtype=float32,shape=(int)<1,3,2,4>");
  BOOST_TEST_REQUIRE(c.flow == GST_FLOW_OK);
  BOOST_TEST(
      same_caps(c.caps, "tensor/x-raw, dtype=(string)float32, shape=(int)< 1, 3, 2, 4 >, name=(string)input"),
      c.caps);
  BOOST_TEST_REQUIRE(c.values.size() == 24u);
  BOOST_TEST(all_near(c.values, 0, 8, 200 / 255.0f));
  BOOST_TEST(all_near(c.values, 8, 8, 100 / 255.0f));
  BOOST_TEST(all_near(c.values, 16, 8, 50 / 255.0f));
}

BOOST_AUTO_TEST_CASE(name_and_batch_come_from_downstream) {
  Harness h(gst_harness_new("weaveconvert"));
  auto c = convert(h, "RGB", 4, 4, {1, 2, 3, 0},
                   "tensor/x-raw,name=images,dtype=float32,shape=(int)<[1,16],3,[1,64],[1,64]>");
  BOOST_TEST_REQUIRE(c.flow == GST_FLOW_OK);
  BOOST_TEST(same_caps(c.caps,
                       "tensor/x-raw, name=(string)images, dtype=(string)float32, shape=(int)< 1, 3, 4, 4 >"),
             c.caps);
}

BOOST_AUTO_TEST_CASE(open_height_width_keep_video_size) {
  {
    Harness h(gst_harness_new("weaveconvert"));
    auto c = convert(h, "RGB", 5, 3, {0, 0, 0, 0}, kOpen);
    BOOST_TEST(c.caps.find("shape=(int)< 1, 3, 3, 5 >") != std::string::npos, c.caps);
    BOOST_TEST(c.values.size() == 45u);
  }
  {  // No downstream preference at all (harness sink accepts anything).
    Harness h(gst_harness_new("weaveconvert"));
    auto c = convert(h, "RGB", 5, 3, {0, 0, 0, 0});
    BOOST_TEST(c.caps.find("shape=(int)< 1, 3, 3, 5 >") != std::string::npos, c.caps);
  }
  {  // Rounded up to the multiple.
    Harness h(gst_harness_new_parse("weaveconvert multiple=32"));
    auto c = convert(h, "RGB", 40, 20, {0, 0, 0, 0}, kOpen);
    BOOST_TEST(c.caps.find("shape=(int)< 1, 3, 32, 64 >") != std::string::npos, c.caps);
  }
  {  // Downstream ranges still bound the size.
    Harness h(gst_harness_new("weaveconvert"));
    auto c =
        convert(h, "RGB", 100, 20, {0, 0, 0, 0}, "tensor/x-raw,dtype=float32,shape=(int)<1,3,[1,64],[1,64]>");
    BOOST_TEST(c.caps.find("shape=(int)< 1, 3, 20, 64 >") != std::string::npos, c.caps);
  }
  {  // width/height properties fix the size when downstream leaves it open.
    Harness h(gst_harness_new_parse("weaveconvert width=7 height=2"));
    auto c = convert(h, "RGB", 100, 20, {0, 0, 0, 0}, kOpen);
    BOOST_TEST(c.caps.find("shape=(int)< 1, 3, 2, 7 >") != std::string::npos, c.caps);
  }
}

BOOST_AUTO_TEST_CASE(incompatible_downstream_fails_negotiation) {
  {  // 4 channels
    Harness h(gst_harness_new("weaveconvert"));
    auto c = convert(h, "RGB", 4, 4, {0, 0, 0, 0}, "tensor/x-raw,dtype=float32,shape=(int)<1,4,2,2>");
    BOOST_TEST(c.flow == GST_FLOW_NOT_NEGOTIATED);
  }
  {  // the width property contradicts downstream
    Harness h(gst_harness_new_parse("weaveconvert width=10"));
    auto c = convert(h, "RGB", 4, 4, {0, 0, 0, 0}, "tensor/x-raw,dtype=float32,shape=(int)<1,3,2,2>");
    BOOST_TEST(c.flow == GST_FLOW_NOT_NEGOTIATED);
  }
  {  // NCHW element, NHWC-only downstream
    Harness h(gst_harness_new("weaveconvert"));
    auto c = convert(h, "RGB", 4, 4, {0, 0, 0, 0}, "tensor/x-raw,dtype=float32,shape=(int)<1,224,224,3>");
    BOOST_TEST(c.flow == GST_FLOW_NOT_NEGOTIATED);
  }
}

BOOST_AUTO_TEST_CASE(every_input_format) {
  struct Case {
    const char* format;
    std::array<guint8, 4> px;
    std::array<float, 3> rgb;  // expected tensor values
    float tol;
  };
  const float r = 200 / 255.0f, g = 100 / 255.0f, b = 50 / 255.0f;
  const Case cases[] = {
      {"RGB", {200, 100, 50, 0}, {r, g, b}, 1e-6f},
      {"BGR", {50, 100, 200, 0}, {r, g, b}, 1e-6f},
      {"RGBA", {200, 100, 50, 9}, {r, g, b}, 1e-6f},
      {"RGBx", {200, 100, 50, 9}, {r, g, b}, 1e-6f},
      {"BGRA", {50, 100, 200, 9}, {r, g, b}, 1e-6f},
      {"BGRx", {50, 100, 200, 9}, {r, g, b}, 1e-6f},
      {"GRAY8", {100, 0, 0, 0}, {g, g, g}, 1e-6f},
      // BT.601 limited-range red
      {"I420", {81, 90, 240, 0}, {1.0f, 0.0f, 0.0f}, 0.03f},
      {"NV12", {81, 90, 240, 0}, {1.0f, 0.0f, 0.0f}, 0.03f},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.format) {
      Harness h(gst_harness_new("weaveconvert"));
      auto out = convert(h, c.format, 6, 4, c.px, "tensor/x-raw,dtype=float32,shape=(int)<1,3,2,3>");
      BOOST_TEST_REQUIRE(out.flow == GST_FLOW_OK);
      BOOST_TEST_REQUIRE(out.values.size() == 18u);
      for (int ch = 0; ch < 3; ++ch)
        BOOST_TEST(all_near(out.values, ch * 6, 6, c.rgb[ch], c.tol), "channel " << ch);
    }
  }
}

BOOST_AUTO_TEST_CASE(layout_channel_order_mean_std_scale) {
  Harness h(
      gst_harness_new_parse("weaveconvert layout=nhwc channel-order=bgr mean=0.5,0.25,0 std=\"<0.5, 0.25, "
                            "2>\" scale=0.00392156862745098"));
  auto c = convert(h, "RGB", 2, 2, {255, 51, 0, 0}, kOpenNhwc);
  BOOST_TEST(c.caps.find("shape=(int)< 1, 2, 2, 3 >") != std::string::npos, c.caps);
  BOOST_TEST_REQUIRE(c.values.size() == 12u);
  // BGR order: b = (0 - 0.5)/0.5, g = (0.2 - 0.25)/0.25, r = (1 - 0)/2, interleaved per pixel.
  for (int i = 0; i < 4; ++i) {
    BOOST_TEST(std::fabs(c.values[3 * i] - -1.0f) < 1e-5f);
    BOOST_TEST(std::fabs(c.values[3 * i + 1] - -0.2f) < 1e-5f);
    BOOST_TEST(std::fabs(c.values[3 * i + 2] - 0.5f) < 1e-5f);
  }
}

BOOST_AUTO_TEST_CASE(mean_accepts_value_arrays_and_rejects_garbage) {
  GstElement* e = gst_element_factory_make("weaveconvert", nullptr);
  BOOST_TEST_REQUIRE(e != nullptr);
  GValue arr = G_VALUE_INIT;
  gst_value_array_init(&arr, 3);
  for (float f : {0.5f, 0.25f, 0.125f}) {
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_FLOAT);
    g_value_set_float(&v, f);
    gst_value_array_append_and_take_value(&arr, &v);
  }
  g_object_set_property(G_OBJECT(e), "mean", &arr);
  g_value_unset(&arr);
  gchar* mean = nullptr;
  g_object_get(e, "mean", &mean, nullptr);
  BOOST_TEST(std::string(mean) == "0.5,0.25,0.125");
  g_free(mean);

  g_object_set(e, "mean", "1,2", "std", "1,0,1", nullptr);  // both invalid: values kept
  gchar* std_ = nullptr;
  g_object_get(e, "mean", &mean, "std", &std_, nullptr);
  BOOST_TEST(std::string(mean) == "0.5,0.25,0.125");
  BOOST_TEST(std::string(std_) == "1,1,1");
  g_free(mean);
  g_free(std_);
  gst_object_unref(e);
}

BOOST_AUTO_TEST_CASE(letterbox_pads_and_reports_geometry) {
  Harness h(gst_harness_new_parse("weaveconvert resize=letterbox pad-value=51"));
  // 4x2 white -> 4x4: one border row above, one below.
  auto c = convert(h, "GRAY8", 4, 2, {255, 0, 0, 0}, "tensor/x-raw,dtype=float32,shape=(int)<1,3,4,4>");
  BOOST_TEST_REQUIRE(c.values.size() == 48u);
  for (int ch = 0; ch < 3; ++ch) {
    BOOST_TEST(all_near(c.values, ch * 16, 4, 0.2f));
    BOOST_TEST(all_near(c.values, ch * 16 + 4, 8, 1.0f));
    BOOST_TEST(all_near(c.values, ch * 16 + 12, 4, 0.2f));
  }
  GstElement* e = gst_harness_find_element(h, "weaveconvert");
  gchar* geo = nullptr;
  g_object_get(e, "letterbox", &geo, nullptr);
  BOOST_TEST_REQUIRE(geo != nullptr);
  BOOST_TEST(
      std::string(geo) ==
      "letterbox, scale-x=(double)1, scale-y=(double)1, offset-x=(int)0, offset-y=(int)1, width=(int)4, "
      "height=(int)2;");
  g_free(geo);
  gst_object_unref(e);
}

BOOST_AUTO_TEST_CASE(parse_launch_pipeline_with_caps_filter) {
  GError* err = nullptr;
  GstElement* pipe = gst_parse_launch(
      "videotestsrc num-buffers=5 ! video/x-raw,width=320,height=240 ! weaveconvert ! "
      "tensor/x-raw,shape=<1,3,224,224> ! fakesink name=sink",
      &err);
  BOOST_TEST_REQUIRE(pipe != nullptr, (err ? err->message : ""));
  BOOST_TEST_REQUIRE(gst_element_set_state(pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstBus* bus = gst_element_get_bus(pipe);
  GstMessage* msg = gst_bus_timed_pop_filtered(
      bus, 20 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  BOOST_TEST_REQUIRE(msg != nullptr);
  BOOST_TEST(GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS);
  gst_message_unref(msg);
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipe), "sink");
  GstPad* pad = gst_element_get_static_pad(sink, "sink");
  GstCaps* caps = gst_pad_get_current_caps(pad);
  BOOST_TEST_REQUIRE(caps != nullptr);
  BOOST_TEST(
      same_caps(caps_string(caps),
                "tensor/x-raw, shape=(int)< 1, 3, 224, 224 >, dtype=(string)float32, name=(string)input"),
      caps_string(caps));
  gst_caps_unref(caps);
  gst_object_unref(pad);
  gst_object_unref(sink);
  gst_object_unref(bus);
  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(pipe);
}
