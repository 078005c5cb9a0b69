#define BOOST_TEST_MODULE kernel_resize
#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "tests/kernels/test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

KernelCase resize_scales(Tensor x, std::vector<float> scales) {
  const auto r = static_cast<int64_t>(scales.size());
  return KernelCase{
      "Resize", {}, 13, ins(std::move(x), Tensor(), make_f32({r}, std::move(scales))), {false, false, true}};
}

KernelCase resize_sizes(Tensor x, std::vector<int64_t> sizes) {
  const auto r = static_cast<int64_t>(sizes.size());
  return KernelCase{"Resize",
                    {},
                    13,
                    ins(std::move(x), Tensor(), Tensor(), make_i64({r}, std::move(sizes))),
                    {false, false, false, true}};
}

}  // namespace

BOOST_AUTO_TEST_CASE(nearest_upsample_2x) {
  for (std::string coord : {"half_pixel", "asymmetric"}) {
    KernelCase k = resize_scales(make_f32({1, 1, 2, 2}, {1, 2, 3, 4}), {1, 1, 2, 2});
    k.attrs.set("coordinate_transformation_mode", coord);
    auto r = run_kernel(k);
    REQUIRE_OK(r);
    BOOST_CHECK((*r)[0].dims() == Dims({1, 1, 4, 4}));
    check_close((*r)[0], {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  }
}

BOOST_AUTO_TEST_CASE(nearest_modes_on_halfway_points) {
  // half_pixel downsample 4 -> 2 samples at 0.5 and 2.5: exactly between two pixels.
  const std::pair<std::string, std::vector<float>> cases[] = {
      {"round_prefer_floor", {1, 3}}, {"round_prefer_ceil", {2, 4}}, {"floor", {1, 3}}, {"ceil", {2, 4}}};
  for (const auto& [mode, want] : cases) {
    KernelCase k = resize_sizes(make_f32({1, 1, 1, 4}, {1, 2, 3, 4}), {1, 1, 1, 2});
    k.attrs.set("nearest_mode", mode);
    auto r = run_kernel(k);
    REQUIRE_OK(r);
    check_close((*r)[0], want);
  }
}

BOOST_AUTO_TEST_CASE(linear_align_corners) {
  KernelCase k = resize_sizes(make_f32({1, 1, 2, 2}, {0, 3, 6, 9}), {1, 1, 3, 3});
  k.attrs.set("mode", std::string("linear"));
  k.attrs.set("coordinate_transformation_mode", std::string("align_corners"));
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {0, 1.5f, 3, 3, 4.5f, 6, 6, 7.5f, 9});
}

BOOST_AUTO_TEST_CASE(linear_coordinate_modes) {
  const std::pair<std::string, std::vector<float>> cases[] = {
      {"half_pixel", {0, 1, 3, 4}}, {"pytorch_half_pixel", {0, 1, 3, 4}}, {"asymmetric", {0, 2, 4, 4}}};
  for (const auto& [coord, want] : cases) {
    KernelCase k = resize_scales(make_f32({1, 1, 1, 2}, {0, 4}), {1, 1, 1, 2});
    k.attrs.set("mode", std::string("linear"));
    k.attrs.set("coordinate_transformation_mode", coord);
    auto r = run_kernel(k);
    REQUIRE_OK(r);
    check_close((*r)[0], want);
  }
}

BOOST_AUTO_TEST_CASE(linear_threads_agree_and_identity) {
  KernelCase k = resize_scales(random_f32({2, 3, 7, 9}, 4), {1, 1, 2.5f, 1.5f});
  k.attrs.set("mode", std::string("linear"));
  auto r1 = run_kernel(k, "", 1), r2 = run_kernel(k, "", 2);
  REQUIRE_OK(r1);
  REQUIRE_OK(r2);
  BOOST_CHECK((*r1)[0].dims() == Dims({2, 3, 17, 13}));
  BOOST_CHECK_EQUAL(max_abs_diff((*r1)[0], (*r2)[0]), 0.0);
  // Scale 1 everywhere is the identity.
  KernelCase id = resize_scales(random_f32({1, 2, 3, 4}, 5), {1, 1, 1, 1});
  id.attrs.set("mode", std::string("linear"));
  auto r = run_kernel(id);
  REQUIRE_OK(r);
  BOOST_CHECK_EQUAL(max_abs_diff((*r)[0], random_f32({1, 2, 3, 4}, 5)), 0.0);
}

// Bilinear (half_pixel) against the formula, for upscales, downscales and mixes, several planes,
// 1 to 3 threads: rows of the output within 2048 floats go through the pass that interpolates
// each input row across once and blends two cached rows (ref/resize.cpp), wider ones the
// per-output loop.
BOOST_AUTO_TEST_CASE(linear_half_pixel_matches_the_formula) {
  const std::array<std::array<int64_t, 4>, 6> cases = {{
      {20, 20, 320, 320},
      {7, 9, 3, 4},
      {5, 40, 17, 6},
      {1, 3, 6, 1},
      {9, 2, 9, 2050},
      {3, 2100, 8, 2048},
  }};
  auto source = [](int64_t o, int64_t in, int64_t out) {
    const double x =
        (static_cast<double>(o) + 0.5) * static_cast<double>(in) / static_cast<double>(out) - 0.5;
    const double c = std::clamp(x, 0.0, static_cast<double>(in - 1));
    const auto i0 = static_cast<int64_t>(std::floor(c));
    return std::tuple<int64_t, int64_t, double>{i0, std::min(i0 + 1, in - 1), c - static_cast<double>(i0)};
  };
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const auto [ih, iw, oh, ow] = cases[c];
    const int64_t planes = 3;
    Tensor x = random_f32({1, planes, ih, iw}, static_cast<uint32_t>(40 + c));
    KernelCase k =
        resize_sizes(random_f32({1, planes, ih, iw}, static_cast<uint32_t>(40 + c)), {1, planes, oh, ow});
    k.attrs.set("mode", std::string("linear"));
    std::vector<float> want(static_cast<std::size_t>(planes * oh * ow));
    const float* xv = x.as<float>();
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t h = 0; h < oh; ++h) {
        const auto [h0, h1, lh] = source(h, ih, oh);
        for (int64_t w = 0; w < ow; ++w) {
          const auto [w0, w1, lw] = source(w, iw, ow);
          auto at = [&](int64_t r, int64_t q) { return static_cast<double>(xv[(p * ih + r) * iw + q]); };
          const double top = at(h0, w0) + (at(h0, w1) - at(h0, w0)) * lw;
          const double bot = at(h1, w0) + (at(h1, w1) - at(h1, w0)) * lw;
          want[static_cast<std::size_t>((p * oh + h) * ow + w)] = static_cast<float>(top + (bot - top) * lh);
        }
      }
    for (int threads = 1; threads <= 3; ++threads) {
      auto r = run_kernel(k, "", threads);
      REQUIRE_OK(r);
      BOOST_TEST_CONTEXT("case " << c << " threads " << threads) {
        check_close((*r)[0], want, 1e-5);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(upsample_opset9) {
  KernelCase k{
      "Upsample", {}, 9, ins(make_f32({1, 1, 1, 2}, {5, 6}), make_f32({4}, {1, 1, 2, 3})), {false, true}};
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  BOOST_CHECK((*r)[0].dims() == Dims({1, 1, 2, 6}));
  check_close((*r)[0], {5, 5, 5, 6, 6, 6, 5, 5, 5, 6, 6, 6});
}

BOOST_AUTO_TEST_CASE(resize_errors) {
  KernelCase k = resize_scales(random_f32({1, 1, 2, 2}, 1), {1, 1, 2, 2});
  k.constant = {false, false, false};
  auto r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "test node (Resize)"));
  BOOST_CHECK(has(r.message(), "known before running"));

  k = resize_scales(random_f32({1, 1, 2, 2}, 1), {1, 1, 2, 2});
  k.attrs.set("mode", std::string("area"));
  r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "'area'"));
  // Cubic is the general Resize kernel (ref/resize.cpp); the reference registry's own kernel refuses it.
  k.attrs.set("mode", std::string("cubic"));
  BOOST_CHECK(run_kernel(k).ok());

  k = resize_scales(random_f32({1, 2, 2, 2}, 1), {1, 2, 2, 2});
  k.attrs.set("mode", std::string("linear"));
  r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "1x2x2x2"));

  k = resize_scales(random_f32({1, 1, 2, 2}, 1), {2, 2});
  r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "test node (Resize)"));
}
