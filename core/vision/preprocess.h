// Video frame -> float tensor: colour conversion, resize (stretch or letterbox), scaling,
// per-channel mean/std and layout. This is everything weaveconvert does; the element only maps
// buffers and negotiates sizes.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/vision/image.h"

namespace weave::vision {

enum class Layout { nchw, nhwc };
enum class ChannelOrder { rgb, bgr };
enum class ResizeMode { stretch, letterbox };

struct PreprocessSpec {
  int width = 0;  // output tensor width and height (> 0)
  int height = 0;
  Layout layout = Layout::nchw;
  ChannelOrder order = ChannelOrder::rgb;
  ResizeMode resize = ResizeMode::stretch;
  // value = (pixel * scale - mean[c]) / std[c]; c indexes the tensor's channels, i.e. mean and std
  // are listed in `order` (with order=bgr, mean[0] applies to blue).
  float scale = 1.0f / 255.0f;
  std::array<float, 3> mean{0.0f, 0.0f, 0.0f};
  std::array<float, 3> std{1.0f, 1.0f, 1.0f};
  // Letterbox padding, in pixel units (0..255) before scale/mean/std, like a grey 114 border.
  double pad_value = 0.0;
};

// Where the source image landed in the output: tensor_x = src_x * scale_x + offset_x.
// Later elements use it to map boxes back to the frame.
struct Letterbox {
  double scale_x = 1.0;
  double scale_y = 1.0;
  int offset_x = 0;
  int offset_y = 0;
  int content_width = 0;  // size of the resized image inside the output
  int content_height = 0;
  friend bool operator==(const Letterbox&, const Letterbox&) = default;
};

// Aspect-preserving fit of src into dst, centred (odd padding puts the extra pixel right/bottom).
[[nodiscard]] Letterbox compute_letterbox(int src_width, int src_height, int dst_width, int dst_height);

// Number of floats the output of `spec` holds (3 * width * height).
[[nodiscard]] std::size_t output_elements(const PreprocessSpec& spec);

// Checks sizes, a finite scale and non-zero, finite std values.
[[nodiscard]] Status validate(const PreprocessSpec& spec);

// Writes the tensor for `src` into `dst` (exactly output_elements(spec) floats) and reports the
// letterbox geometry used (for stretch: independent x/y scales and no offsets).
[[nodiscard]] Expected<Letterbox> preprocess(const ImageView& src, const PreprocessSpec& spec,
                                             std::span<float> dst);

// Parses three floats: "0.485,0.456,0.406", "<0.485, 0.456, 0.406>" (GStreamer array syntax,
// optionally with "(float)" casts) or a single value applied to all three channels.
[[nodiscard]] Expected<std::array<float, 3>> parse_float_triple(std::string_view text);
// "0.485,0.456,0.406" (shortest round-trip form).
[[nodiscard]] std::string format_float_triple(const std::array<float, 3>& v);

}  // namespace weave::vision
