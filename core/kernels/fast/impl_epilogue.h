// Vector activations shared by every epilogue of the fast kernels. ISA translation units only
// (see simd.h).
#pragma once

#include <type_traits>

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

// The activation of a kind known at compile time (epilogues dispatch once per tile).
template <Activation::Kind K>
inline V activation_of(V v, const Activation& a) {
  if constexpr (K == Activation::none) {
    return v;
  } else if constexpr (K == Activation::relu) {
    return Simd::max(Simd::zero(), v);
  } else if constexpr (K == Activation::clip) {
    return Simd::min(Simd::set1(a.p1), Simd::max(Simd::set1(a.p0), v));
  } else if constexpr (K == Activation::leaky_relu) {
    return Simd::select_neg(v, Simd::mul(v, Simd::set1(a.p0)));
  } else if constexpr (K == Activation::hard_swish) {
    const V t = Simd::fma(v, Simd::set1(1.f / 6.f), Simd::set1(0.5f));
    return Simd::mul(v, Simd::min(Simd::set1(1.f), Simd::max(Simd::zero(), t)));
  } else if constexpr (K == Activation::sigmoid) {
    return sigmoid(v);
  } else if constexpr (K == Activation::hard_sigmoid) {
    const V t = Simd::fma(v, Simd::set1(a.p0), Simd::set1(a.p1));
    return Simd::min(Simd::set1(1.f), Simd::max(Simd::zero(), t));
  } else {
    return tanh(v);
  }
}

// Calls fn(std::integral_constant<Activation::Kind, kind>) for the runtime kind.
template <class Fn>
inline void with_activation(Activation::Kind kind, Fn&& fn) {
  using A = Activation;
  switch (kind) {
    case A::none:
      return fn(std::integral_constant<A::Kind, A::none>{});
    case A::relu:
      return fn(std::integral_constant<A::Kind, A::relu>{});
    case A::clip:
      return fn(std::integral_constant<A::Kind, A::clip>{});
    case A::leaky_relu:
      return fn(std::integral_constant<A::Kind, A::leaky_relu>{});
    case A::hard_swish:
      return fn(std::integral_constant<A::Kind, A::hard_swish>{});
    case A::sigmoid:
      return fn(std::integral_constant<A::Kind, A::sigmoid>{});
    case A::hard_sigmoid:
      return fn(std::integral_constant<A::Kind, A::hard_sigmoid>{});
    case A::tanh:
      return fn(std::integral_constant<A::Kind, A::tanh>{});
  }
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
