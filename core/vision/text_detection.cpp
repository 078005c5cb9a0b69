#include "core/vision/text_detection.h"

#include <algorithm>
#include <cmath>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

namespace weave::vision {

namespace {

// The 4 corners of a rotated rectangle ordered top-left, top-right, bottom-right, bottom-left:
// the two leftmost points are the left side (upper one first), the two others the right side.
Quad ordered_corners(const cv::RotatedRect& r) {
  cv::Point2f p[4];
  r.points(p);
  std::sort(p, p + 4, [](const cv::Point2f& a, const cv::Point2f& b) { return a.x < b.x; });
  const cv::Point2f& tl = p[0].y <= p[1].y ? p[0] : p[1];
  const cv::Point2f& bl = p[0].y <= p[1].y ? p[1] : p[0];
  const cv::Point2f& tr = p[2].y <= p[3].y ? p[2] : p[3];
  const cv::Point2f& br = p[2].y <= p[3].y ? p[3] : p[2];
  return Quad{Point{tl.x, tl.y}, Point{tr.x, tr.y}, Point{br.x, br.y}, Point{bl.x, bl.y}};
}

// Mean of `prob` inside the polygon `points` (map pixels).
template <class Points>
float mean_inside(const cv::Mat& prob, const Points& points) {
  const int w = prob.cols, h = prob.rows;
  float fx0 = static_cast<float>(points[0].x), fx1 = fx0, fy0 = static_cast<float>(points[0].y), fy1 = fy0;
  for (const auto& q : points) {
    const Point p{static_cast<float>(q.x), static_cast<float>(q.y)};
    fx0 = std::min(fx0, p.x);
    fx1 = std::max(fx1, p.x);
    fy0 = std::min(fy0, p.y);
    fy1 = std::max(fy1, p.y);
  }
  const int x0 = std::clamp(static_cast<int>(std::floor(fx0)), 0, w - 1);
  const int x1 = std::clamp(static_cast<int>(std::ceil(fx1)), 0, w - 1);
  const int y0 = std::clamp(static_cast<int>(std::floor(fy0)), 0, h - 1);
  const int y1 = std::clamp(static_cast<int>(std::ceil(fy1)), 0, h - 1);
  cv::Mat mask = cv::Mat::zeros(y1 - y0 + 1, x1 - x0 + 1, CV_8UC1);
  std::vector<cv::Point> poly;
  for (const auto& p : points)
    poly.emplace_back(static_cast<int>(std::lround(p.x)) - x0, static_cast<int>(std::lround(p.y)) - y0);
  cv::fillPoly(mask, std::vector<std::vector<cv::Point>>{poly}, cv::Scalar(1));
  return static_cast<float>(cv::mean(prob(cv::Rect(x0, y0, x1 - x0 + 1, y1 - y0 + 1)), mask)[0]);
}

float distance(const Point& a, const Point& b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

}  // namespace

Status check_text_map(DType dtype, const Dims& dims) {
  if (dtype != DType::float32)
    return make_error("db: needs a float32 probability map, got ", dtype_name(dtype));
  bool ok = dims.rank() >= 2 && dims.rank() <= 4 && dims[dims.rank() - 1] > 0 && dims[dims.rank() - 2] > 0;
  for (int i = 0; ok && i + 2 < dims.rank(); ++i) ok = dims[i] == 1;
  if (!ok)
    return make_error("db: needs a map of shape <1,1,H,W>, <1,H,W> or <H,W>, got ", shape_str(dims.span()));
  return {};
}

Expected<std::vector<Region>> decode_text_boxes(const ConstTensorView& map, const TextDetectionOptions& o,
                                                const Letterbox& geometry, int frame_width,
                                                int frame_height) {
  WEAVE_TRY(check_text_map(map.dtype, map.dims));
  if (map.data == nullptr) return make_error("db: the map has no data");
  if (frame_width <= 0 || frame_height <= 0 || frame_width > kMaxImageSide || frame_height > kMaxImageSide)
    return make_error("db: frame size ", frame_width, "x", frame_height, " is not within 1..", kMaxImageSide);
  const int h = static_cast<int>(map.dims[map.dims.rank() - 2]);
  const int w = static_cast<int>(map.dims[map.dims.rank() - 1]);
  if (h > kMaxImageSide || w > kMaxImageSide) return make_error("db: map ", w, "x", h, " is too large");
  std::vector<Region> out;
  try {
    // cv::Mat has no const view; the map is only read.
    const cv::Mat prob(h, w, CV_32FC1, const_cast<float*>(map.as<float>()));
    cv::Mat text;
    cv::compare(prob, cv::Scalar(o.threshold), text, cv::CMP_GT);
    std::vector<std::vector<cv::Point>> contours;
    cv::findContours(text, contours, cv::RETR_LIST, cv::CHAIN_APPROX_SIMPLE);
    if (static_cast<int>(contours.size()) > o.max_candidates) {
      std::partial_sort(contours.begin(), contours.begin() + std::max(o.max_candidates, 0), contours.end(),
                        [](const auto& a, const auto& b) { return a.size() > b.size(); });
      contours.resize(static_cast<std::size_t>(std::max(o.max_candidates, 0)));
    }
    for (const auto& contour : contours) {
      if (contour.size() < 3) continue;
      cv::RotatedRect rect = cv::minAreaRect(contour);
      if (std::min(rect.size.width, rect.size.height) < static_cast<float>(o.min_size)) continue;
      const float score = o.score_mode == TextDetectionOptions::ScoreMode::slow
                              ? mean_inside(prob, contour)
                              : mean_inside(prob, ordered_corners(rect));
      if (score < o.box_threshold) continue;
      // Offsetting a rectangle by d (round joins) and taking the minimum-area rectangle of the
      // result grows each side by d: no polygon clipping library needed.
      const double area = static_cast<double>(rect.size.width) * rect.size.height;
      const double perimeter = 2.0 * (static_cast<double>(rect.size.width) + rect.size.height);
      const auto d = static_cast<float>(area * o.unclip_ratio / perimeter);
      rect.size.width += 2 * d;
      rect.size.height += 2 * d;
      if (std::min(rect.size.width, rect.size.height) < static_cast<float>(o.min_size + 2)) continue;
      Quad q = ordered_corners(rect);
      const auto fw = static_cast<float>(frame_width), fh = static_cast<float>(frame_height);
      for (Point& p : q) {
        p = to_frame(p, geometry);
        p.x = std::round(std::clamp(p.x, 0.0f, fw));
        p.y = std::round(std::clamp(p.y, 0.0f, fh));
      }
      if (distance(q[0], q[1]) <= 3.0f || distance(q[0], q[3]) <= 3.0f) continue;
      Region r;
      r.type = "text";
      r.quad = q;
      r.box = bounding_box(q, frame_width, frame_height);
      r.score = score;
      if (r.box.empty()) continue;
      out.push_back(std::move(r));
    }
  } catch (const cv::Exception& e) {
    return make_error("db: OpenCV: ", e.what());
  }
  sort_reading_order(out);
  return out;
}

void sort_reading_order(std::vector<Region>& regions, float tolerance) {
  auto top = [](const Region& r) { return r.quad ? (*r.quad)[0] : Point{float(r.box.x), float(r.box.y)}; };
  std::stable_sort(regions.begin(), regions.end(), [&](const Region& a, const Region& b) {
    const Point pa = top(a), pb = top(b);
    return pa.y != pb.y ? pa.y < pb.y : pa.x < pb.x;
  });
  // Within a line (tops close together) left to right: bubble neighbours, as lines are short.
  for (std::size_t i = 1; i < regions.size(); ++i)
    for (std::size_t j = i; j > 0; --j) {
      const Point a = top(regions[j - 1]), b = top(regions[j]);
      if (std::abs(a.y - b.y) < tolerance && b.x < a.x)
        std::swap(regions[j - 1], regions[j]);
      else
        break;
    }
}

}  // namespace weave::vision
