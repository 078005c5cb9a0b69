#include "core/track/region_tracker.h"

#include <climits>
#include <string>
#include <unordered_set>

namespace weave::track {

namespace {

// What a region is, for class-aware matching: its type and, for a detected class, the class.
std::string kind_of(const vision::Region& r) {
  return r.class_id >= 0 ? r.type + "#" + std::to_string(r.class_id) : r.type + "#" + r.label;
}

}  // namespace

void RegionTracker::configure(TrackerSettings settings) {
  ids_before_ += tracker_.ids_issued();
  settings.first_id = ids_before_ + 1;
  tracker_ = Tracker(settings);
  last_.clear();
}

std::vector<std::optional<vision::TrackTag>> RegionTracker::update(std::span<const vision::Region> regions) {
  std::vector<Detection> detections;
  detections.reserve(regions.size());
  for (const vision::Region& r : regions) {
    const bool predicted = r.track && r.track->predicted;
    detections.push_back(Detection{predicted ? vision::Box{} : r.box, r.score, kind_of(r)});
  }
  const std::vector<Match> matches = tracker_.update(detections);
  std::vector<std::optional<vision::TrackTag>> tags(regions.size());
  for (std::size_t i = 0; i < regions.size(); ++i) {
    if (matches[i].serial == 0) continue;
    vision::Region& last = last_[matches[i].serial] = regions[i];
    if (matches[i].track == 0) continue;
    tags[i] = vision::TrackTag{matches[i].track, matches[i].age, false};
    last.track = tags[i];
  }
  return tags;
}

std::vector<vision::Region> RegionTracker::predicted(bool add_missed, bool skipped, int width, int height) {
  std::vector<vision::Region> out;
  std::unordered_set<std::uint64_t> alive;
  for (const Track& t : tracker_.tracks()) {
    alive.insert(t.serial);
    // A track with an id missed at its last detection is shown only with add_missed, on skipped
    // frames too (else it would blink: hidden on detector frames, shown between them).
    if (t.id != 0 && t.misses > 0 && !add_missed) continue;
    if (!skipped && (t.id == 0 || t.misses == 0)) continue;
    const auto last = last_.find(t.serial);
    if (t.box.empty() || last == last_.end()) continue;
    vision::Region r = last->second;
    r.box = width > 0 && height > 0 ? vision::clip(t.box, width, height)
                                    : vision::clip(t.box, INT_MAX / 2, INT_MAX / 2);
    if (r.box.empty()) continue;  // predicted out of the frame
    r.quad.reset();               // the corners were the detection's, not the prediction's
    if (t.id != 0)
      r.track = vision::TrackTag{t.id, t.age, true};
    else
      r.track.reset();
    out.push_back(std::move(r));
  }
  std::erase_if(last_, [&](const auto& kv) { return !alive.contains(kv.first); });
  return out;
}

void RegionTracker::reset() {
  tracker_.reset();
  last_.clear();
}

}  // namespace weave::track
