// OpenCV helpers shared by the image code of core/vision (internal: only .cpp files of
// core/vision include it, so that the public headers stay free of OpenCV).
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <span>

#include "core/kernels/pixels.h"
#include "core/vision/image.h"
#include "core/vision/preprocess.h"

namespace weave::vision::detail {

// The frame as an 8-bit, 3-channel image in `order`. Wraps the source without copying when it
// already is that (then it must not be written). May throw cv::Exception.
[[nodiscard]] cv::Mat to_three_channels(const ImageView& src, ChannelOrder order);

// Writes `image` (8-bit, 3 channels, image.rows == height, image.cols <= width) as floats
// (pixel * scale - mean[c]) / std[c] into `dst` (3 * width * height floats, spec.layout);
// columns right of the image get the value of a pixel `pad` (pixel units, 0..255).
//
// NCHW rows go through `to_planes` when given (the fast path's vector routine: pixel * a + b,
// within a few ulps of the portable table lookup); tests pass nullptr to run the table.
// (weave::fast_pixels_to_planes() is the active instruction set's routine, or nullptr: portable
// build, WEAVE_ISA=none, old CPU.)
void write_tensor(const cv::Mat& image, const PreprocessSpec& spec, int width, int height, double pad,
                  std::span<float> dst, PixelsToPlanes to_planes = weave::fast_pixels_to_planes());

}  // namespace weave::vision::detail
