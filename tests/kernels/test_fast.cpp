// Every fast kernel against the reference one on random shapes. The fast kernels read and write
// NHWC (the layout pass's choice): inputs are transposed to NHWC for them and their outputs
// back to NCHW before the comparison. Meson runs this once with the CPU's best instruction set
// and once capped to AVX2 (WEAVE_ISA=avx2), so on AVX-512 machines both tables are checked.
// On a CPU without a fast path every case is skipped with a message.
#define BOOST_TEST_MODULE kernel_fast
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "core/kernels/fast/fast_ops.h"
#include "tests/kernels/fast_compare.h"
#include "tests/kernels/test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

// [N,C,H,W] <-> [N,H,W,C]
Tensor to_nhwc(const Tensor& t) {
  const Dims& d = t.dims();
  Tensor o(DType::float32, Dims{d[0], d[2], d[3], d[1]});
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t h = 0; h < d[2]; ++h)
        for (int64_t w = 0; w < d[3]; ++w)
          o.as<float>()[((n * d[2] + h) * d[3] + w) * d[1] + c] =
              t.as<float>()[((n * d[1] + c) * d[2] + h) * d[3] + w];
  return o;
}
Tensor to_nchw(const Tensor& t) {
  const Dims& d = t.dims();
  Tensor o(DType::float32, Dims{d[0], d[3], d[1], d[2]});
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t h = 0; h < d[1]; ++h)
      for (int64_t w = 0; w < d[2]; ++w)
        for (int64_t c = 0; c < d[3]; ++c)
          o.as<float>()[((n * d[3] + c) * d[1] + h) * d[2] + w] =
              t.as<float>()[((n * d[1] + h) * d[2] + w) * d[3] + c];
  return o;
}

// Runs `c` with the reference kernel (NCHW) and the fast kernel (NHWC, the data inputs listed
// in `nhwc_inputs` transposed) and compares.
void compare(const KernelCase& c, const std::vector<std::size_t>& nhwc_inputs, double tol,
             const std::string& what, int threads = 1) {
  auto ref = run_kernel(c, "reference", threads);
  BOOST_TEST_REQUIRE(ref.ok(), what << ": reference: " << (ref.ok() ? "" : ref.message()));
  KernelCase f;
  f.op = c.op;
  f.attrs = c.attrs;
  f.attrs.set("weave_layout", std::string("NHWC"));
  f.constant = c.constant;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    const bool nhwc = std::find(nhwc_inputs.begin(), nhwc_inputs.end(), k) != nhwc_inputs.end();
    if (c.inputs[k].dtype() == DType::undefined)
      f.inputs.emplace_back();
    else
      f.inputs.push_back(nhwc ? to_nhwc(c.inputs[k]) : copy(c.inputs[k]));
  }
  auto fast = run_kernel(f, "fast", threads);
  BOOST_TEST_REQUIRE(fast.ok(), what << ": fast: " << (fast.ok() ? "" : fast.message()));
  check_close(to_nchw((*fast)[0]), (*ref)[0], tol, what);
}

const char* kActs[] = {"",        "Relu",        "Clip", "LeakyRelu", "HardSwish",
                       "Sigmoid", "HardSigmoid", "Tanh", "Swish",     "Gelu"};
constexpr unsigned kNumActs = sizeof(kActs) / sizeof(kActs[0]);

// The fast path's output 0 is the reference's exactly (data movement: gathers, transposes).
void expect_exact(const KernelCase& kc, int threads, const std::string& what) {
  auto ref = run_kernel(kc, "reference");
  BOOST_TEST_REQUIRE(ref.ok(), what << ": reference: " << (ref.ok() ? "" : ref.message()));
  auto fast = run_kernel(kc, "fast", threads);
  BOOST_TEST_REQUIRE(fast.ok(), what << ": fast: " << (fast.ok() ? "" : fast.message()));
  BOOST_TEST_REQUIRE((*fast)[0].dims() == (*ref)[0].dims(), what);
  BOOST_TEST(max_abs_diff((*fast)[0], (*ref)[0]) == 0.0, what);
}

Attributes conv_attrs(Rng& r, int64_t k, int64_t s, int64_t d, int64_t group, bool epilogue) {
  Attributes a;
  const int64_t p = r.range(0, k / 2 + 1);
  a.set("kernel_shape", std::vector<int64_t>{k, k});
  a.set("strides", std::vector<int64_t>{s, s});
  a.set("dilations", std::vector<int64_t>{d, d});
  a.set("pads", std::vector<int64_t>{p, r.range(0, p), r.range(0, p), p});
  a.set("group", group);
  if (epilogue) {
    const std::string act = kActs[r.g() % kNumActs];
    if (!act.empty()) a.set("activation", act);
    if (act == "Clip") a.set("activation_min", -0.5f), a.set("activation_max", 1.5f);
    if (act == "LeakyRelu" || act == "HardSigmoid" || act == "Swish") a.set("activation_alpha", 0.3f);
    if (act == "Gelu" && r.g() % 2 == 0) a.set("activation_approximate", std::string("tanh"));
    if (r.g() % 3 == 0) a.set("activation_post_mul", 0.75f), a.set("activation_post_add", -0.25f);
  }
  return a;
}

// One random convolution of the given kind; returns false when the geometry is empty.
void conv_case(Rng& r, int kind, int i) {
  // kind 0: GEMM (any window), 1: 3x3 stride 1 (Winograd-sized channels), 2: depthwise, 3: grouped,
  // 4: grouped with narrow groups, 5: depthwise of many channels on small maps, 6: depthwise
  // dilated down the rows only (dilations {2, 1}: the sliding window across, rows 2 apart)
  int64_t c = r.pick({1, 3, 8, 16, 17, 24, 32, 48, 64});
  int64_t m = r.pick({1, 5, 8, 16, 24, 33, 48, 64});
  int64_t k = r.pick({1, 3, 5, 7}), s = r.pick({1, 2}), d = r.pick({1, 1, 2}), group = 1;
  if (kind == 1) c = r.pick({16, 24, 40, 64}), m = r.pick({16, 24, 40, 72}), k = 3, s = 1, d = 1;
  if (kind == 2) c = r.pick({8, 13, 16, 32, 40, 96}), m = c, group = c, k = r.pick({3, 5, 7}), d = 1;
  if (kind == 3) group = r.pick({2, 4}), c = group * r.pick({2, 8}), m = group * r.pick({3, 8});
  if (kind == 4) {
    // Narrow groups (as many outputs as inputs, 2 to 8 per group): the direct grouped kernel,
    // with channel counts that end in a partial vector.
    const int64_t gw = r.pick({2, 4, 8});
    group = r.pick({2, 3, 5, 8, 16, 32});
    c = m = gw * group;
  }
  // Weights beyond 16 KB: each row is done in chunks of channels (impl_spatial.h), the last
  // one a partial vector when C is not a multiple of it.
  if (kind == 5) c = r.pick({300, 465, 600, 1160}), m = c, group = c, k = r.pick({3, 5, 7}), d = 1;
  if (kind == 6) c = r.pick({16, 32, 72}), m = c, group = c, k = r.pick({3, 5, 7}), s = 1, d = 2;
  // 7: 3x3 depthwise at stride 2 whose channels end in one whole vector past pairs of them, or
  // in a partial one: the sliding blocks of 8, 4 and 2 pixels at stride 2 (impl_spatial.h)
  if (kind == 7) c = r.pick({8, 16, 24, 40, 48, 80, 13, 44}), m = c, group = c, k = 3, s = 2, d = 1;
  // 8: narrow groups in a 3-wide window, undilated, stride 1 or 2: the blocks of 8, 4, 2 and 1
  // output pixels that spread each input pixel once for all the outputs that read it
  // (impl_spatial.h: a broadcast, an in-lane shuffle or a permutation by group width), on rows
  // long enough for several blocks and their tails
  if (kind == 8) {
    const int64_t gw = r.pick({2, 4, 8});
    group = r.pick({2, 3, 6, 16});
    c = m = gw * group, k = 3, d = 1;
  }
  // 9: a 1x1 convolution of 64 or 96 outputs with GELU and a residual in its epilogue: whole
  // tiles through the interleaved epilogue (impl_conv_gemm.h), the residual added before GELU
  if (kind == 9) c = r.pick({8, 16, 24}), m = r.pick({64, 96}), k = 1, d = 1, group = 1;
  const int64_t eff = (k - 1) * d + 1;
  const int64_t n = r.pick({1, 1, 2}), h = r.range(eff + 1, (kind == 5 ? 9 : 23) + eff),
                w = r.range(eff + 1, (kind == 5   ? 11
                                      : kind == 8 ? 45
                                                  : 29) +
                                         eff);
  const bool epilogue = r.g() % 2 == 0, bias = r.g() % 4 != 0;
  KernelCase kc;
  kc.op = "Conv";
  kc.attrs = conv_attrs(r, k, s, d, group, epilogue && kind != 9);
  if (kind == 9) {
    kc.attrs.set("activation", std::string("Gelu"));
    if (i % 2 == 1) kc.attrs.set("activation_approximate", std::string("tanh"));
    if (i % 3 == 2) kc.attrs.set("activation_post_mul", 0.75f), kc.attrs.set("activation_post_add", -0.25f);
  }
  if (kind == 6) kc.attrs.set("dilations", std::vector<int64_t>{2, 1});
  const uint32_t seed = static_cast<uint32_t>(1000 * kind + i);
  kc.inputs.push_back(random_f32(Dims{n, c, h, w}, seed));
  kc.inputs.push_back(random_f32(Dims{m, c / group, k, k}, seed + 1));
  kc.inputs.push_back(bias ? random_f32(Dims{m}, seed + 2) : Tensor());
  kc.constant = {false, true, true, false};
  // The output dims decide the residual's: run the reference once without it.
  auto probe = run_kernel(kc, "reference");
  BOOST_TEST_REQUIRE(probe.ok(), (probe.ok() ? "" : probe.message()));
  std::vector<std::size_t> nhwc = {0};
  if ((epilogue && r.g() % 2 == 0) || kind == 9) {
    kc.inputs.push_back(random_f32((*probe)[0].dims(), seed + 3));
    nhwc.push_back(3);
  }
  const std::string what =
      "conv kind " + std::to_string(kind) + " case " + std::to_string(i) + ": x " +
      shape_str(kc.inputs[0].dims().span()) + " w " + shape_str(kc.inputs[1].dims().span()) + " s" +
      std::to_string(s) + " d" + std::to_string(d) + " g" + std::to_string(group) +
      (nhwc.size() > 1 ? " +residual" : "") + " act '" + kc.attrs.get_string("activation") + "'";
  // Sums of up to ~2400 float products in another order: a few 1e-5 relative apart, growing
  // with the depth summed; a wrong tap or channel is off by O(1). Winograd's transforms add a
  // few 1e-4 relative (F(4x4, 3x3) in float32), and any 3x3 stride-1 convolution may take it.
  const bool winograd = kind == 1 || (k == 3 && s == 1 && d == 1 && group == 1);
  const double depth = static_cast<double>(c / group * k * k);
  compare(kc, nhwc, winograd ? 5e-4 : 3e-5 * std::max(1.0, depth / 1000.0), what, 1 + i % 2);
}

// `count` random convolutions of one kind, from the same seed each time.
void conv_cases(int kind, int count) {
  if (!have_fast()) return;
  Rng r;
  for (int i = 0; i < count; ++i) conv_case(r, kind, i);
}

}  // namespace

BOOST_AUTO_TEST_CASE(conv_gemm_matches_reference) {
  conv_cases(0, 60);
}

BOOST_AUTO_TEST_CASE(conv_winograd_matches_reference) {
  conv_cases(1, 30);
}

// Maps of every pixel count from 1 to 64 (and Winograd tile counts from 1 to 36): the pixels go in
// blocks of nearly equal rows (impl_conv_gemm.h, Blocks), so every block height of the
// micro-kernel and every mix of longer and shorter blocks runs here, through the 1x1 (direct rows), the
// windowed (address table) and the Winograd GEMMs, each output checked.
BOOST_AUTO_TEST_CASE(conv_every_block_height_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  for (int64_t p = 1; p <= 64; ++p) {
    for (int path = 0; path < 3; ++path) {
      if (path == 2 && p > 36) continue;
      // 0: 1x1 over 1 x p; 1: 3x3 dilated (never Winograd) over 2 x p/2 or 1 x p; 2: Winograd
      // 3x3 over 4p x 4 (p tiles).
      const int64_t h = path == 2 ? 4 * p : path == 1 && p % 2 == 0 ? 2 : 1;
      const int64_t w = path == 2 ? 4 : p / h;
      const int64_t k = path == 0 ? 1 : 3, d = path == 1 ? 2 : 1, pad = path == 0 ? 0 : d;
      const int64_t c = r.pick({16, 24}), m = r.pick({16, 40});
      KernelCase kc;
      kc.op = "Conv";
      kc.attrs.set("kernel_shape", std::vector<int64_t>{k, k});
      kc.attrs.set("dilations", std::vector<int64_t>{d, d});
      kc.attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
      kc.attrs.set("activation", std::string("Relu"));
      const uint32_t seed = static_cast<uint32_t>(7000 + 3 * p + path);
      kc.inputs.push_back(random_f32(Dims{1, c, h, w}, seed));
      kc.inputs.push_back(random_f32(Dims{m, c, k, k}, seed + 1));
      kc.inputs.push_back(random_f32(Dims{m}, seed + 2));
      kc.constant = {false, true, true};
      compare(kc, {0}, path == 2 ? 5e-4 : 3e-5,
              "block height case " + std::to_string(p) + " path " + std::to_string(path) + ": x " +
                  shape_str(kc.inputs[0].dims().span()) + " m " + std::to_string(m),
              1 + static_cast<int>(p % 2));
    }
  }
}

// Maps of height 0 (an input of no rows, padded in width): the output has no pixel, and the
// GEMM must not build a block for one (a block's spare rows repeat its last pixel).
BOOST_AUTO_TEST_CASE(conv_over_empty_maps_matches_reference) {
  if (!have_fast()) return;
  for (int64_t k : {1, 3}) {
    KernelCase kc;
    kc.op = "Conv";
    kc.attrs.set("kernel_shape", std::vector<int64_t>{k, k});
    kc.attrs.set("auto_pad", std::string("SAME_UPPER"));
    kc.inputs.push_back(random_f32(Dims{1, 8, 0, 7}, 31));
    kc.inputs.push_back(random_f32(Dims{16, 8, k, k}, 32));
    kc.inputs.push_back(random_f32(Dims{16}, 33));
    kc.constant = {false, true, true};
    compare(kc, {0}, 0, "empty map, " + std::to_string(k) + "x" + std::to_string(k), 1);
  }
}

// Dilated windows over maps not much wider than they are (DeepLab's rate-12 3x3 over 20x20), and
// padding wider than the window: the GEMM skips the taps of a block whose every row reads the
// padding (impl_conv_gemm.h, skip_padding_taps), down to none for pixels wholly in the padding.
// Few channels take the window-row mode (dilated down the rows only), the others the taps.
BOOST_AUTO_TEST_CASE(conv_dilated_over_small_maps_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  for (int i = 0; i < 40; ++i) {
    // Every fifth case in 2 groups of 16 (wider than the narrow-group kernel's 8: the GEMM,
    // each group's rows offset into x while the padding rows read the shared zeros).
    const int64_t group = i % 5 == 0 ? 2 : 1;
    const int64_t c = group == 2 ? 32 : r.pick({3, 8, 16, 40}), m = group == 2 ? 32 : r.pick({5, 16, 33});
    const int64_t k = r.pick({3, 5}), dh = r.pick({3, 6, 12}), dw = i % 4 == 0 ? 1 : r.pick({2, 6, 12});
    const int64_t h = r.range(2, 25), w = r.range(2, 25);
    // "Same" padding, or up to 3 more: rows and columns of outputs that see only the padding.
    const int64_t extra = i % 3 == 0 ? r.range(0, 4) : 0;
    const int64_t ph = dh * (k / 2) + extra, pw = dw * (k / 2) + extra;
    KernelCase kc;
    kc.op = "Conv";
    kc.attrs.set("kernel_shape", std::vector<int64_t>{k, k});
    kc.attrs.set("dilations", std::vector<int64_t>{dh, dw});
    kc.attrs.set("pads", std::vector<int64_t>{ph, pw, ph, pw});
    kc.attrs.set("activation", std::string(i % 2 == 0 ? "Relu" : "Sigmoid"));
    kc.attrs.set("group", group);
    const uint32_t seed = static_cast<uint32_t>(9000 + 3 * i);
    kc.inputs.push_back(random_f32(Dims{r.pick({1, 2}), c, h, w}, seed));
    kc.inputs.push_back(random_f32(Dims{m, c / group, k, k}, seed + 1));
    kc.inputs.push_back(random_f32(Dims{m}, seed + 2));
    kc.constant = {false, true, true};
    compare(kc, {0}, 3e-5 * std::max(1.0, static_cast<double>(c * k * k) / 1000.0),
            "dilated case " + std::to_string(i) + " g" + std::to_string(group) + ": x " +
                shape_str(kc.inputs[0].dims().span()) + " w " + shape_str(kc.inputs[1].dims().span()) + " d" +
                std::to_string(dh) + "x" + std::to_string(dw) + " pads " + std::to_string(ph) + "," +
                std::to_string(pw),
            1 + i % 2);
  }
}

// Gather along the last axis by constant indices: the fast kernel moves each output vector from
// one or two windows of the row by a lane permutation, or lane by lane where no two windows
// hold it (gather_fast.cpp). Against the reference, exactly: channel shuffles of 2 to 4 groups,
// random permutations, reversals, selections with repeats and with negative and out-of-range
// indices (wrapped once, then clamped, as the reference does), rows of 1 to 300, ranks 1 to 4,
// int64 and int32 indices, 1 to 3 threads.
BOOST_AUTO_TEST_CASE(gather_last_axis_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  for (int i = 0; i < 80; ++i) {
    const int64_t n = r.pick({1, 3, 7, 8, 16, 17, 58, 116, 232, 300});
    std::vector<int64_t> idx;
    switch (i % 4) {
      case 0: {  // a channel shuffle of g groups
        int64_t g = r.pick({2, 3, 4});
        if (n % g != 0) g = 1;
        for (int64_t j = 0; j < n; ++j) idx.push_back((j % g) * (n / g) + j / g);
        break;
      }
      case 1:  // a random permutation
        for (int64_t j = 0; j < n; ++j) idx.push_back(j);
        std::shuffle(idx.begin(), idx.end(), r.g);
        break;
      case 2:  // reversed
        for (int64_t j = 0; j < n; ++j) idx.push_back(n - 1 - j);
        break;
      default:  // a selection: repeats, negative and out-of-range indices
        for (int64_t j = 0, k = r.range(1, 2 * n + 5); j < k; ++j) idx.push_back(r.range(-n - 3, n + 2));
        break;
    }
    const int rank = static_cast<int>(r.range(1, 4));
    std::vector<int64_t> dims;
    for (int d = 0; d + 1 < rank; ++d) dims.push_back(r.range(1, 5));
    dims.push_back(n);
    const auto k = static_cast<int64_t>(idx.size());
    KernelCase kc;
    kc.op = "Gather";
    kc.attrs.set("axis", int64_t{i % 2 == 0 ? -1 : rank - 1});
    kc.inputs.push_back(random_f32(Dims(std::span<const int64_t>(dims)), static_cast<uint32_t>(500 + i)));
    if (i % 3 == 0) {
      std::vector<int32_t> i32(idx.begin(), idx.end());
      kc.inputs.push_back(Tensor::from<int32_t>(Dims{k}, i32));
    } else {
      kc.inputs.push_back(make_i64(Dims{k}, idx));
    }
    kc.constant = {false, true};
    const std::string what = "gather case " + std::to_string(i) + ": data " + shape_str(dims) + ", " +
                             std::to_string(k) + " indices";
    expect_exact(kc, 1 + i % 3, what);
  }
  // 4-byte integers move through the same loads, permutations and stores, bit for bit.
  {
    std::vector<int32_t> data(5 * 40);
    for (std::size_t j = 0; j < data.size(); ++j) data[j] = static_cast<int32_t>(j * 2654435761u);
    std::vector<int64_t> idx;
    for (int64_t j = 0; j < 40; ++j) idx.push_back((j % 2) * 20 + j / 2);
    KernelCase kc;
    kc.op = "Gather";
    kc.attrs.set("axis", int64_t{1});
    kc.inputs.push_back(Tensor::from<int32_t>(Dims{5, 40}, data));
    kc.inputs.push_back(make_i64(Dims{40}, idx));
    kc.constant = {false, true};
    auto fast = run_kernel(kc, "fast", 2);
    BOOST_TEST_REQUIRE(fast.ok(), (fast.ok() ? "" : fast.message()));
    bool same = true;
    for (int64_t row = 0; row < 5; ++row)
      for (int64_t j = 0; j < 40; ++j)
        same = same &&
               (*fast)[0].as<int32_t>()[row * 40 + j] == data[static_cast<std::size_t>(row * 40 + idx[j])];
    BOOST_TEST(same);
  }
  // The layout pass's shuffle names the data dims it was planned for: others are an error.
  KernelCase kc;
  kc.op = "Gather";
  kc.attrs.set("axis", int64_t{3});
  kc.attrs.set("weave_expect_dims", std::vector<int64_t>{1, 1, 2, 3});
  kc.inputs.push_back(random_f32(Dims{1, 2, 1, 3}, 7));
  kc.inputs.push_back(make_i64(Dims{3}, {2, 0, 1}));
  kc.constant = {false, true};
  auto bad = run_kernel(kc, "fast");
  BOOST_TEST((!bad.ok() && bad.message().find("channel shuffle") != std::string::npos));
}

// Transpose with the fast path's tiles (8 x 8 blocks in registers, the edges element by
// element) against the reference, exactly: NHWC <-> NCHW reorders and other batches of 2-D
// transposes of every size around the block and the 32-element tile, other permutations, 1 to
// 3 threads.
BOOST_AUTO_TEST_CASE(transpose_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  // The input's contiguous axis lands second from last, third from last (a patch rearrangement)
  // or last (a strided copy, not tiles).
  const std::vector<std::vector<int64_t>> perms = {
      {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 0}, {0, 2, 1}, {2, 0, 1, 3}, {2, 0, 1}, {0, 1, 3, 5, 2, 4}};
  for (int i = 0; i < 84; ++i) {
    const std::vector<int64_t>& perm = perms[static_cast<std::size_t>(i) % perms.size()];
    std::vector<int64_t> dims;
    for (std::size_t k = 0; k < perm.size(); ++k)
      dims.push_back(perm.size() > 4 ? r.pick({1, 2, 3, 7, 9, 16})
                                     : r.pick({1, 2, 3, 7, 8, 9, 16, 31, 33, 40, 85}));
    KernelCase kc;
    kc.op = "Transpose";
    kc.attrs.set("perm", perm);
    kc.inputs.push_back(random_f32(Dims(std::span<const int64_t>(dims)), static_cast<uint32_t>(700 + i)));
    const std::string what =
        "transpose case " + std::to_string(i) + ": " + shape_str(dims) + " perm " + shape_str(perm);
    expect_exact(kc, 1 + i % 3, what);
  }
}

// NCHW -> NHWC of 1 to 4 planes (an image's input), which the fast path interleaves a vector of
// pixels at a time: pixel counts around the vector widths and their tails, one image (the
// planes' own loop, split over threads in chunks of 4096 pixels from 96x97 on) and two (the tiles
// of a batch), 1 to 3 threads; exactly the reference.
BOOST_AUTO_TEST_CASE(transpose_interleaves_few_planes_as_reference) {
  if (!have_fast()) return;
  int i = 0;
  for (int64_t n : {1, 2})
    for (int64_t c : {1, 2, 3, 4})
      for (const auto& hw : std::vector<std::pair<int64_t, int64_t>>{
               {1, 1}, {3, 5}, {4, 4}, {1, 17}, {8, 6}, {7, 37}, {64, 65}, {96, 97}}) {
        KernelCase kc;
        kc.op = "Transpose";
        kc.attrs.set("perm", std::vector<int64_t>{0, 2, 3, 1});
        kc.inputs.push_back(random_f32(Dims{n, c, hw.first, hw.second}, static_cast<uint32_t>(900 + i)));
        const std::string what = "interleave case " + std::to_string(i) + ": " +
                                 shape_str(std::vector<int64_t>{n, c, hw.first, hw.second});
        expect_exact(kc, 1 + i % 3, what);
        ++i;
      }
}

// Images big enough for several blocks of tiles per thread, so that each thread takes whole
// blocks through the three phases in its own scratch lane (impl_winograd.h), at 2 and 3 threads.
BOOST_AUTO_TEST_CASE(conv_winograd_lanes_match_reference) {
  if (!have_fast()) return;
  Rng r;
  for (int i = 0; i < 8; ++i) {
    const int64_t c = r.pick({16, 64}), m = r.pick({24, 72}), n = r.pick({1, 2});
    const int64_t h = r.range(40, 90), w = r.range(40, 90);
    KernelCase kc;
    kc.op = "Conv";
    kc.attrs = conv_attrs(r, 3, 1, 1, 1, true);
    const uint32_t seed = static_cast<uint32_t>(5000 + i);
    kc.inputs.push_back(random_f32(Dims{n, c, h, w}, seed));
    kc.inputs.push_back(random_f32(Dims{m, c, 3, 3}, seed + 1));
    kc.inputs.push_back(random_f32(Dims{m}, seed + 2));
    kc.constant = {false, true, true};
    compare(kc, {0}, 5e-4,
            "winograd lanes case " + std::to_string(i) + ": x " + shape_str(kc.inputs[0].dims().span()) +
                " m " + std::to_string(m),
            2 + i % 2);
  }
}

BOOST_AUTO_TEST_CASE(conv_depthwise_matches_reference) {
  conv_cases(2, 40);
}

BOOST_AUTO_TEST_CASE(conv_depthwise_stride_2_matches_reference) {
  conv_cases(7, 24);
}

BOOST_AUTO_TEST_CASE(conv_depthwise_of_many_channels_matches_reference) {
  conv_cases(5, 16);
}

BOOST_AUTO_TEST_CASE(conv_depthwise_dilated_down_the_rows_matches_reference) {
  conv_cases(6, 12);
}

BOOST_AUTO_TEST_CASE(conv_grouped_matches_reference) {
  conv_cases(3, 20);
}

BOOST_AUTO_TEST_CASE(conv_narrow_groups_match_reference) {
  conv_cases(4, 40);
}

BOOST_AUTO_TEST_CASE(conv_narrow_groups_3_wide_match_reference) {
  conv_cases(8, 24);
}

// Narrow groups in a 3-wide window over every interior width from 1 to 18 output columns, for
// each group width (2, 4, 8), stride (1, 2) and three groups (a partial last vector for groups
// narrower than the vector): each row's interior runs the 8-, 4-, 2- and 1-pixel blocks in every
// mix, the border columns the edge path (impl_spatial.h, grouped_row), each output checked.
BOOST_AUTO_TEST_CASE(conv_narrow_groups_every_row_tail_matches_reference) {
  if (!have_fast()) return;
  for (const int64_t gw : {2, 4, 8})
    for (const int64_t s : {1, 2})
      for (int64_t interior = 1; interior <= 18; ++interior) {
        // Padding 1: output columns 1 .. interior are the ones whose window is inside the input.
        const int64_t w = s == 1 ? interior + 2 : 2 * interior + 2, c = 3 * gw;
        KernelCase kc;
        kc.op = "Conv";
        kc.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
        kc.attrs.set("strides", std::vector<int64_t>{s, s});
        kc.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
        kc.attrs.set("group", int64_t{3});
        kc.attrs.set("activation", std::string("Relu"));
        const uint32_t seed = static_cast<uint32_t>(9000 + 100 * gw + 50 * s + interior);
        kc.inputs.push_back(random_f32(Dims{1, c, 3, w}, seed));
        kc.inputs.push_back(random_f32(Dims{c, gw, 3, 3}, seed + 1));
        kc.inputs.push_back(random_f32(Dims{c}, seed + 2));
        kc.constant = {false, true, true};
        compare(kc, {0}, 3e-5,
                "narrow groups of " + std::to_string(gw) + " stride " + std::to_string(s) + ": x " +
                    shape_str(kc.inputs[0].dims().span()),
                1);
      }
}

BOOST_AUTO_TEST_CASE(conv_gelu_with_residual_whole_tiles_match_reference) {
  conv_cases(9, 12);
}

BOOST_AUTO_TEST_CASE(pools_match_reference) {
  if (!have_fast()) return;
  Rng r;
  for (int i = 0; i < 100; ++i) {
    KernelCase kc;
    const int kind = i % 4;
    kc.op = kind == 0   ? "MaxPool"
            : kind == 1 ? "AveragePool"
            : kind == 2 ? "GlobalAveragePool"
                        : "GlobalMaxPool";
    const int64_t c = r.pick({1, 3, 8, 13, 16, 40, 64, 70, 100}), k = r.pick({2, 3, 5});
    const bool dilate = kind == 0 && r.g() % 3 == 0;
    const int64_t eff = dilate ? 2 * k - 1 : k;
    const int64_t h = r.range(eff, 19), w = r.range(eff, 21), s = r.pick({1, 2, 3});
    if (kind < 2) {
      const int64_t p = r.range(0, k / 2);
      kc.attrs.set("kernel_shape", std::vector<int64_t>{k, k});
      kc.attrs.set("strides", std::vector<int64_t>{s, s});
      kc.attrs.set("pads", std::vector<int64_t>{p, 0, r.range(0, p), p});
      kc.attrs.set("ceil_mode", static_cast<int64_t>(r.g() % 2));
      if (kind == 1) kc.attrs.set("count_include_pad", static_cast<int64_t>(r.g() % 2));
      if (dilate) kc.attrs.set("dilations", std::vector<int64_t>{2, 2});
    }
    kc.inputs.push_back(random_f32(Dims{r.pick({1, 2}), c, h, w}, 7000 + i));
    compare(kc, {0}, 1e-6,
            kc.op + " case " + std::to_string(i) + " x " + shape_str(kc.inputs[0].dims().span()), 1 + i % 2);
  }
}

BOOST_AUTO_TEST_CASE(batch_norm_nhwc_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  for (int i = 0; i < 30; ++i) {
    // Channel counts below, at and past a vector, with tails; 1 and 2 threads.
    const int64_t c = r.pick({1, 3, 8, 15, 16, 17, 40, 64, 100, 256});
    KernelCase kc;
    kc.op = "BatchNormalization";
    kc.attrs.set("epsilon", 1e-3f);
    const auto seed = static_cast<uint32_t>(7500 + 10 * i);
    kc.inputs.push_back(random_f32(Dims{r.pick({1, 2}), c, r.range(1, 9), r.range(1, 11)}, seed));
    for (uint32_t k = 1; k <= 4; ++k) kc.inputs.push_back(random_f32(Dims{c}, seed + k));
    float* var = kc.inputs[4].as<float>();
    for (int64_t j = 0; j < c; ++j) var[j] = std::fabs(var[j]);  // a variance is not negative
    kc.constant = {false, true, true, true, true};
    compare(kc, {0}, 1e-6,
            "BatchNormalization case " + std::to_string(i) + " x " + shape_str(kc.inputs[0].dims().span()),
            1 + i % 2);
  }
}

BOOST_AUTO_TEST_CASE(matmul_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  for (int i = 0; i < 40; ++i) {
    const int64_t M = r.pick({1, 3, 7, 40}), K = r.pick({1, 5, 16, 120}), N = r.pick({1, 8, 17, 120, 300});
    const bool const_b = i % 2 == 0;
    KernelCase kc;
    kc.op = "MatMul";
    Dims ad{M, K}, bd{K, N};
    if (i % 4 == 1) ad = Dims{2, 3, M, K}, bd = Dims{2, 3, K, N};  // batched
    if (i % 4 == 3) ad = Dims{4, M, K}, bd = Dims{1, K, N};        // B broadcast over the batch
    if (i % 8 == 6) ad = Dims{K};                                  // a vector
    if (i % 8 == 2) ad = Dims{3, M, K};                            // batch of A, one constant B
    kc.inputs.push_back(random_f32(ad, 9000 + i));
    kc.inputs.push_back(random_f32(bd, 9100 + i));
    kc.constant = {false, const_b};
    compare_plain(kc, 3e-5,
                  "MatMul case " + std::to_string(i) + " " + shape_str(ad.span()) + " x " +
                      shape_str(bd.span()) + (const_b ? " (constant B)" : ""),
                  1 + i % 2);
  }
}

// Many small products with B computed at run time (attention's scores x V): the batches are
// split over the threads, each packing B into its own slice of the workspace; a B broadcast
// over the batch is packed once per thread, and one broadcast over some batch axes only is
// packed again where it changes inside a thread's share. Batch counts that split unevenly
// (25, 31 on 2 and 3 threads), and some (2, 3) too few for a second thread.
BOOST_AUTO_TEST_CASE(matmul_of_many_small_batches_matches_reference) {
  if (!have_fast()) return;
  int i = 0;
  struct Shapes {
    Dims a, b;
  };
  std::vector<Shapes> cases;
  for (int64_t nb : {2, 3, 24, 25, 31}) {
    cases.push_back({Dims{nb, 49, 49}, Dims{nb, 49, 32}});
    cases.push_back({Dims{nb, 49, 49}, Dims{1, 49, 32}});
  }
  cases.push_back({Dims{5, 7, 49, 49}, Dims{5, 1, 49, 32}});  // B per outer batch only
  for (const Shapes& c : cases) {
    for (int threads : {1, 2, 3}) {
      KernelCase kc;
      kc.op = "MatMul";
      kc.inputs.push_back(random_f32(c.a, 9150 + i));
      kc.inputs.push_back(random_f32(c.b, 9170 + i));
      kc.constant = {false, false};
      compare_plain(kc, 3e-5,
                    "MatMul " + shape_str(c.a.span()) + " x " + shape_str(c.b.span()) + ", " +
                        std::to_string(threads) + " threads",
                    threads);
      ++i;
    }
  }
}

BOOST_AUTO_TEST_CASE(matmul_with_fused_bias_and_activation_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  for (int i = 0; i < 30; ++i) {
    const int64_t M = r.pick({1, 3, 7, 40}), K = r.pick({1, 5, 16, 120}), N = r.pick({1, 8, 17, 120, 300});
    KernelCase kc;
    kc.op = "MatMul";
    Dims ad{M, K};
    if (i % 3 == 1) ad = Dims{2, M, K};  // a batch of rows against one weight matrix
    if (i % 6 == 5) ad = Dims{K};        // a vector
    kc.inputs.push_back(random_f32(ad, 9500 + i));
    kc.inputs.push_back(random_f32(Dims{K, N}, 9600 + i));
    kc.inputs.push_back(random_f32(Dims{N}, 9700 + i));
    kc.constant = {false, true, true};
    const std::string act = kActs[r.g() % kNumActs];
    if (!act.empty()) kc.attrs.set("activation", act);
    if (act == "Clip") kc.attrs.set("activation_min", -0.5f), kc.attrs.set("activation_max", 1.5f);
    if (act == "LeakyRelu" || act == "HardSigmoid" || act == "Swish") kc.attrs.set("activation_alpha", 0.3f);
    if (act == "Gelu" && i % 2 == 0) kc.attrs.set("activation_approximate", std::string("tanh"));
    compare_plain(kc, 3e-5,
                  "MatMul+bias case " + std::to_string(i) + " " + shape_str(ad.span()) + " x [" +
                      std::to_string(K) + "x" + std::to_string(N) + "] act '" + act + "'",
                  1 + i % 2);
  }
  // Every activation over whole tiles (40 rows, three full 32-column panels and a partial one),
  // with a post-scale on every other: the epilogues of whole tiles, GELU's interleaved one
  // (impl_conv_gemm.h) among them, which random shapes reach rarely.
  for (unsigned k = 0; k <= kNumActs; ++k) {
    const std::string act = k < kNumActs ? kActs[k] : "Gelu";  // the last: its tanh form
    KernelCase kc;
    kc.op = "MatMul";
    kc.inputs.push_back(random_f32(Dims{40, 16}, 9800 + k));
    kc.inputs.push_back(random_f32(Dims{16, 120}, 9820 + k));
    kc.inputs.push_back(random_f32(Dims{120}, 9840 + k));
    kc.constant = {false, true, true};
    if (!act.empty()) kc.attrs.set("activation", act);
    if (act == "Clip") kc.attrs.set("activation_min", -0.5f), kc.attrs.set("activation_max", 1.5f);
    if (act == "LeakyRelu" || act == "HardSigmoid" || act == "Swish") kc.attrs.set("activation_alpha", 0.3f);
    if (k == kNumActs) kc.attrs.set("activation_approximate", std::string("tanh"));
    if (k % 2 == 1) kc.attrs.set("activation_post_mul", 0.75f), kc.attrs.set("activation_post_add", -0.25f);
    compare_plain(kc, 3e-5, "MatMul+bias whole tiles, act '" + act + (k == kNumActs ? " tanh'" : "'"), 1);
  }
  // A bias that is not one value per column: both refuse it when planning.
  KernelCase bad;
  bad.op = "MatMul";
  bad.inputs.push_back(random_f32(Dims{3, 4}, 1));
  bad.inputs.push_back(random_f32(Dims{4, 5}, 2));
  bad.inputs.push_back(random_f32(Dims{4}, 3));
  bad.constant = {false, true, true};
  for (const char* impl : {"reference", "fast"}) {
    auto res = run_kernel(bad, impl, 1);
    BOOST_TEST((!res.ok() && res.message().find("bias") != std::string::npos), impl);
  }
}

BOOST_AUTO_TEST_CASE(gemm_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  for (int i = 0; i < 40; ++i) {
    const int64_t M = r.pick({1, 2, 9, 33}), K = r.pick({3, 16, 64}), N = r.pick({5, 16, 40, 100});
    const bool tb = i % 2 == 1;
    KernelCase kc;
    kc.op = "Gemm";
    kc.attrs.set("transB", static_cast<int64_t>(tb));
    if (i % 3 == 1) kc.attrs.set("alpha", 0.5f);
    const int form = i % 5;  // C: none, scalar, [N], [M, N] at run time, [M, 1] (reference)
    if (form == 1 || form == 2) kc.attrs.set("beta", 2.f);
    kc.inputs.push_back(random_f32(Dims{M, K}, 9200 + i));
    kc.inputs.push_back(random_f32(tb ? Dims{N, K} : Dims{K, N}, 9300 + i));
    kc.constant = {false, true, form != 3};
    if (form == 1) kc.inputs.push_back(random_f32(Dims{1}, 9400 + i));
    if (form == 2) kc.inputs.push_back(random_f32(Dims{N}, 9400 + i));
    if (form == 3) kc.inputs.push_back(random_f32(Dims{M, N}, 9400 + i));
    if (form == 4) kc.inputs.push_back(random_f32(Dims{M, 1}, 9400 + i));
    compare_plain(kc, 3e-5, "Gemm case " + std::to_string(i) + " form " + std::to_string(form), 1 + i % 2,
                  (form == 4 && M != 1) || (form == 3 && M == 1));  // [1, N] at run time may broadcast
  }
}

BOOST_AUTO_TEST_CASE(softmax_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  for (int i = 0; i < 30; ++i) {
    KernelCase kc;
    kc.op = i % 5 == 4 ? "LogSoftmax" : "Softmax";
    const int64_t n = r.pick({1, 7, 8, 16, 33, 6625});
    Dims d{r.pick({1, 2}), r.pick({1, 40}), n};
    if (i % 6 == 5) {  // opset < 13: flattened from axis 1
      kc.attrs.set("coerce_2d", int64_t{1});
      kc.attrs.set("axis", int64_t{1});
    }
    kc.inputs.push_back(random_f32(d, 9500 + i, -20.f, 20.f));
    compare_plain(kc, 1e-5, kc.op + " case " + std::to_string(i) + " " + shape_str(d.span()), 1 + i % 2);
  }
}

// Softmax along an axis that is not the last (YOLOv8's distribution decode: axis 1 of
// [N, 16, 4, A]): vectorised across the columns after it, whole vectors and a masked tail, one
// or two threads; a trailing axis of 1 goes the row way. Values from -100 to 20: some columns'
// small terms are flushed, as the reference's round to the same zeros.
BOOST_AUTO_TEST_CASE(softmax_along_an_inner_axis_matches_reference) {
  if (!have_fast()) return;
  const std::vector<std::pair<Dims, int64_t>> cases{
      {Dims{1, 16, 4, 37}, 1}, {Dims{2, 5, 3, 33}, -3}, {Dims{3, 7, 19}, 0},      {Dims{4, 17}, 0},
      {Dims{2, 3, 80}, 1},     {Dims{3, 5, 1}, 1},      {Dims{1, 16, 4, 8400}, 1}};
  int i = 0;
  for (const auto& [d, axis] : cases)
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      KernelCase kc;
      kc.op = op;
      kc.attrs.set("axis", axis);
      kc.inputs.push_back(random_f32(d, 9600 + i, -100.f, 20.f));
      compare_plain(kc, 1e-5,
                    std::string(op) + " axis " + std::to_string(axis) + " of " + shape_str(d.span()),
                    1 + i % 2);
      ++i;
    }
}

// Masked attention rows (Swin's shifted windows add -100, decoders -1e4 or -inf): the fast
// Softmax flushes what would be subnormal to 0 (a multiply reading a subnormal takes a microcode
// assist: the MatMul after it ran 10x slower), keeps NaN, and matches the reference otherwise.
BOOST_AUTO_TEST_CASE(softmax_of_masked_rows_has_no_subnormals) {
  if (!have_fast()) return;
  const float masks[] = {-100.f, -87.f, -88.f, -1e4f, -std::numeric_limits<float>::infinity()};
  for (int64_t n : {7, 16, 49, 50}) {  // a tail only, whole vectors, and both
    KernelCase kc;
    kc.op = "Softmax";
    Tensor x = random_f32(Dims{3, n}, 9550 + static_cast<unsigned>(n), -2.f, 2.f);
    float* p = x.as<float>();
    for (int64_t i = 0; i < 3 * n; ++i)
      if (i % 3 != 0) p[i] += masks[i % 5];  // most of each row masked, in vectors and tails
    p[2 * n + n / 2] = std::numeric_limits<float>::quiet_NaN();  // row 2: NaN in, NaN out
    kc.inputs.push_back(std::move(x));
    const std::string what = "masked Softmax of " + std::to_string(n);
    auto ref = run_kernel(kc, "reference");
    BOOST_TEST_REQUIRE(ref.ok(), what);
    for (int threads : {1, 2}) {
      auto fast = run_kernel(kc, "fast", threads);
      BOOST_TEST_REQUIRE(fast.ok(), what);
      const float* f = (*fast)[0].as<float>();
      const float* r = (*ref)[0].as<float>();
      int subnormal = 0, zeros = 0;
      for (int64_t i = 0; i < 2 * n; ++i) {
        subnormal += std::fpclassify(f[i]) == FP_SUBNORMAL;
        zeros += f[i] == 0.f;
        BOOST_TEST(std::fabs(f[i] - r[i]) <= 1e-6f * (1.f + std::fabs(r[i])), what << " element " << i);
      }
      BOOST_TEST(subnormal == 0, what);
      BOOST_TEST(zeros > 0, what);  // exp(-100) and below: flushed, not rounded up
      for (int64_t i = 2 * n; i < 3 * n; ++i) BOOST_TEST(std::isnan(f[i]), what << " NaN row, element " << i);
    }
  }
}

BOOST_AUTO_TEST_CASE(conv_transpose_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  for (int i = 0; i < 20; ++i) {
    const int64_t c = r.pick({1, 8, 24, 40}), m = r.pick({1, 3, 16, 24}), k = r.pick({2, 3});
    KernelCase kc;
    kc.op = "ConvTranspose";
    kc.attrs.set("kernel_shape", std::vector<int64_t>{k, k});
    kc.attrs.set("strides", std::vector<int64_t>{k, k});
    if (i % 3 == 0) kc.attrs.set("activation", std::string("Relu"));
    if (i % 3 == 1) kc.attrs.set("activation", std::string("Sigmoid"));
    kc.inputs.push_back(random_f32(Dims{r.pick({1, 2}), c, r.range(1, 13), r.range(1, 17)}, 9600 + i));
    kc.inputs.push_back(random_f32(Dims{c, m, k, k}, 9700 + i));
    kc.inputs.push_back(i % 2 == 0 ? random_f32(Dims{m}, 9800 + i) : Tensor());
    kc.constant = {false, true, true};
    compare(kc, {0}, 3e-5, "ConvTranspose case " + std::to_string(i), 1 + i % 2);
  }
}

BOOST_AUTO_TEST_CASE(resize_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  const char* coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"};
  const char* nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  for (int i = 0; i < 32; ++i) {
    const bool linear = i % 2 == 1;
    const int64_t c = r.pick({1, 8, 13, 24}), h = r.range(1, 12), w = r.range(1, 15);
    const float sh = static_cast<float>(r.pick({1, 2, 3})) / static_cast<float>(r.pick({1, 2}));
    const float sw = static_cast<float>(r.pick({1, 2, 3})) / static_cast<float>(r.pick({1, 2}));
    Attributes at;
    at.set("mode", std::string(linear ? "linear" : "nearest"));
    at.set("coordinate_transformation_mode", std::string(coords[(i / 2) % 4]));
    at.set("nearest_mode", std::string(nearest[(i / 8) % 4]));
    KernelCase ref;
    ref.op = "Resize";
    ref.attrs = at;
    ref.inputs.push_back(random_f32(Dims{r.pick({1, 2}), c, h, w}, 9900 + i));
    ref.inputs.emplace_back();
    ref.inputs.push_back(make_f32(Dims{4}, {1.f, 1.f, sh, sw}));
    ref.constant = {false, true, true};
    auto want = run_kernel(ref, "reference");
    BOOST_TEST_REQUIRE(want.ok(), (want.ok() ? "" : want.message()));
    KernelCase fast;
    fast.op = "Resize";
    fast.attrs = at;
    fast.attrs.set("weave_layout", std::string("NHWC"));
    fast.inputs.push_back(to_nhwc(ref.inputs[0]));
    fast.inputs.emplace_back();
    fast.inputs.push_back(make_f32(Dims{4}, {1.f, sh, sw, 1.f}));
    fast.constant = {false, true, true};
    auto got = run_kernel(fast, "fast", 1 + i % 2);
    BOOST_TEST_REQUIRE(got.ok(), (got.ok() ? "" : got.message()));
    check_close(to_nchw((*got)[0]), (*want)[0], 1e-6,
                "Resize case " + std::to_string(i) + " " + at.get_string("mode") + " " +
                    at.get_string("coordinate_transformation_mode") + " scales " + std::to_string(sh) + "," +
                    std::to_string(sw));
  }
}
