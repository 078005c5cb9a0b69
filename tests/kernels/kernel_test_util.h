// Small helpers shared by the elementwise, shape and reduce kernel tests: typed tensor makers,
// value extraction, and a runner that checks 1 and 2 threads agree bit for bit.
#pragma once

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "tests/kernels/kernel_harness.h"

namespace weave {
// Lets Boost.Test print dtypes in failed checks.
inline std::ostream& operator<<(std::ostream& os, DType t) {
  return os << dtype_name(t);
}
}  // namespace weave

namespace weave::test {

template <class T>
inline Tensor make(Dims d, std::vector<T> v) {
  return Tensor::from<T>(d, v);
}

inline Tensor make_bool(Dims d, std::vector<uint8_t> v) {
  Tensor t(DType::boolean, d);
  for (std::size_t i = 0; i < v.size() && static_cast<int64_t>(i) < t.numel(); ++i) t.as<uint8_t>()[i] = v[i];
  return t;
}

inline Tensor cp(const Tensor& t) {
  return Tensor::copy_of(t.view());
}

// Tensor is move-only, so an initializer list (which copies) cannot hold them.
template <class... Ts>
inline std::vector<Tensor> ins(Ts&&... ts) {
  std::vector<Tensor> v;
  (v.push_back(std::forward<Ts>(ts)), ...);
  return v;
}

template <class T>
inline std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.as<T>(), t.as<T>() + t.numel());
}

// Runs with 1 and 2 threads, checks both agree bit for bit, returns all outputs.
inline std::vector<Tensor> run_all(const KernelCase& c) {
  auto r1 = run_kernel(c, "", 1);
  BOOST_REQUIRE_MESSAGE(r1.ok(), (r1.ok() ? std::string() : r1.message()));
  auto r2 = run_kernel(c, "", 2);
  BOOST_REQUIRE(r2.ok());
  BOOST_REQUIRE_EQUAL(r1->size(), r2->size());
  for (std::size_t i = 0; i < r1->size(); ++i) {
    const auto a = (*r1)[i].raw(), b = (*r2)[i].raw();
    BOOST_REQUIRE(a.size() == b.size());
    BOOST_CHECK(std::equal(a.begin(), a.end(), b.begin()));
  }
  return std::move(*r1);
}

inline Tensor run1(const KernelCase& c) {
  return std::move(run_all(c).at(0));
}

inline std::string run_error(const KernelCase& c) {
  auto r = run_kernel(c);
  BOOST_REQUIRE(!r.ok());
  return r.message();
}

inline void check_close(const Tensor& t, std::vector<float> expect, float tol = 1e-5f) {
  BOOST_REQUIRE_EQUAL(static_cast<int>(t.dtype()), static_cast<int>(DType::float32));
  BOOST_REQUIRE_EQUAL(t.numel(), static_cast<int64_t>(expect.size()));
  for (std::size_t i = 0; i < expect.size(); ++i) {
    const float got = t.as<float>()[i];
    if (std::isnan(expect[i])) {
      BOOST_CHECK(std::isnan(got));
      continue;
    }
    if (std::isinf(expect[i])) {
      BOOST_CHECK_EQUAL(got, expect[i]);
      continue;
    }
    BOOST_CHECK_MESSAGE(std::fabs(got - expect[i]) <= tol,
                        "element " << i << ": " << got << " != " << expect[i]);
  }
}

}  // namespace weave::test
