#include "core/vision/draw.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <opencv2/imgproc.hpp>
#include <vector>

namespace weave::vision {

namespace {

std::string score_text(float s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, " (%.2f)", static_cast<double>(s));
  return buf;
}

// OpenCV's Hershey fonts draw ASCII only; each UTF-8 sequence outside it becomes one '?'.
std::string ascii(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += c >= 0x20 ? static_cast<char>(c) : ' ';
    } else if ((c & 0xC0) != 0x80) {
      out += '?';  // a lead byte; continuation bytes are skipped
    }
  }
  return out;
}

}  // namespace

std::string region_label(const Region& r, bool with_score) {
  auto what = [&]() -> std::string {
    if (r.text) return r.text->text + (with_score ? score_text(r.text->score) : "");
    if (!r.classes.empty())
      return r.classes.front().label + (with_score ? score_text(r.classes.front().score) : "");
    if (!r.label.empty()) return r.label + (with_score ? score_text(r.score) : "");
    return with_score ? score_text(r.score).substr(1) : std::string();
  };
  if (!r.track) return what();
  std::string label = "#";
  label += std::to_string(r.track->id);
  if (const std::string rest = what(); !rest.empty()) label += " " + rest;
  return label;
}

Status draw_regions(const MutableImageView& img, std::span<const Region> regions, const DrawStyle& style) {
  int channels = 0;
  bool bgr = false;
  switch (img.format) {
    case PixelFormat::rgb:
      channels = 3;
      break;
    case PixelFormat::bgr:
      channels = 3;
      bgr = true;
      break;
    case PixelFormat::rgba:
    case PixelFormat::rgbx:
      channels = 4;
      break;
    case PixelFormat::bgra:
    case PixelFormat::bgrx:
      channels = 4;
      bgr = true;
      break;
    default:
      return make_error("drawing needs a packed RGB/BGR frame, got ", pixel_format_name(img.format));
  }
  if (img.data == nullptr || img.width <= 0 || img.height <= 0 || img.width > kMaxImageSide ||
      img.height > kMaxImageSide || img.stride < static_cast<std::size_t>(img.width) * channels)
    return make_error("drawing: bad ", img.width, "x", img.height, " frame view");
  auto colour = [&](const std::array<std::uint8_t, 3>& rgb) {
    return bgr ? cv::Scalar(rgb[2], rgb[1], rgb[0], 255) : cv::Scalar(rgb[0], rgb[1], rgb[2], 255);
  };
  try {
    cv::Mat m(img.height, img.width, channels == 3 ? CV_8UC3 : CV_8UC4, img.data, img.stride);
    for (const Region& r : regions) {
      const Quad q = r.quad ? *r.quad : quad_of(clip(r.box, img.width, img.height));
      std::vector<cv::Point> poly;
      for (const Point& p : q) {
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) break;
        poly.emplace_back(static_cast<int>(std::lround(std::clamp(p.x, -1.0f, img.width + 1.0f))),
                          static_cast<int>(std::lround(std::clamp(p.y, -1.0f, img.height + 1.0f))));
      }
      if (poly.size() != 4) continue;
      cv::polylines(m, std::vector<std::vector<cv::Point>>{poly}, true, colour(style.box_rgb),
                    style.thickness, cv::LINE_AA);
      const std::string label = style.labels ? ascii(region_label(r, style.scores)) : std::string();
      if (label.empty()) continue;
      const Box b = clip(r.box, img.width, img.height);
      const double scale = std::clamp(b.height / 40.0, 0.45, 1.2);
      int base = 0;
      const cv::Size size = cv::getTextSize(label, cv::FONT_HERSHEY_SIMPLEX, scale, 1, &base);
      // Above the box; below it when the box touches the frame's top; inside its top when the
      // box fills the frame's height. (y is the text's baseline.)
      int y = b.y - 4;
      if (y < size.height + base) {
        y = b.y + b.height + size.height + 4;
        if (y + base > img.height) y = b.y + size.height + 4;
      }
      const int x = std::clamp(b.x, 0, std::max(0, img.width - size.width));
      cv::rectangle(m, cv::Point(x, y - size.height - 2), cv::Point(x + size.width, y + base - 2),
                    colour(style.label_rgb), cv::FILLED);
      cv::putText(m, label, cv::Point(x, y - 2), cv::FONT_HERSHEY_SIMPLEX, scale, colour(style.text_rgb), 1,
                  cv::LINE_AA);
    }
  } catch (const cv::Exception& e) {
    return make_error("drawing: OpenCV: ", e.what());
  }
  return {};
}

}  // namespace weave::vision
