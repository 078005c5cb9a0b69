#include "core/vision/regions.h"

#include <algorithm>
#include <cmath>

namespace weave::vision {

Quad quad_of(const Box& box) {
  const auto x0 = static_cast<float>(box.x), y0 = static_cast<float>(box.y);
  const auto x1 = static_cast<float>(box.x + box.width), y1 = static_cast<float>(box.y + box.height);
  return Quad{Point{x0, y0}, Point{x1, y0}, Point{x1, y1}, Point{x0, y1}};
}

Box clip(const Box& box, int width, int height) {
  const int x0 = std::clamp(box.x, 0, std::max(width, 0));
  const int y0 = std::clamp(box.y, 0, std::max(height, 0));
  // Sums in 64 bits: hostile sizes must not overflow.
  const auto x1 = static_cast<int>(std::clamp<int64_t>(int64_t{box.x} + box.width, 0, std::max(width, 0)));
  const auto y1 = static_cast<int>(std::clamp<int64_t>(int64_t{box.y} + box.height, 0, std::max(height, 0)));
  return Box{x0, y0, std::max(0, x1 - x0), std::max(0, y1 - y0)};
}

Box bounding_box(const Quad& quad, int width, int height) {
  float x0 = quad[0].x, y0 = quad[0].y, x1 = x0, y1 = y0;
  for (const Point& p : quad) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) return Box{};
    x0 = std::min(x0, p.x);
    y0 = std::min(y0, p.y);
    x1 = std::max(x1, p.x);
    y1 = std::max(y1, p.y);
  }
  // Clamp in float first so that absurd coordinates cannot overflow the int conversion.
  const float w = static_cast<float>(std::max(width, 0)), h = static_cast<float>(std::max(height, 0));
  const int ix0 = static_cast<int>(std::floor(std::clamp(x0, 0.0f, w)));
  const int iy0 = static_cast<int>(std::floor(std::clamp(y0, 0.0f, h)));
  const int ix1 = static_cast<int>(std::ceil(std::clamp(x1, 0.0f, w)));
  const int iy1 = static_cast<int>(std::ceil(std::clamp(y1, 0.0f, h)));
  return Box{ix0, iy0, std::max(0, ix1 - ix0), std::max(0, iy1 - iy0)};
}

double iou(const Box& a, const Box& b) {
  if (a.empty() || b.empty()) return 0.0;
  const int64_t ix = std::max<int64_t>(
      0, std::min<int64_t>(int64_t{a.x} + a.width, int64_t{b.x} + b.width) - std::max(a.x, b.x));
  const int64_t iy = std::max<int64_t>(
      0, std::min<int64_t>(int64_t{a.y} + a.height, int64_t{b.y} + b.height) - std::max(a.y, b.y));
  const double inter = static_cast<double>(ix) * static_cast<double>(iy);
  const double uni =
      static_cast<double>(a.width) * a.height + static_cast<double>(b.width) * b.height - inter;
  return uni <= 0.0 ? 0.0 : inter / uni;
}

Point to_frame(const Point& tensor, const Letterbox& g) {
  const double sx = g.scale_x > 0 ? g.scale_x : 1.0, sy = g.scale_y > 0 ? g.scale_y : 1.0;
  return Point{static_cast<float>((tensor.x - g.offset_x) / sx),
               static_cast<float>((tensor.y - g.offset_y) / sy)};
}

}  // namespace weave::vision
