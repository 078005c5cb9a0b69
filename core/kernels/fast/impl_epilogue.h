// Vector activations shared by every epilogue of the fast kernels. ISA translation units only
// (see simd.h).
#pragma once

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/simd.h"

namespace weave::fast::WEAVE_ISA_NS {

inline V sigmoid(V v) {
  const V one = Simd::set1(1.f);
  return Simd::div(one, Simd::add(one, exp(Simd::sub(Simd::zero(), v))));
}

inline V tanh(V v) {
  // tanh(x) = 2 / (1 + e^-2x) - 1, accurate to a few ulp away from 0; near 0 the subtraction
  // loses relative (not absolute) precision, which is what the comparisons allow.
  const V one = Simd::set1(1.f), two = Simd::set1(2.f);
  const V e = exp(Simd::mul(v, Simd::set1(-2.f)));
  return Simd::sub(Simd::div(two, Simd::add(one, e)), one);
}

inline V activation(V v, const Activation& a) {
  switch (a.kind) {
    case Activation::none:
      return v;
    case Activation::relu:
      return Simd::max(Simd::zero(), v);
    case Activation::clip:
      return Simd::min(Simd::set1(a.p1), Simd::max(Simd::set1(a.p0), v));
    case Activation::leaky_relu:
      return Simd::select_neg(v, Simd::mul(v, Simd::set1(a.p0)));
    case Activation::hard_swish: {
      const V t = Simd::fma(v, Simd::set1(1.f / 6.f), Simd::set1(0.5f));
      return Simd::mul(v, Simd::min(Simd::set1(1.f), Simd::max(Simd::zero(), t)));
    }
    case Activation::sigmoid:
      return sigmoid(v);
    case Activation::hard_sigmoid: {
      const V t = Simd::fma(v, Simd::set1(a.p0), Simd::set1(a.p1));
      return Simd::min(Simd::set1(1.f), Simd::max(Simd::zero(), t));
    }
    case Activation::tanh:
      return tanh(v);
  }
  return v;
}

inline V activate(V v, const Activation& a) {
  const V y = activation(v, a);
  if (a.post_mul == 1.f && a.post_add == 0.f) return y;
  return Simd::fma(y, Simd::set1(a.post_mul), Simd::set1(a.post_add));
}

}  // namespace weave::fast::WEAVE_ISA_NS
