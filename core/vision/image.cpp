#include "core/vision/image.h"

#include <string>

namespace weave::vision {

namespace {
struct FormatEntry {
  PixelFormat format;
  std::string_view name;
};
constexpr std::array<FormatEntry, 9> kFormats{{
    {PixelFormat::rgb, "RGB"},
    {PixelFormat::bgr, "BGR"},
    {PixelFormat::rgba, "RGBA"},
    {PixelFormat::bgra, "BGRA"},
    {PixelFormat::rgbx, "RGBx"},
    {PixelFormat::bgrx, "BGRx"},
    {PixelFormat::gray8, "GRAY8"},
    {PixelFormat::i420, "I420"},
    {PixelFormat::nv12, "NV12"},
}};
}  // namespace

std::string_view pixel_format_name(PixelFormat f) {
  for (const auto& e : kFormats)
    if (e.format == f) return e.name;
  return "unknown";
}

std::optional<PixelFormat> pixel_format_from_name(std::string_view name) {
  for (const auto& e : kFormats)
    if (e.name == name) return e.format;
  return std::nullopt;
}

int plane_count(PixelFormat f) {
  switch (f) {
    case PixelFormat::i420:
      return 3;
    case PixelFormat::nv12:
      return 2;
    default:
      return 1;
  }
}

std::size_t min_row_bytes(PixelFormat f, int width, int plane) {
  const auto w = static_cast<std::size_t>(width);
  const std::size_t half = (w + 1) / 2;
  switch (f) {
    case PixelFormat::rgb:
    case PixelFormat::bgr:
      return 3 * w;
    case PixelFormat::rgba:
    case PixelFormat::bgra:
    case PixelFormat::rgbx:
    case PixelFormat::bgrx:
      return 4 * w;
    case PixelFormat::gray8:
      return w;
    case PixelFormat::i420:
      return plane == 0 ? w : half;
    case PixelFormat::nv12:
      return plane == 0 ? w : 2 * half;
  }
  return 0;
}

int plane_rows(PixelFormat f, int height, int plane) {
  if (plane == 0) return height;
  if (f == PixelFormat::i420 || f == PixelFormat::nv12) return (height + 1) / 2;
  return 0;
}

Status validate(const ImageView& img) {
  if (img.width <= 0 || img.height <= 0 || img.width > kMaxImageSide || img.height > kMaxImageSide)
    return make_error("image ", img.width, "x", img.height, ": size must be within 1..", kMaxImageSide);
  for (int p = 0; p < plane_count(img.format); ++p) {
    if (img.planes[p] == nullptr)
      return make_error(pixel_format_name(img.format), " image: plane ", p, " is missing");
    const std::size_t need = min_row_bytes(img.format, img.width, p);
    if (img.strides[p] < need)
      return make_error(pixel_format_name(img.format), " image ", img.width, "x", img.height, ": plane ", p,
                        " stride ", img.strides[p], " is smaller than a row (", need, " bytes)");
  }
  return {};
}

}  // namespace weave::vision
