// Small helpers shared by the reference-kernel tests (on top of kernel_harness.h).
#pragma once

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "tests/kernels/kernel_harness.h"

#define REQUIRE_OK(r) BOOST_REQUIRE_MESSAGE((r).ok(), ((r).ok() ? std::string() : (r).message()))

namespace weave::test {

// Moves tensors into a vector (a braced list would need copies, and Tensor is move-only).
template <class... T>
std::vector<Tensor> ins(T&&... t) {
  std::vector<Tensor> v;
  v.reserve(sizeof...(t));
  (v.push_back(std::move(t)), ...);
  return v;
}

inline Tensor copy(const Tensor& t) {
  return Tensor::copy_of(t.view());
}

inline std::vector<float> values(const Tensor& t) {
  return {t.as<float>(), t.as<float>() + t.numel()};
}

// Element-wise |got - want| <= tol.
inline void check_close(const Tensor& t, const std::vector<float>& want, float tol = 1e-5f) {
  BOOST_REQUIRE_EQUAL(t.numel(), static_cast<int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i)
    BOOST_CHECK_MESSAGE(std::abs(t.as<float>()[i] - want[i]) <= tol,
                        "element " << i << ": got " << t.as<float>()[i] << ", want " << want[i]);
}

inline bool has(const std::string& msg, const std::string& part) {
  return msg.find(part) != std::string::npos;
}

}  // namespace weave::test
