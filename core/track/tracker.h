// Multi-object tracking by detection, image-free (the SORT / ByteTrack class): each frame's
// detections are matched to the tracks of earlier frames by the IoU of their boxes with the
// tracks' predicted boxes (a constant-velocity Kalman filter each, box_kalman.h), by an optimal
// assignment (assignment.h), in two stages: detections scored at least `high_score` first, then
// the weaker ones (at least `low_score`) only to tracks that were seen on the frame before --
// so a detection that fades for a frame keeps its track without weak boxes starting new ones.
//
// Tracks and strong detections still unmatched after that get one more chance with boxes grown
// by `buffer` of their size for each frame since the track was last matched (a buffered IoU):
// a detector run every few frames (an inference interval) sees objects move several frames'
// worth between runs, and a new track has no velocity yet to predict it.
//
// A track is born tentative from a strong unmatched detection and gets its id once it has been
// matched on `birth_hits` frames in a row; a tentative track missed once is dropped. A confirmed
// track missed on a frame keeps its id and moves on its prediction; missed on more than
// `max_misses` frames in a row it ends. Ids are 1, 2, 3, ... in the order
// tracks are confirmed, never reused while the tracker lives; after 2^64 - 1 they wrap to 1.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/track/box_kalman.h"
#include "core/vision/regions.h"

namespace weave::track {

struct TrackerSettings {
  float high_score = 0.5f;     // first stage; only such detections start tracks
  float low_score = 0.1f;      // second stage from here up; weaker detections are not tracked
  double min_iou = 0.2;        // least IoU of a first-stage (and a tentative track's) match
  double low_min_iou = 0.5;    // least IoU of a second-stage match
  int birth_hits = 2;          // frames in a row a new track must be matched to get its id
  int max_misses = 30;         // frames in a row a confirmed track may go unmatched
  double buffer = 0.15;        // last stage: boxes grow by this share a side per frame unmatched (cap 1)
  bool class_aware = true;     // match only detections of the track's kind
  std::uint64_t first_id = 1;  // the first id handed out (tests start it near the wrap)
};

struct Detection {
  vision::Box box;
  float score = 0.0f;
  std::string kind;  // what it is ("text", a class): with class_aware, kinds must be equal
};

// What one detection became on its frame.
struct Match {
  std::uint64_t track = 0;   // the confirmed track's id; 0: none (yet)
  int age = 0;               // frames since the track was born (0 on its first frame)
  std::uint64_t serial = 0;  // the track's serial (tentative tracks too); 0: no track
};

struct Track {
  std::uint64_t id = 0;      // 0 while tentative
  std::uint64_t serial = 0;  // unique per tracker from birth, tentative or not (not shown to users)
  std::string kind;
  vision::Box box;      // the filter's estimate: corrected when matched, else predicted
  int age = 0;          // frames since birth
  int hits = 0;         // frames matched in all
  int streak = 0;       // frames matched in a row
  int misses = 0;       // frames unmatched in a row
  int since_match = 0;  // frames since last matched, skipped frames included
  float score = 0.0f;   // score of the last detection matched
  BoxKalman filter;
};

class Tracker {
 public:
  explicit Tracker(TrackerSettings settings = {});

  // One frame's detections, in; what each became, out (same order).
  [[nodiscard]] std::vector<Match> update(std::span<const Detection> detections);

  // A frame on which nothing was detected because the detector did not run (an inference
  // interval): every track moves on by its prediction and ages, and none counts a miss.
  void coast();

  // Tracks alive after the last update: confirmed ones (id != 0) and tentative ones.
  [[nodiscard]] std::span<const Track> tracks() const { return tracks_; }
  // Confirmed tracks alive after the last update.
  [[nodiscard]] std::size_t confirmed() const;
  // Ids handed out since construction (reset() does not start the count again).
  [[nodiscard]] std::uint64_t ids_issued() const { return issued_; }
  [[nodiscard]] const TrackerSettings& settings() const { return settings_; }

  // Forgets every track (a flush, a new stream); ids go on from where they were.
  void reset() { tracks_.clear(); }

 private:
  std::uint64_t next_id();

  TrackerSettings settings_;
  std::vector<Track> tracks_;
  std::uint64_t next_ = 1;
  std::uint64_t issued_ = 0;
  std::uint64_t serial_ = 0;
};

}  // namespace weave::track
