#include "caps/video_frame.h"

#include <algorithm>

namespace weave::caps {

namespace {

Expected<vision::PixelFormat> format_of(const GstVideoFrame& frame) {
  const char* name = gst_video_format_to_string(GST_VIDEO_FRAME_FORMAT(&frame));
  auto f = vision::pixel_format_from_name(name != nullptr ? name : "");
  if (!f) return make_error("video format ", name != nullptr ? name : "?", " is not supported");
  return *f;
}

}  // namespace

Expected<vision::ImageView> image_view(const GstVideoFrame& frame) {
  auto format = format_of(frame);
  if (!format) return format.error();
  vision::ImageView img;
  img.format = *format;
  img.width = GST_VIDEO_FRAME_WIDTH(&frame);
  img.height = GST_VIDEO_FRAME_HEIGHT(&frame);
  for (int p = 0;
       p < vision::plane_count(img.format) && p < static_cast<int>(GST_VIDEO_FRAME_N_PLANES(&frame)); ++p) {
    img.planes[p] = static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, p));
    const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, p);
    if (stride < 0) return make_error("negative strides are not supported");
    img.strides[p] = static_cast<std::size_t>(stride);
  }
  WEAVE_TRY(vision::validate(img));
  return img;
}

Expected<vision::MutableImageView> mutable_image_view(GstVideoFrame& frame) {
  auto format = format_of(frame);
  if (!format) return format.error();
  if (vision::plane_count(*format) != 1 || *format == vision::PixelFormat::gray8)
    return make_error("drawing needs a packed RGB/BGR format, got ",
                      gst_video_format_to_string(GST_VIDEO_FRAME_FORMAT(&frame)));
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
  if (stride < 0) return make_error("negative strides are not supported");
  vision::MutableImageView img;
  img.format = *format;
  img.width = GST_VIDEO_FRAME_WIDTH(&frame);
  img.height = GST_VIDEO_FRAME_HEIGHT(&frame);
  img.data = static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0));
  img.stride = static_cast<std::size_t>(stride);
  return img;
}

}  // namespace weave::caps
