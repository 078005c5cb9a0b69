// weavetrack through GstHarness: ids on moving regions (none on a track's first frame, then one
// per object, never shared), predicted regions through a gap, weak and filtered regions passed
// through untouched, a flush forgetting the tracks, settings changed while playing, and the ids
// in the JSON and on the overlay label.
#include <map>
#include <set>

#include "caps/roi_meta.h"
#include "core/vision/draw.h"
#include "core/vision/json.h"
#include "tests/gst_vision/gst_test_util.h"

namespace wv = weave::vision;
namespace wc = weave::caps;

namespace {

constexpr int kW = 320, kH = 240;

GstBuffer* frame_with(const std::vector<wv::Region>& regions, int index) {
  GstBuffer* b = gst_buffer_new_allocate(nullptr, kW * kH * 4, nullptr);
  GST_BUFFER_PTS(b) = static_cast<GstClockTime>(index) * GST_SECOND / 10;
  GST_BUFFER_DURATION(b) = GST_SECOND / 10;
  for (const wv::Region& r : regions) wc::add_region(b, r);
  return b;
}

wv::Region region(const char* type, wv::Box box, float score = 0.9f) {
  wv::Region r;
  r.type = type;
  r.box = box;
  r.score = score;
  return r;
}

struct Tracked {
  GstHarness* h;
  explicit Tracked(const char* launch) : h(gst_harness_new_parse(launch)) {
    gst_harness_set_src_caps_str(h, "video/x-raw,format=BGRx,width=320,height=240,framerate=10/1");
  }
  ~Tracked() { gst_harness_teardown(h); }
  // Pushes a frame with `regions` and returns the regions that come out.
  std::vector<wv::Region> push(const std::vector<wv::Region>& regions, int index) {
    GstBuffer* out = gst_harness_push_and_pull(h, frame_with(regions, index));
    BOOST_TEST_REQUIRE(out != nullptr);
    std::vector<wv::Region> got = wc::read_regions(out);
    gst_buffer_unref(out);
    return got;
  }
  GstElement* element() const { return gst_bin_get_by_name(GST_BIN(h->element), "t"); }
};

std::uint64_t track_of(const wv::Region& r) {
  return r.track ? r.track->id : 0;
}

}  // namespace

BOOST_AUTO_TEST_CASE(track_gives_each_moving_region_one_id_from_its_second_frame) {
  Tracked t("weavetrack name=t");
  std::map<std::string, std::uint64_t> ids;
  for (int f = 0; f < 30; ++f) {
    const auto out =
        t.push({region("text", {10 + 5 * f, 20, 60, 20}), region("car", {250 - 4 * f, 150, 50, 40}),
                region("text", {100, 200 - 2 * f, 80, 24})},
               f);
    BOOST_TEST_REQUIRE(out.size() == 3u);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const std::string key = std::to_string(i);
      if (f == 0) {
        BOOST_TEST(!out[i].track.has_value());  // tentative on its first frame
        continue;
      }
      BOOST_TEST_REQUIRE(out[i].track.has_value());
      BOOST_TEST(out[i].track->age == f);
      BOOST_TEST(!out[i].track->predicted);
      if (f == 1) ids[key] = out[i].track->id;
      BOOST_TEST(out[i].track->id == ids[key], "region " << i << " frame " << f);
    }
  }
  std::set<std::uint64_t> distinct;
  for (auto& [k, id] : ids) distinct.insert(id);
  BOOST_TEST(distinct.size() == 3u);
  GstElement* e = t.element();
  guint tracks = 0;
  guint64 started = 0, frames = 0;
  g_object_get(e, "tracks", &tracks, "tracks-started", &started, "frames", &frames, nullptr);
  BOOST_TEST(tracks == 3u);
  BOOST_TEST(started == 3u);
  BOOST_TEST(frames == 30u);
  gst_object_unref(e);
}

BOOST_AUTO_TEST_CASE(track_ids_reach_the_json_and_the_overlay_label) {
  Tracked t("weavetrack name=t");
  std::vector<wv::Region> out;
  for (int f = 0; f < 3; ++f) {
    wv::Region r = region("text", {10 + f, 20, 60, 20});
    r.text = wv::TextResult{"Door 6C", 0.9f};
    out = t.push({r, region("dog", {200, 100, 40, 40})}, f);
  }
  const std::string line = wv::regions_json_line(std::nullopt, out, {});
  BOOST_TEST(line.find("\"text\":\"Door 6C\"") != std::string::npos);
  BOOST_TEST(line.find("\"track\":" + std::to_string(track_of(out[0]))) != std::string::npos, line);
  BOOST_TEST(line.find("\"track\":" + std::to_string(track_of(out[1]))) != std::string::npos, line);
  BOOST_TEST(wv::region_label(out[0], false) == "#" + std::to_string(track_of(out[0])) + " Door 6C");
}

BOOST_AUTO_TEST_CASE(track_adds_predicted_regions_through_a_gap_and_keeps_the_id) {
  Tracked t("weavetrack name=t add-predicted=true max-misses=5");
  std::uint64_t id = 0;
  for (int f = 0; f < 20; ++f) {
    const bool hidden = f >= 8 && f < 11;
    wv::Region r = region("text", {10 + 6 * f, 50, 60, 20});
    r.text = wv::TextResult{"EXIT", 0.8f};
    const auto out = t.push(hidden ? std::vector<wv::Region>{} : std::vector<wv::Region>{r}, f);
    if (f == 0) continue;
    BOOST_TEST_REQUIRE(out.size() == 1u, "frame " << f);
    BOOST_TEST_REQUIRE(out[0].track.has_value());
    if (f == 1) id = out[0].track->id;
    BOOST_TEST(out[0].track->id == id);
    BOOST_TEST(out[0].track->predicted == hidden);
    if (hidden) {
      // Where the object would be, within a few pixels, and the text read before comes along.
      BOOST_TEST(std::abs(out[0].box.x - (10 + 6 * f)) <= 4, "frame " << f << " x " << out[0].box.x);
      BOOST_TEST_REQUIRE(out[0].text.has_value());
      BOOST_TEST(out[0].text->text == "EXIT");
    }
  }
  // Past max-misses the track ends: no more predicted regions.
  for (int f = 20; f < 28; ++f) (void)t.push({}, f);
  BOOST_TEST(t.push({}, 28).empty());
}

BOOST_AUTO_TEST_CASE(track_passes_weak_and_other_type_regions_untouched) {
  Tracked t("weavetrack name=t roi-type=text");
  for (int f = 0; f < 5; ++f) {
    const auto out = t.push({region("text", {10, 10, 50, 20}), region("text", {100, 100, 50, 20}, 0.05f),
                             region("car", {200, 150, 50, 40})},
                            f);
    BOOST_TEST_REQUIRE(out.size() == 3u);  // nothing lost
    BOOST_TEST(out[0].track.has_value() == (f > 0));
    BOOST_TEST(!out[1].track.has_value());  // below low-score
    BOOST_TEST(!out[2].track.has_value());  // not a text region
    BOOST_TEST((out[2].box == wv::Box{200, 150, 50, 40}));
  }
}

BOOST_AUTO_TEST_CASE(track_forgets_its_tracks_on_a_flush_and_never_repeats_an_id) {
  Tracked t("weavetrack name=t");
  std::uint64_t before = 0;
  for (int f = 0; f < 3; ++f) before = track_of(t.push({region("text", {10, 10, 50, 20})}, f).at(0));
  BOOST_TEST(before != 0u);
  BOOST_TEST(gst_harness_push_event(t.h, gst_event_new_flush_start()));
  BOOST_TEST(gst_harness_push_event(t.h, gst_event_new_flush_stop(TRUE)));
  gst_harness_set_src_caps_str(t.h, "video/x-raw,format=BGRx,width=320,height=240,framerate=10/1");
  BOOST_TEST(track_of(t.push({region("text", {10, 10, 50, 20})}, 0).at(0)) == 0u);  // a new tentative track
  const std::uint64_t after = track_of(t.push({region("text", {10, 10, 50, 20})}, 1).at(0));
  BOOST_TEST(after != 0u);
  BOOST_TEST(after != before);
  // New settings while playing: a new tracker, ids still counting on.
  GstElement* e = t.element();
  g_object_set(e, "birth-hits", 1, nullptr);
  const std::uint64_t third = track_of(t.push({region("text", {10, 10, 50, 20})}, 2).at(0));
  BOOST_TEST(third != 0u);
  BOOST_TEST(third > after);
  gst_object_unref(e);
}

// A frame the detector skipped (marked by weavemeta): the tracks move on by prediction and are
// reported there -- tracks with an id as predicted regions with it, tentative ones without one --
// and the mark survives the copy a shared buffer gets when made writable.
BOOST_AUTO_TEST_CASE(track_fills_in_a_skipped_frame_from_its_tracks) {
  // max-misses=0: one miss ends a track, so the skipped frame must count none.
  Tracked t("weavetrack name=t max-misses=0");
  for (int f = 0; f < 3; ++f) {
    std::vector<wv::Region> regions = {region("car", {20 + 10 * f, 50, 40, 30})};
    if (f == 2) regions.push_back(region("car", {200, 150, 40, 30}));  // a new, tentative track
    (void)t.push(regions, f);
  }
  GstBuffer* skipped = frame_with({}, 3);
  wc::mark_skipped(skipped);
  wc::mark_skipped(skipped);                  // once is enough: still one mark
  GstBuffer* keep = gst_buffer_ref(skipped);  // shared: made writable by copying
  GstBuffer* out = gst_harness_push_and_pull(t.h, skipped);
  BOOST_TEST_REQUIRE(out != nullptr);
  BOOST_TEST(wc::is_skipped(out));
  int marks = 0;
  gpointer state = nullptr;
  while (GstMeta* m = gst_buffer_iterate_meta(out, &state))
    marks += g_str_equal(g_type_name(m->info->api), "WeaveSkippedFrameMetaAPI") ? 1 : 0;
  BOOST_TEST(marks == 1);
  const auto regions = wc::read_regions(out);
  gst_buffer_unref(out);
  gst_buffer_unref(keep);
  BOOST_TEST_REQUIRE(regions.size() == 2u);
  BOOST_TEST_REQUIRE(regions[0].track.has_value());
  BOOST_TEST(regions[0].track->predicted);
  BOOST_TEST(std::abs(regions[0].box.x - 50) <= 3, "predicted x " << regions[0].box.x);  // 20 + 10 * 3
  BOOST_TEST(regions[0].type == "car");
  BOOST_TEST(!regions[1].track.has_value());  // the tentative track: no id yet
  BOOST_TEST((regions[1].box == wv::Box{200, 150, 40, 30}));
  // The next detected frame continues the tracks: no miss was counted on the skipped frame
  // (with max-misses=0 one would have ended the first track).
  const auto next = t.push({region("car", {60, 50, 40, 30}), region("car", {200, 150, 40, 30})}, 4);
  BOOST_TEST(next[0].track.has_value());
  BOOST_TEST(next[0].track->id == regions[0].track->id);
  BOOST_TEST(next[1].track.has_value());  // its second detection: confirmed
}

// A track missed at the last detector run is hidden on the skipped frames after it as on the
// detector's frames, unless add-predicted asks for it.
BOOST_AUTO_TEST_CASE(track_reports_a_missed_track_on_skipped_frames_only_with_add_predicted) {
  for (bool predicted : {false, true}) {
    Tracked t(predicted ? "weavetrack name=t add-predicted=true" : "weavetrack name=t");
    for (int f = 0; f < 2; ++f) (void)t.push({region("car", {20 + 10 * f, 50, 40, 30})}, f);
    const auto missed = t.push({}, 2);  // a detector frame without it
    BOOST_TEST(missed.size() == (predicted ? 1u : 0u));
    GstBuffer* skipped = frame_with({}, 3);
    wc::mark_skipped(skipped);
    GstBuffer* out = gst_harness_push_and_pull(t.h, skipped);
    BOOST_TEST_REQUIRE(out != nullptr);
    BOOST_TEST(wc::read_regions(out).size() == (predicted ? 1u : 0u));
    gst_buffer_unref(out);
  }
}
