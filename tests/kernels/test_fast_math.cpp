// The fast path's vector math (core/kernels/fast/impl_epilogue.h, simd.h) through its kernels:
// every unary op of unary_fast.cpp and LayerNormalization of norm_fast.cpp against the reference
// kernels on odd lengths (vector tails) and split over threads; the transcendental functions
// against double precision over their whole range with the accuracy bounds their comments
// state; special values (NaN, infinities, zeros, negatives for Log and Sqrt) as std:: gives
// them; and the nodes the fast kernels must leave to the reference ones.
#define BOOST_TEST_MODULE kernel_fast_math
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/kernels/fast_compare.h"
#include "tests/kernels/test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

struct UnaryCase {
  std::string op;
  float lo, hi;  // input range
  Attributes attrs;
};

Attributes attr_f(const char* name, float v) {
  Attributes a;
  a.set(name, v);
  return a;
}

std::vector<UnaryCase> unary_cases() {
  Attributes hs;
  hs.set("alpha", 0.3f);
  hs.set("beta", 0.4f);
  Attributes tanh_gelu;
  tanh_gelu.set("approximate", std::string("tanh"));
  return {
      {"Relu", -5, 5, {}},        {"Sigmoid", -30, 30, {}},
      {"Tanh", -12, 12, {}},      {"HardSwish", -5, 5, {}},
      {"HardSigmoid", -5, 5, hs}, {"LeakyRelu", -5, 5, attr_f("alpha", 0.07f)},
      {"Swish", -30, 30, {}},     {"Swish", -10, 10, attr_f("alpha", 1.7f)},
      {"Gelu", -8, 8, {}},        {"Gelu", -8, 8, tanh_gelu},
      {"Softplus", -30, 30, {}},  {"Mish", -30, 30, {}},
      {"Exp", -87, 88, {}},       {"Log", 1e-30f, 1e30f, {}},
      {"Log", 0.5f, 2.f, {}},     {"Erf", -5, 5, {}},
      {"Sqrt", 0, 1e6f, {}},      {"Reciprocal", 0.01f, 100, {}},
  };
}

// One output of the fast kernel (which must take the node) for input x.
Tensor run_fast(const KernelCase& c, int threads = 1) {
  auto r = run_kernel(c, "fast", threads);
  BOOST_TEST_REQUIRE(r.ok(), c.op << ": " << (r.ok() ? "" : r.message()));
  return std::move((*r)[0]);
}

KernelCase unary_case(const std::string& op, const Attributes& attrs, Tensor x) {
  KernelCase kc;
  kc.op = op;
  kc.attrs = attrs;
  kc.opset = 20;
  kc.inputs.push_back(std::move(x));
  return kc;
}

Tensor f32(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return make_f32(Dims{n}, std::move(v));
}

// Reference in double for the accuracy sweeps.
double exact(const std::string& op, double x) {
  if (op == "Exp") return std::exp(x);
  if (op == "Log") return std::log(x);
  if (op == "Erf") return std::erf(x);
  if (op == "Tanh") return std::tanh(x);
  if (op == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (op == "Gelu") return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  if (op == "Swish") return x / (1.0 + std::exp(-x));
  if (op == "Softplus") return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  if (op == "Mish") return x * std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
  return std::nan("");
}

}  // namespace

BOOST_AUTO_TEST_CASE(unary_ops_match_reference_on_every_tail) {
  if (!have_fast()) return;
  int seed = 100;
  for (const UnaryCase& u : unary_cases())
    for (int64_t n : {1, 7, 8, 15, 16, 17, 31, 33, 100003}) {
      const KernelCase kc = unary_case(u.op, u.attrs, random_f32(Dims{n}, ++seed, u.lo, u.hi));
      // 2e-6 of 1 + |y|: a few float ulp of the reference's float math (libm's to 0.5 ulp, the
      // vector polynomials to 2 ulp, erf to 2e-7 absolute).
      compare_plain(kc, 2e-6, u.op + " n=" + std::to_string(n), n > 1000 ? 2 : 1);
    }
}

BOOST_AUTO_TEST_CASE(constant_clip_and_pow_match_reference) {
  if (!have_fast()) return;
  const Tensor x = random_f32(Dims{3, 37}, 7, -4.f, 4.f);
  for (float e : {2.f, 0.5f, -1.f, 1.f}) {
    KernelCase kc = unary_case("Pow", {}, e == 0.5f ? random_f32(Dims{3, 37}, 8, 0.f, 9.f) : copy(x));
    kc.inputs.push_back(make_f32(Dims{}, {e}));
    kc.constant = {false, true};
    compare_plain(kc, 2e-6, "Pow exponent " + std::to_string(e));
  }
  KernelCase clip = unary_case("Clip", {}, copy(x));
  clip.inputs.push_back(make_f32(Dims{}, {-0.5f}));
  clip.inputs.push_back(make_f32(Dims{}, {1.5f}));
  clip.constant = {false, true, true};
  compare_plain(clip, 0, "Clip [-0.5, 1.5]");
  KernelCase upper = unary_case("Clip", {}, copy(x));
  upper.inputs.push_back(Tensor());  // min omitted
  upper.inputs.push_back(make_f32(Dims{}, {0.25f}));
  upper.constant = {false, false, true};
  compare_plain(upper, 0, "Clip max only");
}

BOOST_AUTO_TEST_CASE(transcendentals_within_their_stated_bounds) {
  if (!have_fast()) return;
  // Relative to max(|exact|, floor): the floor is where a function's absolute error is what
  // counts (erf and the tanh form near 0, Gelu and Swish where they cross 0).
  struct Bound {
    std::string op;
    double lo, hi, rel, floor;
  };
  const Bound bounds[] = {
      {"Exp", -87, 88.3, 3e-7, 0},    {"Log", 1e-44, 3e38, 3e-7, 0}, {"Erf", -6, 6, 3e-7, 0.75},
      {"Erf", -0.79, 0.79, 4e-7, 0},  {"Tanh", -10, 10, 4e-7, 0.1},  {"Sigmoid", -80, 30, 4e-7, 0},
      {"Gelu", -6, 6, 5e-6, 0},       {"Gelu", -2, 6, 6e-7, 0},      {"Swish", -80, 30, 4e-7, 0.1},
      {"Softplus", -80, 30, 4e-7, 0}, {"Mish", -30, 30, 6e-7, 0.1},
  };
  for (const Bound& b : bounds) {
    const int n = 200001;
    std::vector<float> xs(n);
    const bool geometric = b.op == "Log";
    for (int i = 0; i < n; ++i) {
      const double t = static_cast<double>(i) / (n - 1);
      xs[i] = static_cast<float>(geometric ? std::exp(std::log(b.lo) + t * (std::log(b.hi) - std::log(b.lo)))
                                           : b.lo + t * (b.hi - b.lo));
    }
    const Tensor y = run_fast(unary_case(b.op, {}, f32(xs)));
    double worst = 0;
    float at = 0;
    for (int i = 0; i < n; ++i) {
      const double want = exact(b.op, xs[i]);
      const double err = std::fabs(y.as<float>()[i] - want) / std::max(std::fabs(want), b.floor);
      if (!(err <= worst)) worst = err, at = xs[i];
    }
    BOOST_TEST(worst <= b.rel, b.op << " on [" << b.lo << ", " << b.hi << "]: worst relative error " << worst
                                    << " at x = " << at);
  }
}

BOOST_AUTO_TEST_CASE(special_values_as_the_standard_library_gives_them) {
  if (!have_fast()) return;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const std::vector<float> xs = {nan, inf, -inf, 0.f, -0.f, 1.f, -1.f, 1e-40f, 100.f, -100.f};
  // (op, want per x), NaN meaning "NaN".
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {
      {"Exp", {nan, inf, 0.f, 1.f, 1.f, std::exp(1.f), std::exp(-1.f), 1.f, inf, 0.f}},
      {"Log", {nan, inf, nan, -inf, -inf, 0.f, nan, std::log(1e-40f), std::log(100.f), nan}},
      {"Sqrt", {nan, inf, nan, 0.f, -0.f, 1.f, nan, std::sqrt(1e-40f), 10.f, nan}},
      {"Erf", {nan, 1.f, -1.f, 0.f, -0.f, std::erf(1.f), -std::erf(1.f), std::erf(1e-40f), 1.f, -1.f}},
      {"Tanh", {nan, 1.f, -1.f, 0.f, 0.f, std::tanh(1.f), -std::tanh(1.f), 0.f, 1.f, -1.f}},
      {"Sigmoid",
       {nan, 1.f, 0.f, 0.5f, 0.5f, 1.f / (1.f + std::exp(-1.f)), 1.f / (1.f + std::exp(1.f)), 0.5f, 1.f,
        0.f}},
      {"Relu", {nan, inf, 0.f, 0.f, 0.f, 1.f, 0.f, 1e-40f, 100.f, 0.f}},
      {"Softplus",
       {nan, inf, 0.f, std::log(2.f), std::log(2.f), std::log1p(std::exp(1.f)), std::log1p(std::exp(-1.f)),
        std::log(2.f), 100.f, 0.f}},
  };
  for (const auto& [op, want] : cases) {
    const Tensor y = run_fast(unary_case(op, {}, f32(xs)));
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const float got = y.as<float>()[i];
      const bool ok = std::isnan(want[i]) ? std::isnan(got)
                      : std::isinf(want[i])
                          ? got == want[i]
                          : std::fabs(got - want[i]) <= 1e-6f * std::max(1.f, std::fabs(want[i])) + 1e-38f;
      BOOST_TEST(ok, op << "(" << xs[i] << ") = " << got << ", want " << want[i]);
    }
  }
}

BOOST_AUTO_TEST_CASE(layer_norm_matches_reference) {
  if (!have_fast()) return;
  Rng r;
  int i = 0;
  for (int64_t n : {2, 7, 16, 17, 96, 192, 768, 1000})
    for (bool bias : {true, false}) {
      const int64_t rows = r.pick({1, 3, 197});
      const bool two_axes = n == 96 || n == 1000;  // normalize the last two axes
      KernelCase kc;
      kc.op = "LayerNormalization";
      kc.opset = 17;
      Dims xd = two_axes ? Dims{rows, 2, n / 2} : Dims{rows, n};
      if (two_axes) kc.attrs.set("axis", int64_t{-2});
      kc.attrs.set("epsilon", i % 2 ? 1e-6f : 1e-5f);
      // Rows with a large mean next to a small spread: the two-pass moments must keep them.
      kc.inputs.push_back(random_f32(xd, 300 + i, i % 3 == 0 ? 100.f : -2.f, i % 3 == 0 ? 101.f : 2.f));
      const Dims pd = two_axes ? Dims{2, n / 2} : Dims{n};
      kc.inputs.push_back(random_f32(pd, 400 + i, 0.5f, 1.5f));
      kc.inputs.push_back(bias ? random_f32(pd, 500 + i) : Tensor());
      kc.constant = {false, true, bias};
      compare_plain(kc, 2e-5, "LayerNorm " + shape_str(xd.span()) + (bias ? " +bias" : ""), 1 + i % 2);
      ++i;
    }
}

BOOST_AUTO_TEST_CASE(fast_kernels_leave_what_they_do_not_cover) {
  if (!have_fast()) return;
  const Tensor x = random_f32(Dims{4, 9}, 9, 0.5f, 2.f);
  KernelCase cube = unary_case("Pow", {}, copy(x));
  cube.inputs.push_back(make_f32(Dims{}, {3.f}));
  cube.constant = {false, true};
  compare_plain(cube, 0, "Pow exponent 3", 1, true);
  KernelCase computed = unary_case("Pow", {}, copy(x));
  computed.inputs.push_back(make_f32(Dims{}, {2.f}));
  computed.constant = {false, false};  // an exponent known only at run time
  compare_plain(computed, 0, "Pow computed exponent", 1, true);
  KernelCase wide = unary_case("Pow", {}, copy(x));
  wide.inputs.push_back(make_f32(Dims{1, 1, 1}, {2.f}));  // broadcasts x to rank 3
  wide.constant = {false, true};
  compare_plain(wide, 0, "Pow exponent of higher rank", 1, true);
  KernelCase clip = unary_case("Clip", {}, copy(x));
  clip.inputs.push_back(make_f32(Dims{}, {0.f}));
  clip.constant = {false, false};
  compare_plain(clip, 0, "Clip computed bound", 1, true);
  KernelCase ints = unary_case("Relu", {}, make_i64(Dims{3}, {-1, 0, 1}));
  compare_plain(ints, 0, "Relu int64", 1, true);
  auto layer_norm = [&](Tensor scale, int outputs) {
    KernelCase ln;
    ln.op = "LayerNormalization";
    ln.opset = 17;
    ln.inputs.push_back(copy(x));
    ln.inputs.push_back(std::move(scale));
    ln.constant = {false, true};
    ln.num_outputs = outputs;
    return ln;
  };
  compare_plain(layer_norm(make_f32(Dims{1}, {2.f}), 1), 0, "LayerNorm one-element Scale", 1, true);
  compare_plain(layer_norm(random_f32(Dims{9}, 10), 2), 0, "LayerNorm with Mean", 1, true);
}
