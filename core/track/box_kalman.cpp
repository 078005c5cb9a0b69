#include "core/track/box_kalman.h"

#include <algorithm>
#include <cmath>

namespace weave::track {

namespace {

constexpr int kState = 8;  // cx, cy, aspect, height, and their velocities
constexpr int kMeasure = 4;
// Standard deviations relative to the box height: of a position, and of a velocity per frame.
constexpr double kPosition = 1.0 / 20;
constexpr double kVelocity = 1.0 / 160;
// A new track's velocity is unknown: a wide prior (half the height per frame) lets its first
// matched detections set it, also when they are several frames apart (an inference interval).
constexpr double kFirstVelocity = 1.0 / 2;

cv::Mat measurement_of(const vision::Box& b) {
  const double h = std::max(b.height, 1);
  cv::Mat z(kMeasure, 1, CV_64F);
  z.at<double>(0) = b.x + b.width / 2.0;
  z.at<double>(1) = b.y + b.height / 2.0;
  z.at<double>(2) = std::max(b.width, 1) / h;
  z.at<double>(3) = h;
  return z;
}

void set_diagonal(cv::Mat& m, std::initializer_list<double> stddevs) {
  m.setTo(0);
  int i = 0;
  for (double s : stddevs) {
    m.at<double>(i, i) = s * s;
    ++i;
  }
}

}  // namespace

BoxKalman::BoxKalman(const vision::Box& box) : kf_(kState, kMeasure, 0, CV_64F) {
  cv::setIdentity(kf_.transitionMatrix);
  for (int i = 0; i < kMeasure; ++i) kf_.transitionMatrix.at<double>(i, kMeasure + i) = 1.0;
  kf_.measurementMatrix = cv::Mat::zeros(kMeasure, kState, CV_64F);
  for (int i = 0; i < kMeasure; ++i) kf_.measurementMatrix.at<double>(i, i) = 1.0;
  const cv::Mat z = measurement_of(box);
  kf_.statePost = cv::Mat::zeros(kState, 1, CV_64F);
  z.copyTo(kf_.statePost.rowRange(0, kMeasure));
  const double h = z.at<double>(3);
  set_diagonal(kf_.errorCovPost, {2 * kPosition * h, 2 * kPosition * h, 1e-2, 2 * kPosition * h,
                                  kFirstVelocity * h, kFirstVelocity * h, 1e-5, kFirstVelocity * h});
  kf_.statePre = kf_.statePost.clone();
}

void BoxKalman::set_process_noise() {
  const double h = std::max(kf_.statePost.at<double>(3), 1.0);
  set_diagonal(kf_.processNoiseCov, {kPosition * h, kPosition * h, 1e-2, kPosition * h, kVelocity * h,
                                     kVelocity * h, 1e-5, kVelocity * h});
}

vision::Box BoxKalman::predict() {
  set_process_noise();
  kf_.predict();  // also makes the prediction the posterior, for a frame without a detection
  return box();
}

vision::Box BoxKalman::correct(const vision::Box& b) {
  const double h = std::max(kf_.statePre.at<double>(3), 1.0);
  set_diagonal(kf_.measurementNoiseCov, {kPosition * h, kPosition * h, 1e-1, kPosition * h});
  kf_.correct(measurement_of(b));
  return box();
}

vision::Box BoxKalman::box() const {
  // Far outside any frame is as good as anywhere out there; the clamp keeps lround defined.
  auto px = [](double v) {
    return std::isfinite(v) ? static_cast<int>(std::lround(std::clamp(v, -1e9, 1e9))) : 0;
  };
  const double cx = kf_.statePost.at<double>(0), cy = kf_.statePost.at<double>(1);
  const double h = std::max(kf_.statePost.at<double>(3), 1.0);
  const double w = std::max(kf_.statePost.at<double>(2), 1e-3) * h;
  return vision::Box{px(cx - w / 2), px(cy - h / 2), px(w), px(h)};
}

}  // namespace weave::track
