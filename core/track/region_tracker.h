// Tracking of a stream's regions (vision::Region values): what weavetrack does to each frame,
// without GStreamer. Regions become detections (their kind is their type and class), the tracker
// (tracker.h) matches them, and each gets its track's tag; the last region of each live track is
// kept, so that a track missed on a frame (or every track, on a frame the detector skipped) can
// be reported at its predicted box with what was known about it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/track/tracker.h"
#include "core/vision/regions.h"

namespace weave::track {

class RegionTracker {
 public:
  explicit RegionTracker(TrackerSettings settings = {}) : tracker_(settings) {}

  // New matching settings: a new tracker, the tracks so far end; ids go on from where they were.
  void configure(TrackerSettings settings);
  // A frame the detector looked at: the track of each region, in order (nullopt: none yet).
  // Regions a tracker upstream predicted are not detections.
  [[nodiscard]] std::vector<std::optional<vision::TrackTag>> update(std::span<const vision::Region> regions);
  // A frame the detector skipped: every track moves on by its prediction, counting no miss.
  void coast() { tracker_.coast(); }
  // The regions to add to this frame at predicted boxes: with `add_missed`, tracks with an id
  // missed at their last detection; with `skipped` (after coast()), also every other track seen
  // at the last detection, tentative ones without a track tag (the detection holds until the
  // next run). Boxes are clipped to width x height (0 x 0: only to non-negative coordinates);
  // those left empty are not reported. Forgets the last regions of tracks that ended.
  [[nodiscard]] std::vector<vision::Region> predicted(bool add_missed, bool skipped, int width, int height);
  // Forgets every track (a flush, a new stream); ids go on.
  void reset();

  [[nodiscard]] std::size_t confirmed() const { return tracker_.confirmed(); }
  // Ids handed out since construction, across configure() and reset().
  [[nodiscard]] std::uint64_t ids_issued() const { return ids_before_ + tracker_.ids_issued(); }

 private:
  Tracker tracker_;
  std::uint64_t ids_before_ = 0;                            // handed out by trackers configure() replaced
  std::unordered_map<std::uint64_t, vision::Region> last_;  // by track serial
};

}  // namespace weave::track
