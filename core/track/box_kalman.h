// A constant-velocity Kalman filter in box space: the motion model of the tracker. The state is
// the box's centre, aspect ratio (width / height) and height, and the rate of change of each;
// a detection measures the first four. Noise scales with the box height, so a large box may move
// more pixels per frame than a small one (the convention of SORT-class trackers).
#pragma once

#include <opencv2/video/tracking.hpp>

#include "core/vision/regions.h"

namespace weave::track {

class BoxKalman {
 public:
  // Starts at `box` with zero velocity.
  explicit BoxKalman(const vision::Box& box);
  // One frame ahead; returns the predicted box.
  vision::Box predict();
  // Folds a detection of this frame in; returns the corrected box.
  vision::Box correct(const vision::Box& box);
  // The current estimate (after the last predict or correct).
  [[nodiscard]] vision::Box box() const;

 private:
  void set_process_noise();
  cv::KalmanFilter kf_;
};

}  // namespace weave::track
