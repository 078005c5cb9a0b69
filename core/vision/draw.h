// Drawing regions onto a frame (weaveoverlay's work, OpenCV): each region's box (its rotated
// quad when it has one) and a label above it (below it when the box touches the frame's top) --
// the text read with its score, else the classification or the detected label. OpenCV's fonts have ASCII
// only: other characters are drawn as '?'.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/common/status.h"
#include "core/vision/image.h"
#include "core/vision/regions.h"

namespace weave::vision {

// A frame to draw on: one packed 8-bit plane (RGB, BGR, RGBA, BGRA, RGBx, BGRx).
struct MutableImageView {
  PixelFormat format = PixelFormat::rgb;
  int width = 0;
  int height = 0;
  std::uint8_t* data = nullptr;
  std::size_t stride = 0;
};

struct DrawStyle {
  std::array<std::uint8_t, 3> box_rgb{0, 200, 0};
  std::array<std::uint8_t, 3> text_rgb{255, 255, 255};
  std::array<std::uint8_t, 3> label_rgb{0, 120, 0};  // background of the label
  int thickness = 2;
  bool labels = true;
  bool scores = true;
};

// What the label of a region says: "text (0.97)", "label (0.80)", "class 3 (0.5)"; "#7 text
// (0.97)" for a region of track 7.
[[nodiscard]] std::string region_label(const Region& region, bool with_score);

// Draws every region (boxes clipped by the frame). Fails only for a bad view.
[[nodiscard]] Status draw_regions(const MutableImageView& image, std::span<const Region> regions,
                                  const DrawStyle& style = {});

}  // namespace weave::vision
