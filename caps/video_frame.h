// Mapped GstVideoFrames as core/vision image views, for the elements that read frames
// (weaveconvert) or draw on them (weaveoverlay). Errors say what does not fit.
#pragma once

#include <gst/video/video.h>

#include "core/common/status.h"
#include "core/vision/draw.h"
#include "core/vision/image.h"

namespace weave::caps {

// A read view of a mapped frame; errors for formats core/vision lacks or negative strides.
[[nodiscard]] Expected<vision::ImageView> image_view(const GstVideoFrame& frame);
// A write view of a frame mapped for writing; packed RGB/BGR formats (with or without alpha) only.
[[nodiscard]] Expected<vision::MutableImageView> mutable_image_view(GstVideoFrame& frame);

}  // namespace weave::caps
