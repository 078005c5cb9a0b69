// What later models said about each track, kept across frames: a text reader or a classifier
// runs on a track's region frame after frame and its reads of one object disagree now and then
// ("Door 6C" on 16 frames, "Door 60" on 14). Folding each frame's read into the track's history
// gives one answer per track, reported on every frame of it:
//   frame  each frame keeps its own read (no history);
//   best   the read with the highest score so far;
//   vote   the read whose scores sum highest so far (each frame votes with its score), its score
//          the mean of those frames' scores.
// Tracks not seen for more than `forget_after` frames are forgotten, so memory stays bounded
// however long a stream runs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/vision/decoder.h"

namespace weave::track {

enum class ResultHistory { frame, best, vote };

class TrackResults {
 public:
  explicit TrackResults(ResultHistory mode = ResultHistory::vote, int forget_after = 300)
      : mode_(mode), forget_after_(forget_after) {}

  // Folds `row` (this frame's read of `track`'s region) into the track's history and returns
  // what the track says now: texts and the first class by `mode`, the rest of `row` as it is.
  [[nodiscard]] vision::RowResult observe(std::uint64_t track, const vision::RowResult& row);
  // What the track says now, without a read on this frame; nullopt for a track without any.
  [[nodiscard]] std::optional<vision::RowResult> current(std::uint64_t track) const;
  // The track is on this frame (read or not): its history is kept while it lives, however rarely
  // it is read.
  void seen(std::uint64_t track);
  // One frame of a per-region model, in place: each read in `rows` (region id, read) of a region
  // in `track_of` (region id -> track) folds into its track and becomes what the track says; a
  // tracked region without a read gets a row with the track's result, when it has one. Ends the
  // frame. Does nothing with ResultHistory::frame.
  void apply(std::vector<std::pair<int, vision::RowResult>>& rows,
             std::unordered_map<int, std::uint64_t> track_of);
  // Ends a frame: tracks not seen for more than `forget_after` frames are forgotten.
  void end_frame();
  void clear() { tracks_.clear(); }
  [[nodiscard]] std::size_t size() const { return tracks_.size(); }
  [[nodiscard]] ResultHistory mode() const { return mode_; }

 private:
  struct Tally {
    double sum = 0.0;  // of scores
    int count = 0;
    float best = 0.0f;
    int class_id = -1;
  };
  struct History {
    std::map<std::string, Tally> texts;
    std::map<std::string, Tally> labels;  // first classification, by label
    std::int64_t last_seen = 0;
  };
  ResultHistory mode_;
  int forget_after_;
  std::int64_t frame_ = 0;
  std::unordered_map<std::uint64_t, History> tracks_;
};

}  // namespace weave::track
