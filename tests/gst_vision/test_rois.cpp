// The ROI pattern through GstHarness: weaveconvert mode=rois (crops batched, origin meta, a GAP
// for a frame without regions, batches split, sizes), weavemeta in each mode (regions found,
// results attached to the regions they were cropped from, gaps, stale tensors, several batches,
// JSON lines, keys errors) and weaveoverlay (drawing on the frame).
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include "caps/roi_meta.h"
#include "caps/tensor_origin.h"
#include "tests/gst_vision/gst_test_util.h"
#include "tests/publish/broker.h"  // TempDir

namespace wv = weave::vision;
namespace wc = weave::caps;

namespace {

// A file name in a folder of this program's own under /tmp, removed with it at exit.
std::string temp_path(const std::string& name) {
  static const weave::test::TempDir dir("weave-rois");
  return (dir.path / name).string();
}

// An RGB frame of w x h (rows padded to 4 bytes, as GStreamer lays them out) of one grey.
GstBuffer* rgb_frame(int w, int h, std::uint8_t grey, GstClockTime pts) {
  const std::size_t stride = (static_cast<std::size_t>(w) * 3 + 3) / 4 * 4;
  std::vector<std::uint8_t> px(stride * h, grey);
  GstBuffer* b = gst_buffer_new_memdup(px.data(), px.size());
  GST_BUFFER_PTS(b) = pts;
  GST_BUFFER_DURATION(b) = GST_SECOND / 10;
  return b;
}

std::string video_caps(int w, int h) {
  return "video/x-raw,format=RGB,width=" + std::to_string(w) + ",height=" + std::to_string(h) +
         ",framerate=10/1";
}

wv::Region text_region(wv::Box box) {
  wv::Region r;
  r.type = "text";
  r.box = box;
  r.score = 0.9f;
  return r;
}

GstBuffer* tensor(const std::vector<float>& v, GstClockTime pts,
                  const std::optional<wc::TensorOrigin>& origin = {}) {
  GstBuffer* b = gst_buffer_new_memdup(v.data(), v.size() * sizeof(float));
  GST_BUFFER_PTS(b) = pts;
  if (origin) wc::set_tensor_origin(b, *origin);
  return b;
}

std::string shape_of(GstHarness* h) {
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  if (caps == nullptr) return "";
  const GValue* shape = gst_structure_get_value(gst_caps_get_structure(caps, 0), "shape");
  gchar* s = shape != nullptr ? gst_value_serialize(shape) : nullptr;
  std::string out = s != nullptr ? s : "";
  g_free(s);
  gst_caps_unref(caps);
  return out;
}

// weavemeta with its two sink pads each fed by a harness; `video` also takes the output.
struct Meta {
  GstElement* element = nullptr;
  GstBus* bus = nullptr;
  GstHarness* video = nullptr;
  GstHarness* tensors = nullptr;
  Meta(const std::function<void(GstElement*)>& configure, int w, int h, const char* tensor_caps) {
    element = gst_element_factory_make("weavemeta", nullptr);
    BOOST_TEST_REQUIRE(element != nullptr);
    configure(element);
    bus = gst_bus_new();
    gst_element_set_bus(element, bus);
    video = gst_harness_new_with_element(element, "video", "src");
    tensors = gst_harness_new_with_element(element, "tensor", nullptr);
    gst_harness_set_src_caps_str(video, video_caps(w, h).c_str());
    gst_harness_set_src_caps_str(tensors, tensor_caps);
  }
  ~Meta() {
    gst_harness_teardown(tensors);
    gst_harness_teardown(video);
    gst_object_unref(element);
    gst_object_unref(bus);
  }
  std::string error() {
    std::string all;
    while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
      GError* e = nullptr;
      gst_message_parse_error(m, &e, nullptr);
      all += std::string(e->message) + "\n";
      g_error_free(e);
      gst_message_unref(m);
    }
    return all;
  }
  guint64 prop(const char* name) {
    guint64 v = 0;
    g_object_get(element, name, &v, nullptr);
    return v;
  }
};

}  // namespace

// ---- weaveconvert mode=rois ----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(convert_rois_batches_the_regions_of_a_frame) {
  GstElement* e = gst_element_factory_make("weaveconvert", nullptr);
  g_object_set(e, "height", 8, "scale", 1.0f, "min-width", 1, "multiple", 1, "max-width", 64, nullptr);
  gst_util_set_object_arg(G_OBJECT(e), "mode", "rois");
  Harness h(gst_harness_new_with_element(e, "sink", "src"));
  gst_harness_set_src_caps_str(h, video_caps(64, 32).c_str());
  GstBuffer* frame = rgb_frame(64, 32, 100, 0);
  wc::add_region(frame, text_region({0, 0, 32, 8}));    // 4:1 -> 32 wide at height 8
  wc::add_region(frame, text_region({40, 40, 8, 8}));   // outside the frame: skipped
  wc::add_region(frame, text_region({10, 20, 16, 8}));  // 2:1 -> 16 wide
  GstBuffer* out = gst_harness_push_and_pull(h, frame);
  BOOST_TEST_REQUIRE(out != nullptr);
  BOOST_TEST(shape_of(h) == "< (int)2, (int)3, (int)8, (int)32 >");
  BOOST_TEST(gst_buffer_get_size(out) == 2u * 3 * 8 * 32 * sizeof(float));
  auto origin = wc::tensor_origin(out);
  BOOST_TEST_REQUIRE(origin.has_value());
  BOOST_TEST(origin->roi_ids == (std::vector<int>{0, 2}));
  BOOST_TEST(origin->frame_width == 64);
  BOOST_TEST(origin->batches == 1);
  const auto v = floats_of(out);
  BOOST_TEST(v[3 * 8 * 32 + 2 * 32 + 3] == 100.0f);  // crop 1 content
  BOOST_TEST(v[3 * 8 * 32 + 2 * 32 + 20] == 0.0f);   // crop 1 padding (pad-value 0)
  BOOST_TEST(GST_BUFFER_PTS(out) == 0u);
  gst_buffer_unref(out);
  guint64 crops = 0;
  g_object_get(e, "crops", &crops, nullptr);
  BOOST_TEST(crops == 2u);
  gst_object_unref(e);
}

// width-tolerance: regions of very different widths go in batches of their own, widest first, each
// naming the regions it holds (weavemeta attaches rows by these ids, not by order).
BOOST_AUTO_TEST_CASE(convert_rois_batches_crops_of_similar_widths_and_names_their_regions) {
  GstElement* e = gst_element_factory_make("weaveconvert", nullptr);
  g_object_set(e, "height", 8, "scale", 1.0f, "min-width", 1, "multiple", 1, "max-width", 64,
               "width-tolerance", 0.25, nullptr);
  gst_util_set_object_arg(G_OBJECT(e), "mode", "rois");
  Harness h(gst_harness_new_with_element(e, "sink", "src"));
  gst_harness_set_src_caps_str(h, video_caps(64, 32).c_str());
  GstBuffer* frame = rgb_frame(64, 32, 100, 0);
  wc::add_region(frame, text_region({0, 0, 8, 8}));    // 8 wide
  wc::add_region(frame, text_region({0, 8, 48, 8}));   // 48
  wc::add_region(frame, text_region({0, 16, 40, 8}));  // 40 >= 0.75 * 48
  BOOST_TEST(gst_harness_push(h, frame) == GST_FLOW_OK);
  BOOST_TEST_REQUIRE(gst_harness_buffers_in_queue(h) == 2u);
  GstBuffer* wide = gst_harness_pull(h);
  GstBuffer* narrow = gst_harness_pull(h);
  const auto a = wc::tensor_origin(wide), b = wc::tensor_origin(narrow);
  BOOST_TEST_REQUIRE((a.has_value() && b.has_value()));
  BOOST_TEST(a->roi_ids == (std::vector<int>{1, 2}));
  BOOST_TEST(b->roi_ids == (std::vector<int>{0}));
  BOOST_TEST((a->batches == 2 && b->batches == 2 && a->batch == 0 && b->batch == 1));
  BOOST_TEST(gst_buffer_get_size(wide) == 2u * 3 * 8 * 48 * sizeof(float));
  BOOST_TEST(gst_buffer_get_size(narrow) == 1u * 3 * 8 * 8 * sizeof(float));
  gst_buffer_unref(wide);
  gst_buffer_unref(narrow);
  gst_object_unref(e);
}

BOOST_AUTO_TEST_CASE(convert_rois_sends_a_gap_for_a_frame_without_regions_and_splits_batches) {
  GstElement* e = gst_element_factory_make("weaveconvert", nullptr);
  g_object_set(e, "height", 8, "width", 16, "max-batch", 1, nullptr);
  gst_util_set_object_arg(G_OBJECT(e), "mode", "rois");
  Harness h(gst_harness_new_with_element(e, "sink", "src"));
  gst_harness_set_src_caps_str(h, video_caps(64, 32).c_str());
  // No region: no tensor, a gap at the frame's time.
  BOOST_TEST(gst_harness_push(h, rgb_frame(64, 32, 0, 0)) == GST_FLOW_OK);
  BOOST_TEST(gst_harness_buffers_in_queue(h) == 0u);
  bool gap = false;
  while (GstEvent* ev = gst_harness_try_pull_event(h)) {
    if (GST_EVENT_TYPE(ev) == GST_EVENT_GAP) {
      GstClockTime ts = 1, dur = 0;
      gst_event_parse_gap(ev, &ts, &dur);
      gap = ts == 0 && dur == GST_SECOND / 10;
    }
    gst_event_unref(ev);
  }
  BOOST_TEST(gap);
  // Two regions and batches of one: two tensors, fixed width 16.
  GstBuffer* frame = rgb_frame(64, 32, 50, GST_SECOND / 10);
  wc::add_region(frame, text_region({0, 0, 64, 8}));
  wc::add_region(frame, text_region({0, 8, 8, 8}));
  BOOST_TEST(gst_harness_push(h, frame) == GST_FLOW_OK);
  BOOST_TEST_REQUIRE(gst_harness_buffers_in_queue(h) == 2u);
  for (int k = 0; k < 2; ++k) {
    GstBuffer* out = gst_harness_pull(h);
    auto origin = wc::tensor_origin(out);
    BOOST_TEST_REQUIRE(origin.has_value());
    BOOST_TEST(origin->batch == k);
    BOOST_TEST(origin->batches == 2);
    BOOST_TEST(origin->roi_ids == std::vector<int>{k});
    BOOST_TEST(gst_buffer_get_size(out) == 3u * 8 * 16 * sizeof(float));
    gst_buffer_unref(out);
  }
  BOOST_TEST(shape_of(h) == "< (int)1, (int)3, (int)8, (int)16 >");
  gst_object_unref(e);
}

BOOST_AUTO_TEST_CASE(convert_frame_mode_carries_the_geometry_and_limits_its_side) {
  GstElement* e = gst_element_factory_make("weaveconvert", nullptr);
  g_object_set(e, "max-side", 32, "multiple", 8, nullptr);
  Harness h(gst_harness_new_with_element(e, "sink", "src"));
  gst_harness_set_src_caps_str(h, video_caps(64, 20).c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, rgb_frame(64, 20, 10, 0));
  BOOST_TEST_REQUIRE(out != nullptr);
  BOOST_TEST(shape_of(h) == "< (int)1, (int)3, (int)16, (int)32 >");  // 64x20 -> 32x10 -> rounded up to 32x16
  auto origin = wc::tensor_origin(out);
  BOOST_TEST_REQUIRE(origin.has_value());
  BOOST_TEST(origin->frame_width == 64);
  BOOST_TEST(origin->input_height == 16);
  BOOST_TEST(origin->geometry.scale_x == 0.5);
  BOOST_TEST(origin->geometry.scale_y == 0.8);
  gst_buffer_unref(out);
  gst_object_unref(e);
}

// reclassify-interval=3: a tracked region is cropped on its track's first frame and every 3rd
// after; an untracked region on every frame.
BOOST_AUTO_TEST_CASE(convert_rois_crops_a_track_again_only_every_reclassify_interval_frames) {
  GstElement* e = gst_element_factory_make("weaveconvert", nullptr);
  g_object_set(e, "height", 8, "width", 16, "scale", 1.0f, "reclassify-interval", 3, nullptr);
  gst_util_set_object_arg(G_OBJECT(e), "mode", "rois");
  Harness h(gst_harness_new_with_element(e, "sink", "src"));
  gst_harness_set_src_caps_str(h, video_caps(64, 32).c_str());
  std::vector<std::size_t> crops;
  for (int f = 0; f < 7; ++f) {
    GstBuffer* frame = rgb_frame(64, 32, 100, static_cast<GstClockTime>(f) * GST_SECOND / 10);
    wv::Region a = text_region({0, 0, 16, 8});
    a.track = wv::TrackTag{1, f, false};
    wc::add_region(frame, a);
    wc::add_region(frame, text_region({20, 0, 16, 8}));  // no track
    if (f >= 2) {
      wv::Region b = text_region({40, 10, 16, 8});
      b.track = wv::TrackTag{2, f - 2, false};
      wc::add_region(frame, b);
    }
    GstBuffer* out = gst_harness_push_and_pull(h, frame);
    BOOST_TEST_REQUIRE(out != nullptr);
    const auto origin = wc::tensor_origin(out);
    BOOST_TEST_REQUIRE(origin.has_value());
    crops.push_back(origin->roi_ids.size());
    gst_buffer_unref(out);
  }
  // Track 1 on frames 0, 3, 6; track 2 (from frame 2) on 2, 5; the untracked region always.
  BOOST_TEST(crops == (std::vector<std::size_t>{2, 1, 2, 2, 1, 2, 2}));
}

// ---- weavemeta -----------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(meta_db_adds_text_regions_mapped_to_the_frame) {
  const std::string json = temp_path("db.jsonl");
  Meta m([&](GstElement* e) { g_object_set(e, "json", json.c_str(), nullptr); }, 160, 80,
         "tensor/x-raw,dtype=float32,shape=(int)<1,1,40,80>");
  gst_harness_play(m.video);
  gst_harness_play(m.tensors);
  std::vector<float> map(40 * 80, 0.0f);
  for (int y = 10; y < 16; ++y)
    for (int x = 20; x < 60; ++x) map[static_cast<std::size_t>(y) * 80 + x] = 0.9f;
  wc::TensorOrigin origin;
  origin.frame_width = 160;
  origin.frame_height = 80;
  origin.input_width = 80;
  origin.input_height = 40;
  origin.geometry.scale_x = origin.geometry.scale_y = 0.5;
  BOOST_TEST(gst_harness_push(m.tensors, tensor(map, 0, origin)) == GST_FLOW_OK);
  BOOST_TEST(gst_harness_push(m.video, rgb_frame(160, 80, 0, 0)) == GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(m.video);
  BOOST_TEST_REQUIRE(out != nullptr);
  const auto regions = wc::read_regions(out);
  BOOST_TEST_REQUIRE(regions.size() == 1u);
  BOOST_TEST(regions[0].type == "text");
  BOOST_TEST(regions[0].quad.has_value());
  BOOST_TEST(regions[0].score > 0.85f);
  BOOST_TEST(regions[0].box.x < 40);  // 20 map pixels = 40 frame pixels, grown
  BOOST_TEST(regions[0].box.x + regions[0].box.width > 120);
  gst_buffer_unref(out);
  BOOST_TEST(m.prop("regions") == 1u);
  std::ifstream in(json);
  std::string line;
  BOOST_TEST_REQUIRE(static_cast<bool>(std::getline(in, line)));
  BOOST_TEST(line.find("{\"pts\":0,\"texts\":[{\"score\":") == 0u, line);
}

BOOST_AUTO_TEST_CASE(meta_ctc_attaches_each_row_to_the_region_it_was_cropped_from) {
  const std::string keys = temp_path("keys.txt");
  std::ofstream(keys) << "a\nb\nc\n";  // classes: blank, a, b, c, space
  Meta m(
      [&](GstElement* e) {
        gst_util_set_object_arg(G_OBJECT(e), "mode", "ctc");
        g_object_set(e, "labels", keys.c_str(), nullptr);
      },
      64, 32, "tensor/x-raw,dtype=float32,shape=(int)<2,3,5>");
  gst_harness_play(m.video);
  gst_harness_play(m.tensors);
  GstBuffer* frame = rgb_frame(64, 32, 0, 0);
  wc::add_region(frame, text_region({0, 0, 10, 10}));
  wc::add_region(frame, text_region({20, 0, 10, 10}));
  // Row 0 reads "ab", row 1 "c"; the rows were cut from regions 1 and 0, in that order.
  auto onehot = [](int c) {
    std::vector<float> r(5, 0.0f);
    r[static_cast<std::size_t>(c)] = 1.0f;
    return r;
  };
  std::vector<float> t;
  for (int c : {1, 2, 0, 3, 0, 0}) {
    auto r = onehot(c);
    t.insert(t.end(), r.begin(), r.end());
  }
  wc::TensorOrigin origin;
  origin.roi_ids = {1, 0};
  BOOST_TEST(gst_harness_push(m.video, frame) == GST_FLOW_OK);
  BOOST_TEST(gst_harness_push(m.tensors, tensor(t, 0, origin)) == GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(m.video);
  BOOST_TEST_REQUIRE(out != nullptr);
  const auto regions = wc::read_regions(out, "text");
  BOOST_TEST_REQUIRE(regions.size() == 2u);
  BOOST_TEST_REQUIRE(regions[0].text.has_value());
  BOOST_TEST(regions[0].text->text == "c");
  BOOST_TEST(regions[1].text->text == "ab");
  BOOST_TEST(regions[1].text->score == 1.0f);
  // Each character's confidence travels in the meta (char-confidences) and back.
  BOOST_TEST((regions[1].text->char_scores == std::vector<float>{1.0f, 1.0f}));
  BOOST_TEST((regions[0].text->char_scores == std::vector<float>{1.0f}));
  gst_buffer_unref(out);
  BOOST_TEST(m.prop("results") == 2u);
}

// merge=line: the JSON joins the two reads on one line ("c" left of "ab"), listing both boxes;
// the frame keeps one meta per box.
BOOST_AUTO_TEST_CASE(meta_ctc_merge_line_writes_lines_and_keeps_a_meta_per_box) {
  const std::string keys = temp_path("keys_lines.txt");
  const std::string json = temp_path("lines.jsonl");
  std::ofstream(keys) << "a\nb\nc\n";
  Meta m(
      [&](GstElement* e) {
        gst_util_set_object_arg(G_OBJECT(e), "mode", "ctc");
        gst_util_set_object_arg(G_OBJECT(e), "merge", "line");
        g_object_set(e, "labels", keys.c_str(), "json", json.c_str(), nullptr);
      },
      64, 32, "tensor/x-raw,dtype=float32,shape=(int)<2,3,5>");
  int merge = -1;
  g_object_get(m.element, "merge", &merge, nullptr);
  BOOST_TEST(merge == 1);
  gst_harness_play(m.video);
  gst_harness_play(m.tensors);
  GstBuffer* frame = rgb_frame(64, 32, 0, 0);
  wc::add_region(frame, text_region({0, 0, 10, 10}));
  wc::add_region(frame, text_region({14, 0, 10, 10}));
  std::vector<float> t(2 * 3 * 5, 0.0f);
  const int classes[] = {1, 2, 0, 3, 0, 0};  // row 0 "ab", row 1 "c"
  for (int k = 0; k < 6; ++k) t[static_cast<std::size_t>(k) * 5 + classes[k]] = 1.0f;
  wc::TensorOrigin origin;
  origin.roi_ids = {1, 0};
  BOOST_TEST(gst_harness_push(m.video, frame) == GST_FLOW_OK);
  BOOST_TEST(gst_harness_push(m.tensors, tensor(t, 0, origin)) == GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(m.video);
  BOOST_TEST_REQUIRE(out != nullptr);
  BOOST_TEST(wc::read_regions(out, "text").size() == 2u);
  gst_buffer_unref(out);
  std::ifstream in(json);
  std::string line;
  BOOST_TEST_REQUIRE(static_cast<bool>(std::getline(in, line)));
  BOOST_TEST(
      line.find("{\"pts\":0,\"texts\":[{\"text\":\"c ab\",\"score\":1,\"box\":[[0,0],[24,0],[24,10],[0,10]],"
                "\"words\":[{\"text\":\"c\"") == 0u,
      line);
}

BOOST_AUTO_TEST_CASE(meta_lets_frames_without_tensor_go_and_drops_stale_tensors) {
  const std::string json = temp_path("gap.jsonl");
  Meta m(
      [&](GstElement* e) {
        gst_util_set_object_arg(G_OBJECT(e), "mode", "classification");
        g_object_set(e, "json", json.c_str(), nullptr);
      },
      32, 16, "tensor/x-raw,dtype=float32,shape=(int)<1,2>");
  gst_harness_play(m.video);
  gst_harness_play(m.tensors);
  const GstClockTime f = GST_SECOND / 10;
  // Frame 0: a gap in place of its tensor (no region to crop) -> goes out unchanged.
  BOOST_TEST(gst_harness_push(m.video, rgb_frame(32, 16, 0, 0)) == GST_FLOW_OK);
  BOOST_TEST(gst_harness_push_event(m.tensors, gst_event_new_gap(0, f)));
  GstBuffer* out = gst_harness_pull(m.video);
  BOOST_TEST_REQUIRE(out != nullptr);
  BOOST_TEST(GST_BUFFER_PTS(out) == 0u);
  BOOST_TEST(wc::read_regions(out).empty());
  BOOST_TEST(!wc::is_skipped(out));  // a per-region mode's gap: nothing to crop, not a skipped frame
  gst_buffer_unref(out);
  // A tensor for a time whose frame already went is dropped; frame 1 then takes its own.
  GstBuffer* frame = rgb_frame(32, 16, 0, f);
  wc::add_region(frame, text_region({0, 0, 8, 8}));
  BOOST_TEST(gst_harness_push(m.tensors, tensor({0.2f, 0.8f}, 0)) == GST_FLOW_OK);
  BOOST_TEST(gst_harness_push(m.video, frame) == GST_FLOW_OK);
  BOOST_TEST(gst_harness_push(m.tensors, tensor({0.7f, 0.3f}, f)) == GST_FLOW_OK);
  out = gst_harness_pull(m.video);
  BOOST_TEST_REQUIRE(out != nullptr);
  auto regions = wc::read_regions(out);
  BOOST_TEST_REQUIRE(regions.size() == 1u);
  BOOST_TEST_REQUIRE(regions[0].classes.size() == 1u);
  BOOST_TEST(regions[0].classes[0].name == "classification");
  BOOST_TEST(regions[0].classes[0].class_id == 0);
  BOOST_TEST(regions[0].classes[0].score == 0.7f);
  gst_buffer_unref(out);
  BOOST_TEST(m.prop("dropped") == 1u);
  // Frame 2's tensor never comes (the tensor stream ends): the frame still goes.
  BOOST_TEST(gst_harness_push(m.video, rgb_frame(32, 16, 0, 2 * f)) == GST_FLOW_OK);
  BOOST_TEST(gst_harness_push_event(m.tensors, gst_event_new_eos()));
  out = gst_harness_pull(m.video);
  BOOST_TEST_REQUIRE(out != nullptr);
  BOOST_TEST(GST_BUFFER_PTS(out) == 2 * f);
  gst_buffer_unref(out);
  BOOST_TEST(m.prop("frames") == 3u);
  std::ifstream in(json);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  BOOST_TEST_REQUIRE(lines.size() == 3u);
  // Classification of any region makes no array of its own: frame 0 has none; frame 1's text
  // region brings "texts", which frame 2 keeps, empty (core/vision/json.h).
  BOOST_TEST(lines[0] == "{\"pts\":0}");
  BOOST_TEST(lines[1].find("\"texts\":[{") != std::string::npos, lines[1]);
  BOOST_TEST(lines[2] == "{\"pts\":200000000,\"texts\":[]}");
}

BOOST_AUTO_TEST_CASE(meta_waits_for_every_batch_of_a_frame) {
  Meta m([](GstElement* e) { gst_util_set_object_arg(G_OBJECT(e), "mode", "angle"); }, 32, 16,
         "tensor/x-raw,dtype=float32,shape=(int)<1,2>");
  gst_harness_play(m.video);
  gst_harness_play(m.tensors);
  GstBuffer* frame = rgb_frame(32, 16, 0, 0);
  wc::add_region(frame, text_region({0, 0, 8, 8}));
  wc::add_region(frame, text_region({8, 0, 8, 8}));
  BOOST_TEST(gst_harness_push(m.video, frame) == GST_FLOW_OK);
  wc::TensorOrigin first;
  first.roi_ids = {0};
  first.batches = 2;
  wc::TensorOrigin second = first;
  second.roi_ids = {1};
  second.batch = 1;
  BOOST_TEST(gst_harness_push(m.tensors, tensor({0.05f, 0.95f}, 0, first)) == GST_FLOW_OK);
  BOOST_TEST(gst_harness_try_pull(m.video) == nullptr);  // half of it only
  BOOST_TEST(gst_harness_push(m.tensors, tensor({0.9f, 0.1f}, 0, second)) == GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(m.video);
  BOOST_TEST_REQUIRE(out != nullptr);
  const auto regions = wc::read_regions(out);
  BOOST_TEST_REQUIRE(regions.size() == 2u);
  BOOST_TEST(regions[0].angle.value_or(-1) == 180);
  BOOST_TEST(regions[1].angle.value_or(-1) == 0);
  BOOST_TEST(regions[0].classes.empty());
  gst_buffer_unref(out);
}

BOOST_AUTO_TEST_CASE(meta_yolo_adds_labelled_boxes) {
  const std::string labels = temp_path("yolo_labels.txt");
  std::ofstream(labels) << "cat\ndog\n";
  Meta m(
      [&](GstElement* e) {
        gst_util_set_object_arg(G_OBJECT(e), "mode", "yolo");
        g_object_set(e, "labels", labels.c_str(), nullptr);
      },
      64, 64, "tensor/x-raw,dtype=float32,shape=(int)<1,2,7>");
  gst_harness_play(m.video);
  gst_harness_play(m.tensors);
  BOOST_TEST(gst_harness_push(m.video, rgb_frame(64, 64, 0, 0)) == GST_FLOW_OK);
  // Without an origin meta, boxes are in frame pixels.
  BOOST_TEST(gst_harness_push(m.tensors,
                              tensor({32, 32, 16, 8, 0.9f, 0.1f, 0.9f, 5, 5, 4, 4, 0.1f, 0.5f, 0.5f}, 0)) ==
             GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(m.video);
  BOOST_TEST_REQUIRE(out != nullptr);
  const auto regions = wc::read_regions(out);
  BOOST_TEST_REQUIRE(regions.size() == 1u);
  BOOST_TEST(regions[0].type == "dog");
  BOOST_TEST(regions[0].label == "dog");
  BOOST_TEST(regions[0].class_id == 1);
  BOOST_TEST((regions[0].box == wv::Box{24, 28, 16, 8}));
  gst_buffer_unref(out);
}

BOOST_AUTO_TEST_CASE(meta_yolov8_and_ssd_map_boxes_through_the_geometry) {
  // The model saw the 128x64 frame letterboxed into 64x64: scale 0.5, 16 rows of padding on top.
  wc::TensorOrigin origin;
  origin.frame_width = 128;
  origin.frame_height = 64;
  origin.input_width = 64;
  origin.input_height = 64;
  origin.geometry.scale_x = origin.geometry.scale_y = 0.5;
  origin.geometry.offset_y = 16;
  {
    Meta m([](GstElement* e) { gst_util_set_object_arg(G_OBJECT(e), "mode", "yolov8"); }, 128, 64,
           "tensor/x-raw,dtype=float32,shape=(int)<1,6,2>");
    gst_harness_play(m.video);
    gst_harness_play(m.tensors);
    BOOST_TEST(gst_harness_push(m.video, rgb_frame(128, 64, 0, 0)) == GST_FLOW_OK);
    // Columns: one box of class 1 at (32,32) 16x8 in input pixels, one below the threshold.
    const std::vector<float> t = {32, 10, 32, 10, 16, 2, 8, 2, 0.1f, 0.05f, 0.8f, 0.1f};
    BOOST_TEST(gst_harness_push(m.tensors, tensor(t, 0, origin)) == GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(m.video);
    BOOST_TEST_REQUIRE(out != nullptr);
    const auto regions = wc::read_regions(out);
    BOOST_TEST_REQUIRE(regions.size() == 1u);
    BOOST_TEST(regions[0].class_id == 1);
    BOOST_TEST((regions[0].box == wv::Box{48, 24, 32, 16}));  // (24..40, 28..36) -> frame pixels
    gst_buffer_unref(out);
  }
  {
    Meta m([](GstElement* e) { gst_util_set_object_arg(G_OBJECT(e), "mode", "ssd"); }, 128, 64,
           "tensor/x-raw,dtype=float32,shape=(int)<1,1,2,7>");
    gst_harness_play(m.video);
    gst_harness_play(m.tensors);
    BOOST_TEST(gst_harness_push(m.video, rgb_frame(128, 64, 0, 0)) == GST_FLOW_OK);
    // Normalized corners over the 64x64 input: (0.25,0.25)-(0.75,0.75) = 16..48 -> frame 32..96 x 0..64.
    const std::vector<float> t = {0, 7, 0.9f, 0.25f, 0.25f, 0.75f, 0.75f, -1, 0, 0, 0, 0, 0, 0};
    BOOST_TEST(gst_harness_push(m.tensors, tensor(t, 0, origin)) == GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(m.video);
    BOOST_TEST_REQUIRE(out != nullptr);
    const auto regions = wc::read_regions(out);
    BOOST_TEST_REQUIRE(regions.size() == 1u);
    BOOST_TEST(regions[0].class_id == 7);
    BOOST_TEST(regions[0].type == "7");
    BOOST_TEST((regions[0].box == wv::Box{32, 0, 64, 64}));
    gst_buffer_unref(out);
  }
}

BOOST_AUTO_TEST_CASE(meta_keys_of_the_wrong_size_stop_the_stream_naming_both_numbers) {
  const std::string keys = temp_path("three_keys.txt");
  std::ofstream(keys) << "a\nb\nc\n";
  Meta m(
      [&](GstElement* e) {
        gst_util_set_object_arg(G_OBJECT(e), "mode", "ctc");
        g_object_set(e, "labels", keys.c_str(), nullptr);
      },
      32, 16, "tensor/x-raw,dtype=float32,shape=(int)<1,4,10>");
  gst_harness_play(m.video);
  gst_harness_play(m.tensors);
  gst_harness_push(m.video, rgb_frame(32, 16, 0, 0));
  gst_harness_push(m.tensors, tensor(std::vector<float>(40, 0.1f), 0));
  std::string error;
  for (int i = 0; i < 200 && error.empty(); ++i) {
    g_usleep(10000);
    error = m.error();
  }
  BOOST_TEST(error.find("3 keys") != std::string::npos, error);
  BOOST_TEST(error.find("10 classes") != std::string::npos, error);
  BOOST_TEST(error.find(keys) != std::string::npos, error);
}

BOOST_AUTO_TEST_CASE(meta_missing_keys_file_is_an_error_naming_it) {
  GstElement* e = gst_element_factory_make("weavemeta", nullptr);
  gst_util_set_object_arg(G_OBJECT(e), "mode", "ctc");
  g_object_set(e, "labels", "/nonexistent/weave/keys.txt", nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  BOOST_TEST(gst_element_set_state(e, GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE);
  GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  BOOST_TEST_REQUIRE(msg != nullptr);
  GError* err = nullptr;
  gst_message_parse_error(msg, &err, nullptr);
  BOOST_TEST(std::string(err->message).find("/nonexistent/weave/keys.txt") != std::string::npos,
             err->message);
  g_error_free(err);
  gst_message_unref(msg);
  gst_element_set_state(e, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(e);
}

// A detection mode's gap: the detector did not run (weaveinfer inference-interval), so the frame
// is marked skipped for weavetrack; a frame with its tensor is not.
BOOST_AUTO_TEST_CASE(meta_marks_a_frame_whose_detection_tensor_is_a_gap_as_skipped) {
  Meta m([](GstElement*) {}, 64, 32, "tensor/x-raw,dtype=float32,shape=(int)<1,1,16,32>");
  gst_harness_play(m.video);
  gst_harness_play(m.tensors);
  const GstClockTime f = GST_SECOND / 10;
  BOOST_TEST(gst_harness_push(m.video, rgb_frame(64, 32, 0, 0)) == GST_FLOW_OK);
  wc::TensorOrigin origin;
  origin.frame_width = 64;
  origin.frame_height = 32;
  origin.input_width = 32;
  origin.input_height = 16;
  origin.geometry.scale_x = origin.geometry.scale_y = 0.5;
  BOOST_TEST(gst_harness_push(m.tensors, tensor(std::vector<float>(16 * 32, 0.0f), 0, origin)) ==
             GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(m.video);
  BOOST_TEST_REQUIRE(out != nullptr);
  BOOST_TEST(!wc::is_skipped(out));
  gst_buffer_unref(out);
  BOOST_TEST(gst_harness_push(m.video, rgb_frame(64, 32, 0, f)) == GST_FLOW_OK);
  BOOST_TEST(gst_harness_push_event(m.tensors, gst_event_new_gap(f, f)));
  out = gst_harness_pull(m.video);
  BOOST_TEST_REQUIRE(out != nullptr);
  BOOST_TEST(GST_BUFFER_PTS(out) == f);
  BOOST_TEST(wc::is_skipped(out));
  gst_buffer_unref(out);
}

// track-results: the reads of a tracked region fold into its track; each frame reports the vote
// (or, with track-results=frame, its own read); a frame without a read reports the track's.
BOOST_AUTO_TEST_CASE(meta_ctc_reports_the_vote_of_a_track_on_every_frame_of_it) {
  const std::string keys = temp_path("vote_keys.txt");
  std::ofstream(keys) << "a\nb\nc\n";  // classes: blank, a, b, c, space
  auto onehot_rows = [](std::initializer_list<int> classes) {
    std::vector<float> t;
    for (int c : classes) {
      std::vector<float> r(5, 0.0f);
      r[static_cast<std::size_t>(c)] = 1.0f;
      t.insert(t.end(), r.begin(), r.end());
    }
    return t;
  };
  for (const char* history : {"vote", "frame"}) {
    Meta m(
        [&](GstElement* e) {
          gst_util_set_object_arg(G_OBJECT(e), "mode", "ctc");
          gst_util_set_object_arg(G_OBJECT(e), "track-results", history);
          g_object_set(e, "labels", keys.c_str(), nullptr);
        },
        64, 32, "tensor/x-raw,dtype=float32,shape=(int)<1,2,5>");
    gst_harness_play(m.video);
    gst_harness_play(m.tensors);
    const GstClockTime f = GST_SECOND / 10;
    std::vector<std::string> reported;
    // Frames 0, 1 read "ab", frame 2 "c", frame 3 has no read (a gap: its crop was not due).
    const std::vector<std::vector<float>> reads = {onehot_rows({1, 2}), onehot_rows({1, 2}),
                                                   onehot_rows({3, 0})};
    for (int k = 0; k < 4; ++k) {
      GstBuffer* frame = rgb_frame(64, 32, 0, k * f);
      wv::Region r = text_region({0, 0, 10, 10});
      r.track = wv::TrackTag{5, k, false};
      wc::add_region(frame, r);
      BOOST_TEST(gst_harness_push(m.video, frame) == GST_FLOW_OK);
      if (k < 3) {
        wc::TensorOrigin origin;
        origin.roi_ids = {0};
        BOOST_TEST(gst_harness_push(m.tensors, tensor(reads[static_cast<std::size_t>(k)], k * f, origin)) ==
                   GST_FLOW_OK);
      } else {
        BOOST_TEST(gst_harness_push_event(m.tensors, gst_event_new_gap(k * f, f)));
      }
      GstBuffer* out = gst_harness_pull(m.video);
      BOOST_TEST_REQUIRE(out != nullptr);
      const auto regions = wc::read_regions(out);
      BOOST_TEST_REQUIRE(regions.size() == 1u);
      reported.push_back(regions[0].text ? regions[0].text->text : "-");
      gst_buffer_unref(out);
    }
    if (std::string(history) == "vote")
      BOOST_TEST(reported == (std::vector<std::string>{"ab", "ab", "ab", "ab"}));
    else
      BOOST_TEST(reported == (std::vector<std::string>{"ab", "ab", "c", "-"}));
  }
}

// ---- weaveoverlay --------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(overlay_draws_the_boxes_of_a_frame_and_leaves_others_alone) {
  Harness h(gst_harness_new("weaveoverlay"));
  gst_harness_set_src_caps_str(h, "video/x-raw,format=BGRx,width=64,height=48,framerate=10/1");
  auto pixel = [](GstBuffer* b, int x, int y) {
    GstMapInfo map;
    gst_buffer_map(b, &map, GST_MAP_READ);
    std::array<int, 4> p{};
    for (int c = 0; c < 4; ++c) p[static_cast<std::size_t>(c)] = map.data[(y * 64 + x) * 4 + c];
    gst_buffer_unmap(b, &map);
    return p;
  };
  GstBuffer* plain = gst_buffer_new_allocate(nullptr, 64 * 48 * 4, nullptr);
  gst_buffer_memset(plain, 0, 0, 64 * 48 * 4);
  GstBuffer* out = gst_harness_push_and_pull(h, plain);
  BOOST_TEST((pixel(out, 10, 30) == std::array<int, 4>{0, 0, 0, 0}));
  gst_buffer_unref(out);
  GstBuffer* frame = gst_buffer_new_allocate(nullptr, 64 * 48 * 4, nullptr);
  gst_buffer_memset(frame, 0, 0, 64 * 48 * 4);
  wv::Region r = text_region({10, 20, 40, 20});
  r.text = wv::TextResult{"hi", 0.5f};
  wc::add_region(frame, r);
  out = gst_harness_push_and_pull(h, frame);
  const auto edge = pixel(out, 10, 30);  // on the left edge of the box: green in BGRx
  BOOST_TEST(edge[1] > 100);
  BOOST_TEST(edge[2] < 60);
  BOOST_TEST((pixel(out, 30, 46) == std::array<int, 4>{0, 0, 0, 0}));  // below the box
  BOOST_TEST(wc::read_regions(out).size() == 1u);                      // the metas stay
  gst_buffer_unref(out);
}
