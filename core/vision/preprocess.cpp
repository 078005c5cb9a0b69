#include "core/vision/preprocess.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <vector>

#include "core/vision/cv_image.h"

namespace weave::vision {

Letterbox compute_letterbox(int src_width, int src_height, int dst_width, int dst_height) {
  Letterbox lb;
  if (src_width <= 0 || src_height <= 0 || dst_width <= 0 || dst_height <= 0) return lb;
  const double s =
      std::min(static_cast<double>(dst_width) / src_width, static_cast<double>(dst_height) / src_height);
  lb.scale_x = lb.scale_y = s;
  lb.content_width = std::clamp(static_cast<int>(std::lround(src_width * s)), 1, dst_width);
  lb.content_height = std::clamp(static_cast<int>(std::lround(src_height * s)), 1, dst_height);
  lb.offset_x = (dst_width - lb.content_width) / 2;
  lb.offset_y = (dst_height - lb.content_height) / 2;
  return lb;
}

std::size_t output_elements(const PreprocessSpec& spec) {
  if (spec.width <= 0 || spec.height <= 0) return 0;
  return 3 * static_cast<std::size_t>(spec.width) * static_cast<std::size_t>(spec.height);
}

Status validate(const PreprocessSpec& spec) {
  if (spec.width <= 0 || spec.height <= 0 || spec.width > kMaxImageSide || spec.height > kMaxImageSide)
    return make_error("output size ", spec.width, "x", spec.height, " must be within 1..", kMaxImageSide);
  if (!std::isfinite(spec.scale)) return make_error("scale ", spec.scale, " is not finite");
  for (int c = 0; c < 3; ++c) {
    if (!std::isfinite(spec.mean[c])) return make_error("mean[", c, "] is not finite");
    if (!std::isfinite(spec.std[c]) || spec.std[c] == 0.0f)
      return make_error("std[", c, "] = ", spec.std[c], ": must be finite and non-zero");
  }
  return {};
}

namespace {

// OpenCV's YUV 4:2:0 conversions need even sizes and contiguous planes; GStreamer frames have
// strides and may be odd-sized (chroma is then ceil(w/2) wide). Copy into OpenCV's layout, padding
// odd sizes by repeating the last luma column/row, convert, and crop back.
cv::Mat yuv420_to_rgb(const ImageView& src, bool bgr) {
  const int w = src.width, h = src.height;
  const int we = w + (w & 1), he = h + (h & 1);
  const int cw = we / 2, ch = he / 2;
  cv::Mat packed(he * 3 / 2, we, CV_8UC1);
  std::uint8_t* base = packed.data;  // continuous: rows of `we` bytes
  for (int y = 0; y < he; ++y) {
    const std::uint8_t* row = src.planes[0] + static_cast<std::size_t>(std::min(y, h - 1)) * src.strides[0];
    std::uint8_t* out = base + static_cast<std::size_t>(y) * we;
    std::copy(row, row + w, out);
    if (we != w) out[w] = row[w - 1];
  }
  std::uint8_t* chroma = base + static_cast<std::size_t>(we) * he;
  int code = 0;
  if (src.format == PixelFormat::i420) {
    for (int p = 1; p <= 2; ++p) {
      std::uint8_t* dst = chroma + static_cast<std::size_t>(p - 1) * cw * ch;
      for (int y = 0; y < ch; ++y)
        std::copy_n(src.planes[p] + static_cast<std::size_t>(y) * src.strides[p], cw,
                    dst + static_cast<std::size_t>(y) * cw);
    }
    code = bgr ? cv::COLOR_YUV2BGR_I420 : cv::COLOR_YUV2RGB_I420;
  } else {
    for (int y = 0; y < ch; ++y)
      std::copy_n(src.planes[1] + static_cast<std::size_t>(y) * src.strides[1], 2 * cw,
                  chroma + static_cast<std::size_t>(y) * 2 * cw);
    code = bgr ? cv::COLOR_YUV2BGR_NV12 : cv::COLOR_YUV2RGB_NV12;
  }
  cv::Mat rgb;
  cv::cvtColor(packed, rgb, code);
  return rgb(cv::Rect(0, 0, w, h));
}

}  // namespace

cv::Mat detail::to_three_channels(const ImageView& src, ChannelOrder order) {
  const bool bgr = order == ChannelOrder::bgr;
  auto* data = const_cast<std::uint8_t*>(src.planes[0]);  // cv::Mat has no const view; never written
  cv::Mat out;
  switch (src.format) {
    case PixelFormat::rgb:
    case PixelFormat::bgr: {
      cv::Mat in(src.height, src.width, CV_8UC3, data, src.strides[0]);
      if ((src.format == PixelFormat::bgr) == bgr) return in;
      cv::cvtColor(in, out, cv::COLOR_RGB2BGR);  // the same swap both ways
      return out;
    }
    case PixelFormat::rgba:
    case PixelFormat::rgbx:
      cv::cvtColor(cv::Mat(src.height, src.width, CV_8UC4, data, src.strides[0]), out,
                   bgr ? cv::COLOR_RGBA2BGR : cv::COLOR_RGBA2RGB);
      return out;
    case PixelFormat::bgra:
    case PixelFormat::bgrx:
      cv::cvtColor(cv::Mat(src.height, src.width, CV_8UC4, data, src.strides[0]), out,
                   bgr ? cv::COLOR_BGRA2BGR : cv::COLOR_BGRA2RGB);
      return out;
    case PixelFormat::gray8:
      cv::cvtColor(cv::Mat(src.height, src.width, CV_8UC1, data, src.strides[0]), out, cv::COLOR_GRAY2RGB);
      return out;
    case PixelFormat::i420:
    case PixelFormat::nv12:
      return yuv420_to_rgb(src, bgr);
  }
  return out;
}

void detail::write_tensor(const cv::Mat& image, const PreprocessSpec& spec, int width, int height, double pad,
                          std::span<float> dst, PixelsToPlanes to_planes) {
  // One lookup table per channel turns the per-pixel affine map into a load.
  std::array<std::array<float, 256>, 3> lut;
  std::array<float, 3> padded;
  for (int c = 0; c < 3; ++c) {
    for (int v = 0; v < 256; ++v)
      lut[c][v] = (static_cast<float>(v) * spec.scale - spec.mean[c]) / spec.std[c];
    padded[c] = static_cast<float>((pad * spec.scale - spec.mean[c]) / spec.std[c]);
  }
  const std::size_t W = width, H = height, plane = W * H, content = std::min<std::size_t>(image.cols, W);
  std::array<float, 3> a, b;
  for (int c = 0; c < 3; ++c) {
    a[c] = spec.scale / spec.std[c];
    b[c] = -spec.mean[c] / spec.std[c];
  }
  for (std::size_t y = 0; y < H; ++y) {
    const std::uint8_t* row = image.ptr<std::uint8_t>(static_cast<int>(y));
    if (spec.layout == Layout::nchw) {
      float* r0 = dst.data() + y * W;
      float* r1 = r0 + plane;
      float* r2 = r1 + plane;
      if (to_planes != nullptr) {
        to_planes(row, static_cast<std::int64_t>(content), r0, r1, r2, a.data(), b.data());
      } else {
        for (std::size_t x = 0; x < content; ++x) {
          r0[x] = lut[0][row[3 * x]];
          r1[x] = lut[1][row[3 * x + 1]];
          r2[x] = lut[2][row[3 * x + 2]];
        }
      }
      std::fill(r0 + content, r0 + W, padded[0]);
      std::fill(r1 + content, r1 + W, padded[1]);
      std::fill(r2 + content, r2 + W, padded[2]);
    } else {
      float* out = dst.data() + y * W * 3;
      for (std::size_t i = 0; i < content * 3; i += 3) {
        out[i] = lut[0][row[i]];
        out[i + 1] = lut[1][row[i + 1]];
        out[i + 2] = lut[2][row[i + 2]];
      }
      for (std::size_t i = content * 3; i < W * 3; i += 3) {
        out[i] = padded[0];
        out[i + 1] = padded[1];
        out[i + 2] = padded[2];
      }
    }
  }
}

Expected<Letterbox> preprocess(const ImageView& src, const PreprocessSpec& spec, std::span<float> dst) {
  WEAVE_TRY(validate(src));
  WEAVE_TRY(validate(spec));
  const std::size_t need = output_elements(spec);
  if (dst.size() != need)
    return make_error("output tensor holds ", dst.size(), " floats, ", spec.width, "x", spec.height,
                      "x3 needs ", need);

  // OpenCV reports failures by throwing; nothing may escape the core API.
  try {
    const cv::Mat three = detail::to_three_channels(src, spec.order);
    Letterbox lb;
    cv::Mat sized;
    if (spec.resize == ResizeMode::letterbox) {
      lb = compute_letterbox(src.width, src.height, spec.width, spec.height);
    } else {
      lb.scale_x = static_cast<double>(spec.width) / src.width;
      lb.scale_y = static_cast<double>(spec.height) / src.height;
      lb.content_width = spec.width;
      lb.content_height = spec.height;
    }
    cv::Mat content = three;
    if (lb.content_width != src.width || lb.content_height != src.height)
      cv::resize(three, content, cv::Size(lb.content_width, lb.content_height), 0, 0, cv::INTER_LINEAR);
    if (lb.content_width != spec.width || lb.content_height != spec.height) {
      const int right = spec.width - lb.content_width - lb.offset_x;
      const int bottom = spec.height - lb.content_height - lb.offset_y;
      cv::copyMakeBorder(content, sized, lb.offset_y, bottom, lb.offset_x, right, cv::BORDER_CONSTANT,
                         cv::Scalar::all(spec.pad_value));
    } else {
      sized = content;
    }

    detail::write_tensor(sized, spec, spec.width, spec.height, spec.pad_value, dst);
    return lb;
  } catch (const cv::Exception& e) {
    return make_error("preprocessing ", pixel_format_name(src.format), " ", src.width, "x", src.height,
                      ": OpenCV: ", e.what());
  }
}

Expected<std::array<float, 3>> parse_float_triple(std::string_view text) {
  std::vector<float> values;
  std::string_view rest = text;
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  auto trim = [&](std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
  };
  rest = trim(rest);
  if (!rest.empty() && rest.front() == '<') {
    if (rest.back() != '>') return make_error("'", text, "': unterminated '<'");
    rest = trim(rest.substr(1, rest.size() - 2));
  }
  while (true) {
    const std::size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    if (!item.empty() && item.front() == '(') {  // a GStreamer type cast such as "(float)"
      const std::size_t close = item.find(')');
      if (close == std::string_view::npos) return make_error("'", text, "': unterminated '('");
      item = trim(item.substr(close + 1));
    }
    float v = 0.0f;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || !std::isfinite(v))
      return make_error("'", text, "': '", item, "' is not a number");
    values.push_back(v);
    if (values.size() > 3) break;
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (values.size() == 1) return std::array<float, 3>{values[0], values[0], values[0]};
  if (values.size() != 3)
    return make_error("'", text, "': expected 3 comma-separated values (or one for all channels)");
  return std::array<float, 3>{values[0], values[1], values[2]};
}

std::string format_float_triple(const std::array<float, 3>& v) {
  std::string out;
  for (int i = 0; i < 3; ++i) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v[i]);
    if (i) out += ',';
    out.append(buf, r.ptr);
  }
  return out;
}

}  // namespace weave::vision
