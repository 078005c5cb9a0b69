// Which regions of a frame a per-region model (a recognizer, a classifier) reads when results
// are kept per track: a region of a track is read on the track's first frame and then once every
// `interval` frames; a region without a track on every frame. The frames in between report the
// track's result (weavemeta track-results), so the model runs a fraction of the crops.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/vision/regions.h"

namespace weave::track {

class ReclassifySchedule {
 public:
  // interval 0 or 1: every region on every frame.
  explicit ReclassifySchedule(int interval = 0) : interval_(interval) {}

  // The regions to read on this frame, in their order; ends the frame. Only tracks on this
  // frame are remembered, so memory is bounded by the regions of one frame.
  [[nodiscard]] std::vector<vision::Region> select(std::vector<vision::Region> regions);
  // Forgets every track (a flush): each is read again on its next frame.
  void reset() { last_read_.clear(); }
  [[nodiscard]] int interval() const { return interval_; }

 private:
  int interval_;
  std::uint64_t frame_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> last_read_;  // track -> frame last read
};

}  // namespace weave::track
