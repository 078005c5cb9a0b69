// A decoded video frame as core/vision sees it: pixel format, size and plane pointers with their
// strides, described without GStreamer types so preprocessing can be used (and tested) on its own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/common/status.h"

namespace weave::vision {

// The raw video formats weaveconvert accepts. Names follow GStreamer's format strings.
enum class PixelFormat { rgb, bgr, rgba, bgra, rgbx, bgrx, gray8, i420, nv12 };

// "RGB", "BGRx", "GRAY8", "I420", ...
[[nodiscard]] std::string_view pixel_format_name(PixelFormat f);
[[nodiscard]] std::optional<PixelFormat> pixel_format_from_name(std::string_view name);
[[nodiscard]] int plane_count(PixelFormat f);

// Frames larger than this in either direction are rejected (no camera produces them, and it bounds
// every allocation preprocessing makes).
inline constexpr int kMaxImageSide = 16384;

// Non-owning. Plane p holds rows of `strides[p]` bytes. For I420 the chroma planes are
// ceil(w/2) x ceil(h/2); for NV12 plane 1 holds ceil(h/2) rows of interleaved U,V pairs.
struct ImageView {
  PixelFormat format = PixelFormat::rgb;
  int width = 0;
  int height = 0;
  std::array<const std::uint8_t*, 3> planes{};
  std::array<std::size_t, 3> strides{};
};

// Bytes a row of plane `p` needs at least (before stride padding).
[[nodiscard]] std::size_t min_row_bytes(PixelFormat f, int width, int plane);
// Rows in plane `p`.
[[nodiscard]] int plane_rows(PixelFormat f, int height, int plane);

// Checks size limits, that every plane the format needs is present and that strides cover a row.
[[nodiscard]] Status validate(const ImageView& img);

}  // namespace weave::vision
