// core/vision preprocessing: every pixel format, strides, mean/std, layouts, letterbox geometry.
#define BOOST_TEST_MODULE vision
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <opencv2/core.hpp>
#include <random>
#include <vector>

#include "core/vision/cv_image.h"
#include "core/vision/preprocess.h"
#if WEAVE_HAVE_FAST
#include "core/kernels/fast/cpu.h"
#endif

namespace wv = weave::vision;

namespace {

constexpr float kTol = 1e-6f;

// A single-plane image of rows with `stride` bytes; `pixels` holds the tight rows.
struct Packed {
  std::vector<std::uint8_t> bytes;
  wv::ImageView view;
  Packed(wv::PixelFormat f, int w, int h, int bpp, std::vector<std::uint8_t> pixels, int pad = 0) {
    const std::size_t stride = static_cast<std::size_t>(w * bpp + pad);
    bytes.assign(stride * h, 0xEE);  // padding bytes must never be read as pixels
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w * bpp; ++x)
        bytes[y * stride + x] = pixels[static_cast<std::size_t>(y * w * bpp + x)];
    view.format = f;
    view.width = w;
    view.height = h;
    view.planes[0] = bytes.data();
    view.strides[0] = stride;
  }
};

wv::PreprocessSpec spec_of(int w, int h) {
  wv::PreprocessSpec s;
  s.width = w;
  s.height = h;
  return s;
}

std::vector<float> run(const wv::ImageView& img, const wv::PreprocessSpec& spec) {
  std::vector<float> out(wv::output_elements(spec), -99.0f);
  auto lb = wv::preprocess(img, spec, out);
  BOOST_TEST_REQUIRE(lb.ok(), (lb.ok() ? "" : lb.message()));
  return out;
}

void check(const std::vector<float>& got, const std::vector<float>& want, float tol = kTol) {
  BOOST_TEST_REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    BOOST_TEST(std::fabs(got[i] - want[i]) <= tol, "index " << i << ": " << got[i] << " vs " << want[i]);
}

float p(int v) {
  return static_cast<float>(v) / 255.0f;
}

// Two pixels, (255,0,0) and (0,128,255), as NCHW planes R, G, B.
const std::vector<float> kTwoPixelsRgb = {p(255), p(0), p(0), p(128), p(0), p(255)};
const std::vector<float> kTwoPixelsBgr = {p(0), p(255), p(0), p(128), p(255), p(0)};

}  // namespace

BOOST_AUTO_TEST_CASE(rgb_and_bgr_sources_nchw) {
  Packed rgb(wv::PixelFormat::rgb, 2, 1, 3, {255, 0, 0, 0, 128, 255});
  check(run(rgb.view, spec_of(2, 1)), kTwoPixelsRgb);
  Packed bgr(wv::PixelFormat::bgr, 2, 1, 3, {0, 0, 255, 255, 128, 0});
  check(run(bgr.view, spec_of(2, 1)), kTwoPixelsRgb);
  auto s = spec_of(2, 1);
  s.order = wv::ChannelOrder::bgr;
  check(run(rgb.view, s), kTwoPixelsBgr);
  check(run(bgr.view, s), kTwoPixelsBgr);
}

BOOST_AUTO_TEST_CASE(four_channel_sources_ignore_alpha) {
  for (auto f : {wv::PixelFormat::rgba, wv::PixelFormat::rgbx}) {
    Packed img(f, 2, 1, 4, {255, 0, 0, 7, 0, 128, 255, 200});
    check(run(img.view, spec_of(2, 1)), kTwoPixelsRgb);
  }
  for (auto f : {wv::PixelFormat::bgra, wv::PixelFormat::bgrx}) {
    Packed img(f, 2, 1, 4, {0, 0, 255, 7, 255, 128, 0, 200});
    check(run(img.view, spec_of(2, 1)), kTwoPixelsRgb);
    auto s = spec_of(2, 1);
    s.order = wv::ChannelOrder::bgr;
    check(run(img.view, s), kTwoPixelsBgr);
  }
}

BOOST_AUTO_TEST_CASE(gray_replicates_to_three_channels) {
  Packed img(wv::PixelFormat::gray8, 2, 1, 1, {10, 250});
  check(run(img.view, spec_of(2, 1)), {p(10), p(250), p(10), p(250), p(10), p(250)});
}

BOOST_AUTO_TEST_CASE(row_stride_padding_is_skipped) {
  // 2x2 RGB with 5 bytes of padding per row filled with 0xEE.
  Packed img(wv::PixelFormat::rgb, 2, 2, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 5);
  check(run(img.view, spec_of(2, 2)),
        {p(1), p(4), p(7), p(10), p(2), p(5), p(8), p(11), p(3), p(6), p(9), p(12)});
}

BOOST_AUTO_TEST_CASE(nhwc_interleaves_channels) {
  Packed img(wv::PixelFormat::rgb, 2, 1, 3, {255, 0, 0, 0, 128, 255});
  auto s = spec_of(2, 1);
  s.layout = wv::Layout::nhwc;
  check(run(img.view, s), {p(255), p(0), p(0), p(0), p(128), p(255)});
}

BOOST_AUTO_TEST_CASE(mean_std_and_scale) {
  Packed img(wv::PixelFormat::rgb, 1, 1, 3, {255, 51, 0});
  auto s = spec_of(1, 1);
  s.mean = {0.5f, 0.25f, 0.125f};
  s.std = {0.5f, 2.0f, 0.25f};
  // (1 - 0.5) / 0.5, (0.2 - 0.25) / 2, (0 - 0.125) / 0.25
  check(run(img.view, s), {1.0f, -0.025f, -0.5f}, 1e-5f);
  s = spec_of(1, 1);
  s.scale = 1.0f;
  s.mean = {100.0f, 0.0f, 0.0f};
  check(run(img.view, s), {155.0f, 51.0f, 0.0f});
  // mean/std follow the tensor's channel order: with bgr, mean[0] applies to blue.
  s = spec_of(1, 1);
  s.order = wv::ChannelOrder::bgr;
  s.scale = 1.0f;
  s.mean = {1.0f, 2.0f, 3.0f};
  check(run(img.view, s), {-1.0f, 49.0f, 252.0f});
}

// The fast path's vector routine against the portable table, and both against the formula, on
// random pixels, odd widths (vector tails) and an image narrower than the tensor (the padding).
BOOST_AUTO_TEST_CASE(fast_pixel_conversion_matches_the_table) {
  const auto fast = weave::fast_pixels_to_planes();
#if WEAVE_HAVE_FAST
  if (weave::fast::active_isa() != weave::fast::Isa::none) BOOST_TEST_REQUIRE(fast != nullptr);
#endif
  if (fast == nullptr) BOOST_TEST_MESSAGE("no fast path on this build or CPU: the table alone is checked");
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const auto [w, cols, h] : {std::array{1, 1, 1}, {37, 37, 3}, {64, 51, 2}, {224, 224, 2}}) {
    cv::Mat image(h, cols, CV_8UC3);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < cols * 3; ++x) image.ptr<std::uint8_t>(y)[x] = static_cast<std::uint8_t>(byte(rng));
    auto s = spec_of(w, h);
    s.mean = {0.485f, 0.456f, 0.406f};
    s.std = {0.229f, 0.224f, 0.225f};
    const double pad = 114.0;
    std::vector<float> table(wv::output_elements(s), -99.0f), vec(table.size(), -99.0f);
    wv::detail::write_tensor(image, s, w, h, pad, table, nullptr);
    wv::detail::write_tensor(image, s, w, h, pad, vec, fast);
    int bad = 0;
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const double v = x < cols ? image.ptr<std::uint8_t>(y)[3 * x + c] : pad;
          const double want = (v * s.scale - s.mean[c]) / s.std[c];
          const std::size_t i = (static_cast<std::size_t>(c) * h + y) * w + x;
          const double tol = 4e-7 * std::max(1.0, std::fabs(want));
          if (std::fabs(table[i] - want) > tol || std::fabs(vec[i] - want) > tol) ++bad;
        }
    BOOST_TEST(bad == 0, w << "x" << h << " (" << cols << " image columns): " << bad << " values off");
  }
}

namespace {
// A w x h YUV 4:2:0 frame (I420 or NV12) with constant Y, U, V and padded strides.
struct Yuv {
  std::vector<std::uint8_t> y, u, v, uv;
  wv::ImageView view;
  Yuv(wv::PixelFormat f, int w, int h, std::uint8_t Y, std::uint8_t U, std::uint8_t V) {
    const int cw = (w + 1) / 2, ch = (h + 1) / 2;
    const std::size_t ys = w + 3, cs = cw + 1;
    y.assign(ys * h, Y);
    view.format = f;
    view.width = w;
    view.height = h;
    view.planes[0] = y.data();
    view.strides[0] = ys;
    if (f == wv::PixelFormat::i420) {
      u.assign(cs * ch, U);
      v.assign(cs * ch, V);
      view.planes[1] = u.data();
      view.planes[2] = v.data();
      view.strides[1] = view.strides[2] = cs;
    } else {
      const std::size_t s = 2 * cw + 2;
      uv.assign(s * ch, 0);
      for (int r = 0; r < ch; ++r)
        for (int x = 0; x < cw; ++x) {
          uv[r * s + 2 * x] = U;
          uv[r * s + 2 * x + 1] = V;
        }
      view.planes[1] = uv.data();
      view.strides[1] = s;
    }
  }
};
}  // namespace

BOOST_AUTO_TEST_CASE(yuv420_bt601_limited_range) {
  for (auto f : {wv::PixelFormat::i420, wv::PixelFormat::nv12}) {
    for (auto [w, h] : {std::pair{2, 2}, std::pair{3, 3}, std::pair{5, 2}}) {
      BOOST_TEST_CONTEXT(wv::pixel_format_name(f) << " " << w << "x" << h) {
        // Video black and white: Y 16 and 235 with neutral chroma.
        auto black = run(Yuv(f, w, h, 16, 128, 128).view, spec_of(w, h));
        check(black, std::vector<float>(black.size(), 0.0f), 1.0f / 255);
        auto white = run(Yuv(f, w, h, 235, 128, 128).view, spec_of(w, h));
        check(white, std::vector<float>(white.size(), 1.0f), 1.0f / 255);
        // BT.601 red is Y 81, Cb 90, Cr 240: swapping U and V would make it blue.
        auto red = run(Yuv(f, w, h, 81, 90, 240).view, spec_of(w, h));
        const std::size_t n = static_cast<std::size_t>(w * h);
        for (std::size_t i = 0; i < n; ++i) {
          BOOST_TEST(red[i] > 0.97f);
          BOOST_TEST(red[n + i] < 0.03f);
          BOOST_TEST(red[2 * n + i] < 0.03f);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(letterbox_geometry) {
  BOOST_TEST((wv::compute_letterbox(640, 480, 320, 320) == wv::Letterbox{0.5, 0.5, 0, 40, 320, 240}));
  BOOST_TEST((wv::compute_letterbox(100, 200, 64, 64) == wv::Letterbox{0.32, 0.32, 16, 0, 32, 64}));
  BOOST_TEST((wv::compute_letterbox(10, 10, 10, 10) == wv::Letterbox{1.0, 1.0, 0, 0, 10, 10}));
  // Odd padding: 3 spare rows put 1 above and 2 below.
  const auto lb = wv::compute_letterbox(4, 1, 4, 4);
  BOOST_TEST(lb.content_height == 1);
  BOOST_TEST(lb.offset_y == 1);
  // Extreme aspect ratios keep at least one pixel of content.
  BOOST_TEST(wv::compute_letterbox(10000, 1, 16, 16).content_height == 1);
}

BOOST_AUTO_TEST_CASE(letterbox_pads_with_pad_value) {
  // 4x2 white into 4x4: rows 1..2 are the image, rows 0 and 3 the border.
  Packed img(wv::PixelFormat::rgb, 4, 2, 3, std::vector<std::uint8_t>(24, 255));
  auto s = spec_of(4, 4);
  s.resize = wv::ResizeMode::letterbox;
  s.pad_value = 51;
  std::vector<float> out(wv::output_elements(s));
  auto lb = wv::preprocess(img.view, s, out);
  BOOST_TEST_REQUIRE(lb.ok());
  BOOST_TEST((*lb == wv::Letterbox{1.0, 1.0, 0, 1, 4, 2}));
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) {
        const float want = (y == 1 || y == 2) ? 1.0f : 0.2f;
        BOOST_TEST(std::fabs(out[c * 16 + y * 4 + x] - want) < 1e-6f, c << "," << y << "," << x);
      }
  // Stretch fills the whole tensor and reports independent scales.
  s.resize = wv::ResizeMode::stretch;
  lb = wv::preprocess(img.view, s, out);
  BOOST_TEST_REQUIRE(lb.ok());
  BOOST_TEST((*lb == wv::Letterbox{1.0, 2.0, 0, 0, 4, 4}));
  for (float v : out) BOOST_TEST(std::fabs(v - 1.0f) < 1e-6f);
}

BOOST_AUTO_TEST_CASE(resize_keeps_solid_colour) {
  Packed img(wv::PixelFormat::rgb, 3, 5, 3, [] {
    std::vector<std::uint8_t> v;
    for (int i = 0; i < 15; ++i) v.insert(v.end(), {10, 20, 30});
    return v;
  }());
  auto out = run(img.view, spec_of(7, 2));
  for (int i = 0; i < 14; ++i) {
    BOOST_TEST(std::fabs(out[i] - p(10)) < 1e-6f);
    BOOST_TEST(std::fabs(out[14 + i] - p(20)) < 1e-6f);
    BOOST_TEST(std::fabs(out[28 + i] - p(30)) < 1e-6f);
  }
}

BOOST_AUTO_TEST_CASE(errors_are_values) {
  Packed img(wv::PixelFormat::rgb, 2, 1, 3, {1, 2, 3, 4, 5, 6});
  std::vector<float> small(5);
  auto r = wv::preprocess(img.view, spec_of(2, 1), small);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("holds 5 floats") != std::string::npos, r.message());

  std::vector<float> out(6);
  auto s = spec_of(2, 1);
  s.std = {1.0f, 0.0f, 1.0f};
  r = wv::preprocess(img.view, s, out);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("std[1]") != std::string::npos, r.message());

  auto bad = img.view;
  bad.strides[0] = 5;
  r = wv::preprocess(bad, spec_of(2, 1), out);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("stride 5 is smaller than a row (6 bytes)") != std::string::npos, r.message());

  bad = img.view;
  bad.format = wv::PixelFormat::i420;  // planes 1 and 2 missing
  bad.strides[0] = 6;
  r = wv::preprocess(bad, spec_of(2, 1), out);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("plane 1 is missing") != std::string::npos, r.message());

  bad = img.view;
  bad.width = 100000;
  r = wv::preprocess(bad, spec_of(2, 1), out);
  BOOST_TEST(!r.ok());
  r = wv::preprocess(img.view, spec_of(0, 1), out);
  BOOST_TEST(!r.ok());
}

BOOST_AUTO_TEST_CASE(float_triples) {
  using A = std::array<float, 3>;
  BOOST_TEST((*wv::parse_float_triple("0.485,0.456,0.406") == A{0.485f, 0.456f, 0.406f}));
  BOOST_TEST((*wv::parse_float_triple(" < 0.5, 1, -2 > ") == A{0.5f, 1.0f, -2.0f}));
  BOOST_TEST((*wv::parse_float_triple("<(float)0.25, (double)0.5, (float)1>") == A{0.25f, 0.5f, 1.0f}));
  BOOST_TEST((*wv::parse_float_triple("127.5") == A{127.5f, 127.5f, 127.5f}));
  for (const char* bad : {"", "1,2", "1,2,3,4", "a,b,c", "1,,3", "<1,2,3", "1,2,nan", "1,2,3x"}) {
    auto r = wv::parse_float_triple(bad);
    BOOST_TEST(!r.ok(), bad);
  }
  BOOST_TEST(wv::parse_float_triple("1,2").message().find("expected 3") != std::string::npos);
  BOOST_TEST(wv::format_float_triple({0.485f, 1.0f, -2.5f}) == "0.485,1,-2.5");
  BOOST_TEST((*wv::parse_float_triple(wv::format_float_triple({0.1f, 0.2f, 0.3f})) == A{0.1f, 0.2f, 0.3f}));
}

BOOST_AUTO_TEST_CASE(pixel_format_names) {
  for (const char* n : {"RGB", "BGR", "RGBA", "BGRA", "RGBx", "BGRx", "GRAY8", "I420", "NV12"}) {
    auto f = wv::pixel_format_from_name(n);
    BOOST_TEST_REQUIRE(f.has_value(), n);
    BOOST_TEST(wv::pixel_format_name(*f) == n);
  }
  BOOST_TEST(!wv::pixel_format_from_name("YUY2").has_value());
}
