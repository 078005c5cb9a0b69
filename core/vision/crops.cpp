#include "core/vision/crops.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "core/vision/cv_image.h"

namespace weave::vision {

namespace {

// The region's corners in frame pixels (its box when it has no quad), clamped to the frame.
Quad corners(const Region& r, int fw, int fh) {
  Quad q = r.quad ? *r.quad : quad_of(clip(r.box, fw, fh));
  for (Point& p : q) {
    p.x = std::isfinite(p.x) ? std::clamp(p.x, 0.0f, static_cast<float>(fw)) : 0.0f;
    p.y = std::isfinite(p.y) ? std::clamp(p.y, 0.0f, static_cast<float>(fh)) : 0.0f;
  }
  return q;
}

float dist(const Point& a, const Point& b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

// Upright size of a cut: along the top/bottom edges and along the left/right ones.
struct CutSize {
  int width = 0, height = 0;
  bool vertical = false;  // turned 90 degrees after the cut
};

CutSize cut_size(const Quad& q) {
  CutSize s;
  s.width = static_cast<int>(std::max(dist(q[0], q[1]), dist(q[2], q[3])));
  s.height = static_cast<int>(std::max(dist(q[0], q[3]), dist(q[1], q[2])));
  if (s.width > 0 && s.height > 0 && static_cast<double>(s.height) / s.width >= 1.5) {
    s.vertical = true;
    std::swap(s.width, s.height);
  }
  return s;
}

}  // namespace

Status validate(const CropSpec& s) {
  if (s.height <= 0 || s.height > kMaxImageSide)
    return make_error("crop height ", s.height, " must be within 1..", kMaxImageSide);
  if (s.width < 0 || s.width > kMaxImageSide)
    return make_error("crop width ", s.width, " must be within 0..", kMaxImageSide);
  if (!(s.width_tolerance >= 0.0 && s.width_tolerance <= 1.0))
    return make_error("crop width tolerance ", s.width_tolerance, " must be within 0..1");
  if (s.width == 0 && (s.min_width < 1 || s.max_width < s.min_width || s.max_width > kMaxImageSide))
    return make_error("crop widths ", s.min_width, "..", s.max_width, " must be within 1..", kMaxImageSide);
  if (s.multiple < 1 || s.max_batch < 1) return make_error("crop multiple and batch size must be at least 1");
  PreprocessSpec n = s.norm;
  n.width = 1;
  n.height = 1;
  return validate(n);
}

Expected<std::vector<CropBatch>> plan_crops(std::span<const Region> regions, int fw, int fh,
                                            const CropSpec& spec) {
  WEAVE_TRY(validate(spec));
  std::vector<CropBatch> batches;
  if (fw <= 0 || fh <= 0) return batches;
  const int cap = spec.width > 0 ? spec.width : spec.max_width;
  std::vector<std::pair<int, int>> crops;  // region, own width
  for (std::size_t i = 0; i < regions.size(); ++i) {
    if (clip(regions[i].box, fw, fh).empty()) continue;
    const CutSize cut = cut_size(corners(regions[i], fw, fh));
    if (cut.width <= 0 || cut.height <= 0) continue;
    const double own = std::ceil(static_cast<double>(spec.height) * cut.width / cut.height);
    crops.emplace_back(static_cast<int>(i), static_cast<int>(std::clamp(own, 1.0, static_cast<double>(cap))));
  }
  const bool by_width = spec.width == 0 && spec.width_tolerance < 1.0;
  if (by_width)  // widest first; equal widths keep region order
    std::stable_sort(crops.begin(), crops.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [region, w] : crops) {
    const bool fits = !batches.empty() && batches.back().size() < spec.max_batch &&
                      (!by_width || w >= (1.0 - spec.width_tolerance) * batches.back().widths.front());
    if (!fits) batches.emplace_back();
    batches.back().regions.push_back(region);
    batches.back().widths.push_back(w);
  }
  for (CropBatch& b : batches) {
    if (spec.width > 0) {
      b.width = spec.width;
      continue;
    }
    const int widest = *std::max_element(b.widths.begin(), b.widths.end());
    const int rounded =
        (std::max(widest, spec.min_width) + spec.multiple - 1) / spec.multiple * spec.multiple;
    b.width = std::min(rounded, spec.max_width);
  }
  return batches;
}

std::size_t crop_elements(const CropBatch& b, const CropSpec& spec) {
  return static_cast<std::size_t>(b.size()) * 3 * static_cast<std::size_t>(spec.height) *
         static_cast<std::size_t>(b.width);
}

Status crop_batch(const ImageView& frame, std::span<const Region> regions, const CropBatch& batch,
                  const CropSpec& spec, std::span<float> dst) {
  WEAVE_TRY(validate(frame));
  WEAVE_TRY(validate(spec));
  const std::size_t per_crop =
      3 * static_cast<std::size_t>(spec.height) * static_cast<std::size_t>(batch.width);
  if (dst.size() != crop_elements(batch, spec))
    return make_error("crop tensor holds ", dst.size(), " floats, the batch needs ",
                      crop_elements(batch, spec));
  if (batch.widths.size() != batch.regions.size() || batch.width <= 0)
    return make_error("crop batch plan is inconsistent");
  try {
    const cv::Mat three = detail::to_three_channels(frame, spec.norm.order);
    for (int k = 0; k < batch.size(); ++k) {
      const auto index = static_cast<std::size_t>(batch.regions[k]);
      if (index >= regions.size())
        return make_error("crop batch names region ", index, " of ", regions.size());
      const Region& r = regions[index];
      const Quad q = corners(r, frame.width, frame.height);
      const CutSize cut = cut_size(q);
      const int w = std::clamp(batch.widths[static_cast<std::size_t>(k)], 1, batch.width);
      // The cut is warped at its own size, then resized (as PaddleOCR does), but at most 4x the
      // crop it becomes on either side: a huge or degenerate quad cannot make a huge image.
      const double shrink =
          std::min({1.0, 4.0 * spec.height / std::max(1, cut.height), 4.0 * w / std::max(1, cut.width)});
      const int up_w = std::max(1, static_cast<int>(cut.width * shrink));
      const int up_h = std::max(1, static_cast<int>(cut.height * shrink));
      // Before turning, the cut is as wide as the top edge and as high as the left edge.
      const int cw = cut.vertical ? up_h : up_w;
      const int ch = cut.vertical ? up_w : up_h;
      const cv::Point2f from[4] = {{q[0].x, q[0].y}, {q[1].x, q[1].y}, {q[2].x, q[2].y}, {q[3].x, q[3].y}};
      const cv::Point2f to[4] = {{0, 0}, {float(cw), 0}, {float(cw), float(ch)}, {0, float(ch)}};
      cv::Mat cut_img;
      cv::warpPerspective(three, cut_img, cv::getPerspectiveTransform(from, to), cv::Size(cw, ch),
                          cv::INTER_CUBIC, cv::BORDER_REPLICATE);
      if (cut.vertical) cv::rotate(cut_img, cut_img, cv::ROTATE_90_COUNTERCLOCKWISE);
      if (r.angle && *r.angle == 180) cv::rotate(cut_img, cut_img, cv::ROTATE_180);
      // Lanczos, not PaddleOCR's bilinear: small text is scaled up 2-4x, and a bilinear blur
      // closes the gaps between words (PP-OCRv4 rec read "Invoice 2024" at 12 pt as
      // "Invoice2024" on 13 of 20 frames, 0 of 20 with Lanczos; bench/ocr_accuracy.sh).
      cv::Mat sized;
      cv::resize(cut_img, sized, cv::Size(w, spec.height), 0, 0, cv::INTER_LANCZOS4);
      detail::write_tensor(sized, spec.norm, batch.width, spec.height, spec.norm.pad_value,
                           dst.subspan(static_cast<std::size_t>(k) * per_crop, per_crop));
    }
  } catch (const cv::Exception& e) {
    return make_error("cropping regions of a ", frame.width, "x", frame.height, " frame: OpenCV: ", e.what());
  }
  return {};
}

}  // namespace weave::vision
