// The tracker (core/track/tracker.h) on scenes with known ground truth: objects moving at
// constant speeds, crossing, hidden for some frames, entering late and leaving early, with
// jittered boxes and fading scores. Each object's detections must keep one id (MOT-style: id
// switches and fragmentations are counted and must be 0).
#define BOOST_TEST_MODULE track_tracker
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "core/track/region_tracker.h"
#include "core/track/tracker.h"

using weave::track::Detection;
using weave::track::Match;
using weave::track::Tracker;
using weave::track::TrackerSettings;
using weave::vision::Box;

namespace {

struct Object {
  double x = 0, y = 0, vx = 0, vy = 0;  // top-left at frame 0 and speed in pixels per frame
  int w = 0, h = 0;
  int first = 0, last = 1 << 30;            // frames it is in the scene
  std::vector<std::pair<int, int>> hidden;  // [from, to) frame ranges without a detection
  std::string kind = "car";
  bool visible(int f) const {
    if (f < first || f > last) return false;
    for (auto [a, b] : hidden)
      if (f >= a && f < b) return false;
    return true;
  }
};

Object moving(double x, double y, double vx, double vy, int w, int h) {
  Object o;
  o.x = x, o.y = y, o.vx = vx, o.vy = vy, o.w = w, o.h = h;
  return o;
}

struct Score {
  int switches = 0;        // an object's id changed
  int fragmentations = 0;  // an object that had an id was detected without one
  int frames_with_id = 0;
  std::map<std::size_t, std::uint64_t> id_of;  // object -> its last id
};

// Runs `frames` frames of the scene through a tracker; jitter moves each box edge by up to
// `jitter` pixels, and `weak` is the share of detections given a score between low and high.
Score run(const std::vector<Object>& scene, int frames, TrackerSettings settings, int jitter = 0,
          double weak = 0.0, unsigned seed = 1) {
  Tracker tracker(settings);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> j(-jitter, jitter);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Score score;
  for (int f = 0; f < frames; ++f) {
    std::vector<Detection> dets;
    std::vector<std::size_t> who;
    for (std::size_t o = 0; o < scene.size(); ++o) {
      const Object& ob = scene[o];
      if (!ob.visible(f)) continue;
      Box b{static_cast<int>(ob.x + ob.vx * f) + j(rng), static_cast<int>(ob.y + ob.vy * f) + j(rng),
            ob.w + j(rng), ob.h + j(rng)};
      dets.push_back(Detection{b, u(rng) < weak ? 0.3f : 0.9f, ob.kind});
      who.push_back(o);
    }
    const std::vector<Match> m = tracker.update(dets);
    BOOST_REQUIRE(m.size() == dets.size());
    for (std::size_t k = 0; k < m.size(); ++k) {
      auto it = score.id_of.find(who[k]);
      if (m[k].track == 0) {
        if (it != score.id_of.end()) ++score.fragmentations;
        continue;
      }
      ++score.frames_with_id;
      if (it != score.id_of.end() && it->second != m[k].track) ++score.switches;
      score.id_of[who[k]] = m[k].track;
    }
  }
  return score;
}

bool distinct_ids(const Score& s) {
  std::map<std::uint64_t, int> seen;
  for (auto [o, id] : s.id_of)
    if (++seen[id] > 1) return false;
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(objects_crossing_keep_their_ids) {
  std::vector<Object> scene = {moving(0, 100, 6, 0, 60, 40), moving(600, 100, -6, 0, 60, 40),
                               moving(300, 0, 0, 5, 50, 50)};
  const Score s = run(scene, 110, {});
  BOOST_TEST(s.switches == 0);
  BOOST_TEST(s.fragmentations == 0);
  BOOST_TEST(s.id_of.size() == 3u);
  BOOST_TEST(distinct_ids(s));
}

BOOST_AUTO_TEST_CASE(an_object_hidden_for_some_frames_comes_back_with_its_id) {
  for (int k : {1, 5, 12}) {
    std::vector<Object> scene = {moving(0, 100, 4, 1, 80, 50)};
    scene[0].hidden = {{30, 30 + k}};
    const Score s = run(scene, 80, {});
    BOOST_TEST(s.switches == 0, "hidden for " << k << " frames");
    BOOST_TEST(s.fragmentations == 0, "hidden for " << k << " frames");
  }
}

BOOST_AUTO_TEST_CASE(jitter_and_weak_detections_keep_one_id) {
  std::vector<Object> scene = {moving(0, 100, 5, 0, 120, 40), moving(50, 300, 3, -1, 90, 30),
                               moving(700, 50, -4, 2, 60, 60)};
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const Score s = run(scene, 100, {}, 3, 0.3, seed);
    BOOST_TEST(s.switches == 0, "seed " << seed);
    BOOST_TEST(s.fragmentations == 0, "seed " << seed);
    BOOST_TEST(distinct_ids(s));
  }
}

BOOST_AUTO_TEST_CASE(objects_entering_late_and_leaving_early_get_new_ids_and_their_tracks_end) {
  TrackerSettings settings;
  settings.max_misses = 10;
  Tracker tracker(settings);
  auto at = [](int f, double x0) {
    return Detection{Box{static_cast<int>(x0 + 4 * f), 100, 60, 40}, 0.9f, "car"};
  };
  std::uint64_t first_id = 0, second_id = 0;
  for (int f = 0; f < 100; ++f) {
    std::vector<Detection> dets;
    if (f < 40) dets.push_back(at(f, 0));      // leaves at 40
    if (f >= 30) dets.push_back(at(f, 1000));  // enters at 30, elsewhere
    const auto m = tracker.update(dets);
    if (f == 0) BOOST_TEST(m[0].track == 0u);  // born tentative: no id on its first frame
    if (f == 1) first_id = m[0].track;
    if (f == 31) second_id = m.back().track;
    if (f == 45) BOOST_TEST(tracker.confirmed() == 2u);  // the first one coasts on its prediction
    if (f == 49) BOOST_TEST(tracker.confirmed() == 2u);  // 10 misses (frames 40-49): still alive
    if (f == 50) BOOST_TEST(tracker.confirmed() == 1u);  // the 11th ends it
  }
  BOOST_TEST(first_id != 0u);
  BOOST_TEST(second_id != 0u);
  BOOST_TEST(first_id != second_id);
  BOOST_TEST(tracker.ids_issued() == 2u);
}

BOOST_AUTO_TEST_CASE(a_one_frame_false_detection_never_gets_an_id_and_weak_boxes_start_nothing) {
  Tracker tracker;
  for (int f = 0; f < 20; ++f) {
    std::vector<Detection> dets = {{Box{10 + f, 10, 50, 50}, 0.9f, "car"}};
    if (f == 5) dets.push_back({Box{400, 400, 30, 30}, 0.9f, "car"});  // a flash
    dets.push_back({Box{700, 10 + f, 40, 40}, 0.3f, "car"});           // weak all along
    (void)tracker.update(dets);
  }
  BOOST_TEST(tracker.ids_issued() == 1u);
  BOOST_TEST(tracker.confirmed() == 1u);
}

BOOST_AUTO_TEST_CASE(kinds_are_tracked_apart_when_class_aware) {
  for (bool aware : {true, false}) {
    TrackerSettings settings;
    settings.class_aware = aware;
    Tracker tracker(settings);
    std::vector<Match> m;
    for (int f = 0; f < 5; ++f) {
      // Frame by frame the same box is called a car or a truck: one object with a shaky class.
      std::vector<Detection> dets = {{Box{100 + f, 100, 80, 40}, 0.9f, f % 2 ? "truck" : "car"}};
      m = tracker.update(dets);
    }
    if (aware)
      BOOST_TEST(m[0].track == 0u);  // a new tentative track each frame: never two hits in a row
    else
      BOOST_TEST(m[0].track == 1u);
  }
}

BOOST_AUTO_TEST_CASE(ids_wrap_past_the_largest_value_to_one_and_birth_hits_one_gives_ids_at_once) {
  TrackerSettings settings;
  settings.first_id = std::numeric_limits<std::uint64_t>::max();
  settings.birth_hits = 1;
  Tracker tracker(settings);
  const std::vector<Detection> dets = {{Box{0, 0, 10, 10}, 0.9f, "a"}, {Box{100, 0, 10, 10}, 0.9f, "a"}};
  const auto m = tracker.update(dets);
  BOOST_TEST(m[0].track == std::numeric_limits<std::uint64_t>::max());
  BOOST_TEST(m[1].track == 1u);
}

BOOST_AUTO_TEST_CASE(empty_boxes_and_reset) {
  Tracker tracker;
  const std::vector<Detection> dets = {{Box{0, 0, 0, 10}, 0.9f, "a"}, {Box{5, 5, 20, 20}, 0.9f, "a"}};
  for (int f = 0; f < 3; ++f) {
    const auto m = tracker.update(dets);
    BOOST_TEST(m[0].track == 0u);  // an empty box is never tracked
  }
  BOOST_TEST(tracker.confirmed() == 1u);
  tracker.reset();
  BOOST_TEST(tracker.tracks().empty());
  (void)tracker.update(dets);
  const auto m = tracker.update(dets);
  BOOST_TEST(m[1].track == 2u);  // ids go on after a reset
}

// A detector run every 5th frame (coast() in between) on an object moving 30 pixels a frame, less
// than a third of its width: 150 pixels between runs, more than its width, so the boxes of two
// runs never overlap. The last stage's boxes, grown by the frames since the last match, join
// them; the motion learnt from the first two runs carries the track from then on.
BOOST_AUTO_TEST_CASE(a_detector_run_every_fifth_frame_keeps_a_fast_object_on_one_track) {
  for (double buffer : {0.15, 0.0}) {
    TrackerSettings settings;
    settings.buffer = buffer;
    Tracker tracker(settings);
    std::set<std::uint64_t> ids;
    int without = 0;
    for (int f = 0; f < 60; ++f) {
      if (f % 5 != 0) {
        tracker.coast();
        continue;
      }
      const std::vector<Detection> dets = {{Box{10 + 30 * f, 100, 100, 30}, 0.9f, "text"}};
      const auto m = tracker.update(dets);
      if (m[0].track == 0)
        ++without;
      else
        ids.insert(m[0].track);
    }
    if (buffer > 0) {
      BOOST_TEST(ids.size() == 1u);
      BOOST_TEST(without == 1);  // its first run: tentative
    } else {
      BOOST_TEST(ids.empty());  // without the last stage no two runs ever match
    }
  }
}

// coast() moves tracks on without counting misses: with max_misses = 0 a track survives any
// number of skipped frames, and its predicted box follows the motion learnt before.
BOOST_AUTO_TEST_CASE(coasting_counts_no_miss_and_follows_the_learnt_motion) {
  TrackerSettings settings;
  settings.max_misses = 0;
  settings.buffer = 0.0;  // no grown boxes: the prediction alone must reach the next detection
  Tracker tracker(settings);
  auto det = [](int f) { return std::vector<Detection>{{Box{10 + 12 * f, 100, 60, 30}, 0.9f, "car"}}; };
  std::uint64_t id = 0;
  for (int f = 0; f < 6; ++f) id = tracker.update(det(f)).at(0).track;  // learns 12 px a frame
  BOOST_TEST(id != 0u);
  for (int f = 6; f < 12; ++f) tracker.coast();
  BOOST_TEST_REQUIRE(tracker.tracks().size() == 1u);
  BOOST_TEST(std::abs(tracker.tracks()[0].box.x - (10 + 12 * 11)) <= 6,
             "predicted x " << tracker.tracks()[0].box.x);
  BOOST_TEST(tracker.update(det(12)).at(0).track == id);  // 72 px on: matched by the prediction
}

// RegionTracker (core/track/region_tracker.h), weavetrack without GStreamer: tags per region,
// predicted regions carrying what was known, ids going on across new settings.
BOOST_AUTO_TEST_CASE(region_tracker_tags_regions_and_predicts_them) {
  weave::track::RegionTracker rt;
  auto region = [](int x, const char* label) {
    weave::vision::Region r;
    r.type = "car";
    r.label = label;
    r.box = Box{x, 50, 40, 30};
    r.score = 0.9f;
    return r;
  };
  std::vector<weave::vision::Region> frame = {region(10, "car")};
  BOOST_TEST(!rt.update(frame).at(0).has_value());  // tentative
  frame = {region(14, "car")};
  const auto tag = rt.update(frame).at(0);
  BOOST_TEST_REQUIRE(tag.has_value());
  BOOST_TEST(tag->id == 1u);
  rt.coast();
  const auto predicted = rt.predicted(false, true, 320, 240);
  BOOST_TEST_REQUIRE(predicted.size() == 1u);
  BOOST_TEST(predicted[0].label == "car");
  BOOST_TEST_REQUIRE(predicted[0].track.has_value());
  BOOST_TEST(predicted[0].track->predicted);
  BOOST_TEST(predicted[0].track->id == 1u);
  BOOST_TEST(rt.predicted(false, false, 320, 240).empty());  // not missed: nothing to add
  weave::track::TrackerSettings settings;
  settings.birth_hits = 1;
  rt.configure(settings);  // tracks end, ids go on
  BOOST_TEST(rt.confirmed() == 0u);
  BOOST_TEST(rt.update(frame).at(0)->id == 2u);
  BOOST_TEST(rt.ids_issued() == 2u);
}
