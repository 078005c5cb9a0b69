// Comparing a fast kernel with the reference one (test_fast.cpp, test_fast_math.cpp).
#pragma once

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <random>
#include <string>

#include "core/kernels/fast/fast_ops.h"
#include "tests/kernels/test_util.h"

namespace weave::test {

// False (and a message) when this CPU, or WEAVE_ISA, leaves no fast path to compare.
inline bool have_fast() {
  if (fast::ops() != nullptr) return true;
  BOOST_TEST_MESSAGE("no fast path on this CPU (or WEAVE_ISA=none): nothing to compare");
  return false;
}

// |fast - ref| <= tol * (1 + |ref|) everywhere; reports the worst element.
inline void check_close(const Tensor& fast, const Tensor& ref, double tol, const std::string& what) {
  BOOST_TEST_REQUIRE((fast.dims() == ref.dims()), what << ": dims differ");
  double worst = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double r = ref.as<float>()[i], f = fast.as<float>()[i];
    const double err = std::fabs(f - r) / (1.0 + std::fabs(r));
    worst = std::max(worst, err);
    if (!(err <= tol)) ++bad;
  }
  BOOST_TEST(bad == 0, what << ": " << bad << " elements off, worst relative error " << worst);
}

// Layout-free kernels (MatMul, Gemm, Softmax): the same tensors for both implementations.
// With `declines`, the fast kernel must leave the node to the reference one.
inline void compare_plain(const KernelCase& c, double tol, const std::string& what, int threads = 1,
                          bool declines = false) {
  auto ref = run_kernel(c, "reference", threads);
  BOOST_TEST_REQUIRE(ref.ok(), what << ": reference: " << (ref.ok() ? "" : ref.message()));
  auto fast = run_kernel(c, "fast", threads);
  if (declines) {
    BOOST_TEST((!fast.ok() && fast.message().find("no 'fast' kernel") != std::string::npos), what);
    return;
  }
  BOOST_TEST_REQUIRE(fast.ok(), what << ": fast: " << (fast.ok() ? "" : fast.message()));
  check_close((*fast)[0], (*ref)[0], tol, what);
}

// Deterministic choices of shapes and parameters.
struct Rng {
  std::mt19937 g{20261122};
  int64_t pick(std::initializer_list<int64_t> v) { return *(v.begin() + g() % v.size()); }
  int64_t range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(g() % static_cast<uint32_t>(hi - lo + 1));
  }
};

}  // namespace weave::test
