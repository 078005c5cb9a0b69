#define BOOST_TEST_MODULE kernel_conv
#include <boost/test/unit_test.hpp>

#include "tests/kernels/test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

struct ConvCfg {
  int64_t n, c, h, w, m, kh, kw, group;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool bias = false;
};

// Plain direct convolution (NOTSET padding) written independently of the kernel.
Tensor naive_conv(const ConvCfg& c, const Tensor& x, const Tensor& w, const Tensor* b) {
  const int64_t oh = (c.h + c.pt + c.pb - ((c.kh - 1) * c.dh + 1)) / c.sh + 1;
  const int64_t ow = (c.w + c.pl + c.pr - ((c.kw - 1) * c.dw + 1)) / c.sw + 1;
  Tensor y(DType::float32, Dims{c.n, c.m, oh, ow});
  const int64_t cg = c.c / c.group, mg = c.m / c.group;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t m = 0; m < c.m; ++m)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = b ? b->as<float>()[m] : 0.0;
          const int64_t g = m / mg;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t a = 0; a < c.kh; ++a)
              for (int64_t bb = 0; bb < c.kw; ++bb) {
                const int64_t y0 = i * c.sh - c.pt + a * c.dh, x0 = j * c.sw - c.pl + bb * c.dw;
                if (y0 < 0 || y0 >= c.h || x0 < 0 || x0 >= c.w) continue;
                s += double(x.as<float>()[((n * c.c + g * cg + ci) * c.h + y0) * c.w + x0]) *
                     w.as<float>()[((m * cg + ci) * c.kh + a) * c.kw + bb];
              }
          y.as<float>()[((n * c.m + m) * oh + i) * ow + j] = static_cast<float>(s);
        }
  return y;
}

KernelCase conv_case(const ConvCfg& c, uint32_t seed) {
  KernelCase k;
  k.op = "Conv";
  k.attrs.set("group", c.group);
  k.attrs.set("strides", std::vector<int64_t>{c.sh, c.sw});
  k.attrs.set("dilations", std::vector<int64_t>{c.dh, c.dw});
  k.attrs.set("pads", std::vector<int64_t>{c.pt, c.pl, c.pb, c.pr});
  k.inputs.push_back(random_f32(Dims{c.n, c.c, c.h, c.w}, seed));
  k.inputs.push_back(random_f32(Dims{c.m, c.c / c.group, c.kh, c.kw}, seed + 1));
  if (c.bias) k.inputs.push_back(random_f32(Dims{c.m}, seed + 2));
  k.constant = {false, true, true};
  return k;
}

}  // namespace

BOOST_AUTO_TEST_CASE(conv_hand_computed_3x3) {
  // x = 1..9 on a 3x3 image, 2x2 kernel of ones, no padding: sums of 2x2 windows.
  KernelCase k{"Conv",
               {},
               13,
               ins(make_f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), make_f32({1, 1, 2, 2}, {1, 1, 1, 1}),
                   make_f32({1}, {0.5f})),
               {false, true, true}};
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  BOOST_CHECK((*r)[0].dims() == Dims({1, 1, 2, 2}));
  check_close((*r)[0], {12.5f, 16.5f, 24.5f, 28.5f});
}

BOOST_AUTO_TEST_CASE(conv_same_upper_and_lower_padding) {
  // 1x4 row, kernel [1 2] width 2, stride 1: SAME pads one column, at the end (UPPER) or start (LOWER).
  for (auto [mode, want] : {std::pair<std::string, std::vector<float>>{"SAME_UPPER", {5, 8, 11, 4}},
                            {"SAME_LOWER", {2, 5, 8, 11}}}) {
    KernelCase k{"Conv",
                 {},
                 13,
                 ins(make_f32({1, 1, 1, 4}, {1, 2, 3, 4}), make_f32({1, 1, 1, 2}, {1, 2})),
                 {false, true}};
    k.attrs.set("auto_pad", mode);
    auto r = run_kernel(k);
    BOOST_REQUIRE(r.ok());
    check_close((*r)[0], want);
  }
}

BOOST_AUTO_TEST_CASE(conv_valid_stride_larger_than_kernel_and_1d) {
  // 1-D: x = 0..6, kernel [1,-1], stride 3: windows at 0, 3 -> x0-x1, x3-x4 ; 7-2=5, 5/3=1 -> 2 outputs.
  KernelCase k{"Conv",
               {},
               13,
               ins(make_f32({1, 1, 7}, {0, 1, 2, 3, 4, 5, 6}), make_f32({1, 1, 2}, {1, -1})),
               {false, true}};
  k.attrs.set("strides", std::vector<int64_t>{3});
  k.attrs.set("auto_pad", std::string("VALID"));
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  BOOST_CHECK((*r)[0].dims() == Dims({1, 1, 2}));
  check_close((*r)[0], {-1, -1});
}

BOOST_AUTO_TEST_CASE(conv_1x1_image_and_fused_activation) {
  // 1x1 image, 2 input channels, 3 output channels, 3x3 kernel with pad 1: only the centre tap counts.
  std::vector<float> w(3 * 2 * 9, 0.f);
  const float centre[3][2] = {{1, 2}, {-1, -1}, {3, 0}};
  for (int m = 0; m < 3; ++m)
    for (int c = 0; c < 2; ++c) w[(m * 2 + c) * 9 + 4] = centre[m][c];
  KernelCase k{"Conv", {}, 13, ins(make_f32({1, 2, 1, 1}, {2, 5}), make_f32({3, 2, 3, 3}, w)), {false, true}};
  k.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  k.attrs.set("activation", std::string("Clip"));
  k.attrs.set("activation_min", 0.f);
  k.attrs.set("activation_max", 6.f);
  auto r = run_kernel(k);
  BOOST_REQUIRE(r.ok());
  check_close((*r)[0], {6.f, 0.f, 6.f});  // raw 12, -7, 6
  k.attrs.set("activation", std::string("Relu"));
  r = run_kernel(k);
  BOOST_REQUIRE(r.ok());
  check_close((*r)[0], {12.f, 0.f, 6.f});
}

BOOST_AUTO_TEST_CASE(conv_matches_naive_loop) {
  const std::vector<ConvCfg> cfgs = {
      {1, 3, 9, 11, 4, 3, 3, 1},
      {2, 4, 8, 8, 6, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, true},
      {1, 8, 7, 9, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, true},    // depthwise
      {2, 4, 7, 7, 8, 3, 3, 4, 2, 1, 1, 1, 1, 0, 0, 2, true},    // depthwise x2 multiplier, asym pads
      {1, 5, 6, 6, 7, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, true},    // pointwise
      {1, 3, 10, 10, 5, 3, 3, 1, 1, 1, 2, 3, 2, 0, 1, 3},        // dilations, asym pads
      {1, 2, 5, 5, 3, 5, 5, 1},                                  // kernel == input
      {1, 3, 9, 9, 2, 2, 2, 1, 3, 3},                            // stride > kernel
      {3, 6, 12, 10, 9, 3, 1, 3, 1, 2, 1, 1, 2, 0, 1, 0, true},  // groups, non-square kernel
      {1, 16, 20, 20, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true},
  };
  uint32_t seed = 10;
  for (const auto& c : cfgs) {
    KernelCase k = conv_case(c, seed += 3);
    Tensor want = naive_conv(c, k.inputs[0], k.inputs[1], c.bias ? &k.inputs[2] : nullptr);
    auto r1 = run_kernel(k, "", 1);
    auto r2 = run_kernel(k, "", 2);
    REQUIRE_OK(r1);
    REQUIRE_OK(r2);
    BOOST_CHECK_LT(max_abs_diff((*r1)[0], want), 1e-4);
    BOOST_CHECK_EQUAL(max_abs_diff((*r1)[0], (*r2)[0]), 0.0);
  }
}

BOOST_AUTO_TEST_CASE(conv_3d_matches_stacked_2d) {
  // A 3-D conv with kernel depth 1 over a depth-2 volume equals a 2-D conv per depth slice.
  Tensor x = random_f32({1, 2, 2, 5, 5}, 7), w = random_f32({3, 2, 1, 3, 3}, 8);
  KernelCase k3{"Conv", {}, 13, ins(copy(x), copy(w)), {false, true}};
  k3.attrs.set("pads", std::vector<int64_t>{0, 1, 1, 0, 1, 1});
  auto r3 = run_kernel(k3);
  REQUIRE_OK(r3);
  BOOST_CHECK((*r3)[0].dims() == Dims({1, 3, 2, 5, 5}));
  for (int d = 0; d < 2; ++d) {
    Tensor xs(DType::float32, Dims{1, 2, 5, 5});
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < 25; ++i) xs.as<float>()[c * 25 + i] = x.as<float>()[(c * 2 + d) * 25 + i];
    Tensor w2 = Tensor::from<float>(Dims{3, 2, 3, 3}, values(w));
    ConvCfg c{1, 2, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    Tensor want = naive_conv(c, xs, w2, nullptr);
    for (int m = 0; m < 3; ++m)
      for (int i = 0; i < 25; ++i)
        BOOST_CHECK_SMALL((*r3)[0].as<float>()[(m * 2 + d) * 25 + i] - want.as<float>()[m * 25 + i], 1e-5f);
  }
}

BOOST_AUTO_TEST_CASE(conv_errors_name_the_node) {
  KernelCase k{"Conv", {}, 13, ins(random_f32({1, 3, 4, 4}, 1), random_f32({2, 4, 3, 3}, 2)), {false, true}};
  auto r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.message().find("test node (Conv)") != std::string::npos);
  BOOST_CHECK(r.message().find("1x3x4x4") != std::string::npos);
  BOOST_CHECK(r.message().find("2x4x3x3") != std::string::npos);

  KernelCase big{
      "Conv", {}, 13, ins(random_f32({1, 1, 2, 2}, 1), random_f32({1, 1, 3, 3}, 2)), {false, true}};
  r = run_kernel(big);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.message().find("larger than the padded input") != std::string::npos);

  KernelCase bad{
      "Conv", {}, 13, ins(random_f32({1, 1, 4, 4}, 1), random_f32({1, 1, 3, 3}, 2)), {false, true}};
  bad.attrs.set("strides", std::vector<int64_t>{0, 1});
  r = run_kernel(bad);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.message().find("test node (Conv)") != std::string::npos);
  BOOST_CHECK(r.message().find("strides") != std::string::npos);

  bad.attrs = {};
  bad.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  r = run_kernel(bad);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.message().find("kernel_shape") != std::string::npos);

  bad.attrs = {};
  bad.attrs.set("activation", std::string("Elu"));  // no fused Elu
  r = run_kernel(bad);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.message().find("Elu") != std::string::npos);
  bad.attrs.set("activation", std::string("Gelu"));
  bad.attrs.set("activation_approximate", std::string("erf"));
  r = run_kernel(bad);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.message().find("approximate='erf'") != std::string::npos);
}

// --- ConvTranspose ---------------------------------------------------------------------------

// Naive scatter definition: y[m, i*s - p + k*d] += x[c, i] * w[c, m, k].
Tensor naive_deconv_2d(const Tensor& x, const Tensor& w, int64_t s, int64_t p, int64_t op, int64_t group) {
  const int64_t N = x.dims()[0], C = x.dims()[1], H = x.dims()[2], W = x.dims()[3];
  const int64_t Mg = w.dims()[1], KH = w.dims()[2], KW = w.dims()[3], M = Mg * group, Cg = C / group;
  const int64_t OH = s * (H - 1) + op + KH - 2 * p, OW = s * (W - 1) + op + KW - 2 * p;
  Tensor y(DType::float32, Dims{N, M, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t mg = 0; mg < Mg; ++mg)
        for (int64_t i = 0; i < H; ++i)
          for (int64_t j = 0; j < W; ++j)
            for (int64_t a = 0; a < KH; ++a)
              for (int64_t b = 0; b < KW; ++b) {
                const int64_t oi = i * s - p + a, oj = j * s - p + b;
                if (oi < 0 || oi >= OH || oj < 0 || oj >= OW) continue;
                const int64_t m = (c / Cg) * Mg + mg;
                y.as<float>()[((n * M + m) * OH + oi) * OW + oj] +=
                    x.as<float>()[((n * C + c) * H + i) * W + j] *
                    w.as<float>()[((c * Mg + mg) * KH + a) * KW + b];
              }
  return y;
}

BOOST_AUTO_TEST_CASE(conv_transpose_2x2_stride2_hand_computed) {
  // Each input pixel becomes a 2x2 block scaled by the kernel: x=[[1,2]], w=[[1,2],[3,4]], bias 1.
  KernelCase k{"ConvTranspose",
               {},
               13,
               ins(make_f32({1, 1, 1, 2}, {1, 2}), make_f32({1, 1, 2, 2}, {1, 2, 3, 4}), make_f32({1}, {1})),
               {false, true, true}};
  k.attrs.set("strides", std::vector<int64_t>{2, 2});
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  BOOST_CHECK((*r)[0].dims() == Dims({1, 1, 2, 4}));
  check_close((*r)[0], {2, 3, 3, 5, 4, 5, 7, 9});
}

BOOST_AUTO_TEST_CASE(conv_transpose_matches_naive) {
  struct Cfg {
    int64_t n, c, h, w, mg, k, s, p, op, group;
  };
  for (const Cfg& c : {Cfg{1, 4, 5, 6, 3, 2, 2, 0, 0, 1}, Cfg{2, 4, 4, 4, 2, 3, 2, 1, 1, 2},
                       Cfg{1, 3, 3, 5, 2, 3, 1, 1, 0, 1}, Cfg{1, 6, 4, 3, 1, 4, 3, 0, 2, 3}}) {
    Tensor x = random_f32({c.n, c.c, c.h, c.w}, 3), w = random_f32({c.c, c.mg, c.k, c.k}, 4);
    KernelCase k{"ConvTranspose", {}, 13, ins(copy(x), copy(w)), {false, true}};
    k.attrs.set("strides", std::vector<int64_t>{c.s, c.s});
    k.attrs.set("pads", std::vector<int64_t>{c.p, c.p, c.p, c.p});
    k.attrs.set("output_padding", std::vector<int64_t>{c.op, c.op});
    k.attrs.set("group", c.group);
    auto r1 = run_kernel(k, "", 1), r2 = run_kernel(k, "", 2);
    REQUIRE_OK(r1);
    REQUIRE_OK(r2);
    BOOST_CHECK_LT(max_abs_diff((*r1)[0], naive_deconv_2d(x, w, c.s, c.p, c.op, c.group)), 1e-4);
    BOOST_CHECK_EQUAL(max_abs_diff((*r1)[0], (*r2)[0]), 0.0);
  }
}

BOOST_AUTO_TEST_CASE(conv_transpose_output_shape) {
  // 1-D: x=[1,2,3], kernel 3 of ones, stride 2 -> natural size 7; output_shape 6 trims one
  // column of padding. Spec: NOTSET splits total padding 1 as begin 1 - 0 = 1? begin = total - total/2 = 1.
  KernelCase k{"ConvTranspose",
               {},
               13,
               ins(make_f32({1, 1, 3}, {1, 2, 3}), make_f32({1, 1, 3}, {1, 1, 1})),
               {false, true}};
  k.attrs.set("strides", std::vector<int64_t>{2});
  auto full = run_kernel(k);
  BOOST_REQUIRE(full.ok());
  check_close((*full)[0], {1, 1, 3, 2, 5, 3, 3});
  k.attrs.set("output_shape", std::vector<int64_t>{6});
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {1, 3, 2, 5, 3, 3});
  // Beyond what the input reaches: the extra cells hold the bias alone (none here).
  k.attrs.set("output_shape", std::vector<int64_t>{9});
  r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {1, 1, 3, 2, 5, 3, 3, 0, 0});
  k.attrs.set("output_shape", std::vector<int64_t>{-1});
  BOOST_CHECK(run_kernel(k).message().find("test node (ConvTranspose)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(conv_transpose_wrong_channels) {
  KernelCase k{
      "ConvTranspose", {}, 13, ins(random_f32({1, 3, 2, 2}, 1), random_f32({2, 1, 2, 2}, 2)), {false, true}};
  auto r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.message().find("test node (ConvTranspose)") != std::string::npos);
  BOOST_CHECK(r.message().find("1x3x2x2") != std::string::npos);
}
