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

// tanh to a few float ulp relative: below |x| = 0.55 its Taylor series to x^17 (the next term
// is under 3e-9 of the value); above, 2 / (1 + e^-2x) - 1 (where tanh >= 0.5, so the
// subtraction loses nothing).
inline V tanh(V v) {
  const V z = Simd::mul(v, v);
  V s = Simd::set1(5.90027440945586e-4f);
  s = Simd::fma(s, z, Simd::set1(-1.45583438705131827e-3f));
  s = Simd::fma(s, z, Simd::set1(3.59212803657248102e-3f));
  s = Simd::fma(s, z, Simd::set1(-8.86323552990219656e-3f));
  s = Simd::fma(s, z, Simd::set1(2.18694885361552028e-2f));
  s = Simd::fma(s, z, Simd::set1(-5.39682539682539683e-2f));
  s = Simd::fma(s, z, Simd::set1(1.33333333333333333e-1f));
  s = Simd::fma(s, z, Simd::set1(-3.33333333333333333e-1f));
  const V near = Simd::fma(Simd::mul(s, z), v, v);
  const V one = Simd::set1(1.f), two = Simd::set1(2.f);
  const V e = exp(Simd::mul(v, Simd::set1(-2.f)));
  const V far = Simd::sub(Simd::div(two, Simd::add(one, e)), one);
  return Simd::select_lt(Simd::abs(v), Simd::set1(0.55f), near, far);
}

// erf(x) = 2/sqrt(pi) (x - x^3/3 + x^5/10 - ...) for |x| < 0.8: the Taylor series to x^17 (the
// next term is under 3e-9).
inline V erf_near(V v) {
  const V z = Simd::mul(v, v);
  V s = Simd::set1(1.f / 685440.f);
  s = Simd::fma(s, z, Simd::set1(-1.f / 75600.f));
  s = Simd::fma(s, z, Simd::set1(1.f / 9360.f));
  s = Simd::fma(s, z, Simd::set1(-1.f / 1320.f));
  s = Simd::fma(s, z, Simd::set1(1.f / 216.f));
  s = Simd::fma(s, z, Simd::set1(-1.f / 42.f));
  s = Simd::fma(s, z, Simd::set1(1.f / 10.f));
  s = Simd::fma(s, z, Simd::set1(-1.f / 3.f));
  s = Simd::fma(s, z, Simd::set1(1.f));
  return Simd::mul(Simd::mul(s, v), Simd::set1(1.12837916709551257f));  // 2/sqrt(pi)
}

// erfc(a) for any a >= 0 to about 1e-6 relative (erf takes it from 0.8 on, where 1 - erfc keeps
// erf's own relative precision; gelu everywhere): the Chebyshev fit of
// Numerical Recipes (erfcc, fractional error under 1.2e-7 in exact arithmetic; the float
// exponent -a^2 adds a few ulp of a^2 past a = 2).
inline V erfc_far(V a) {
  const V t = Simd::div(Simd::set1(1.f), Simd::fma(a, Simd::set1(0.5f), Simd::set1(1.f)));
  V p = Simd::set1(0.17087277f);
  p = Simd::fma(p, t, Simd::set1(-0.82215223f));
  p = Simd::fma(p, t, Simd::set1(1.48851587f));
  p = Simd::fma(p, t, Simd::set1(-1.13520398f));
  p = Simd::fma(p, t, Simd::set1(0.27886807f));
  p = Simd::fma(p, t, Simd::set1(-0.18628806f));
  p = Simd::fma(p, t, Simd::set1(0.09678418f));
  p = Simd::fma(p, t, Simd::set1(0.37409196f));
  p = Simd::fma(p, t, Simd::set1(1.00002368f));
  p = Simd::fma(p, t, Simd::set1(-1.26551223f));
  return Simd::mul(t, exp(Simd::fnma(a, a, p)));
}

inline V erf(V v) {
  const V a = Simd::abs(v);
  const V far = Simd::bit_or(Simd::sub(Simd::set1(1.f), erfc_far(a)), Simd::sign(v));
  return Simd::select_lt(a, Simd::set1(0.8f), erf_near(v), far);
}

// x * sigmoid(alpha x) = x / (1 + e^(-alpha x))
inline V swish(V v, float alpha) {
  const V e = exp(Simd::mul(v, Simd::set1(-alpha)));
  return Simd::div(v, Simd::add(Simd::set1(1.f), e));
}

// x/2 (1 + erf(x / sqrt 2)), the bracket from erfc(|u|) alone, u = x / sqrt 2: erfc(|u|) itself
// below 0 (not 1 - (1 - erfc): the negative tail keeps its relative precision), 2 - erfc(u) above.
// The fit holds its relative error at every |u|, and near 0, where erf itself would need its
// series, the bracket is about 1: an absolute error of erfc is a relative one of the bracket.
inline V gelu(V v) {
  const V half = Simd::mul(v, Simd::set1(0.5f));
  const V u = Simd::mul(v, Simd::set1(0.70710678118654752f));
  const V c = erfc_far(Simd::abs(u));
  return Simd::mul(half, Simd::select_lt(u, Simd::zero(), c, Simd::sub(Simd::set1(2.f), c)));
}

inline V gelu_tanh(V v) {
  const V inner = Simd::mul(Simd::fma(Simd::mul(v, v), Simd::set1(0.044715f), Simd::set1(1.f)), v);
  const V half = Simd::mul(v, Simd::set1(0.5f));
  return Simd::fma(half, tanh(Simd::mul(inner, Simd::set1(0.79788456080286536f))), half);
}

// ln(1 + e^x) = max(x, 0) + log1p(e^-|x|), where log1p(u) = log(w) * u / (w - 1), w = 1 + u,
// keeps its precision for small u (and is u where w rounds to 1).
inline V softplus(V v) {
  const V u = exp(Simd::sub(Simd::zero(), Simd::abs(v)));
  const V w = Simd::add(Simd::set1(1.f), u);
  const V d = Simd::sub(w, Simd::set1(1.f));
  const V l = Simd::select_eq(d, Simd::zero(), u, Simd::div(Simd::mul(log(w), u), d));
  return Simd::add(Simd::max(v, Simd::zero()), l);
}

// x * tanh(softplus(x)) = x * n / (n + 2), n = e^x (e^x + 2); 1 to float precision past x = 20.
inline V mish(V v) {
  const V e = exp(Simd::min(v, Simd::set1(20.f)));
  const V n = Simd::mul(e, Simd::add(e, Simd::set1(2.f)));
  return Simd::mul(v, Simd::div(n, Simd::add(n, Simd::set1(2.f))));
}

// The activation of a kind known at compile time (epilogues dispatch once per tile).
template <Activation::Kind K>
inline V activation_of(V v, const Activation& a) {
  using A = Activation;
  if constexpr (K == A::none) {
    return v;
  } else if constexpr (K == A::relu) {
    return Simd::max(Simd::zero(), v);
  } else if constexpr (K == A::clip) {
    return Simd::min(Simd::set1(a.p1), Simd::max(Simd::set1(a.p0), v));
  } else if constexpr (K == A::leaky_relu) {
    return Simd::select_neg(v, Simd::mul(v, Simd::set1(a.p0)));
  } else if constexpr (K == A::hard_swish) {
    const V t = Simd::fma(v, Simd::set1(1.f / 6.f), Simd::set1(0.5f));
    return Simd::mul(v, Simd::min(Simd::set1(1.f), Simd::max(Simd::zero(), t)));
  } else if constexpr (K == A::sigmoid) {
    return sigmoid(v);
  } else if constexpr (K == A::hard_sigmoid) {
    const V t = Simd::fma(v, Simd::set1(a.p0), Simd::set1(a.p1));
    return Simd::min(Simd::set1(1.f), Simd::max(Simd::zero(), t));
  } else if constexpr (K == A::tanh) {
    return tanh(v);
  } else if constexpr (K == A::swish) {
    return swish(v, a.p0);
  } else if constexpr (K == A::gelu) {
    return gelu(v);
  } else if constexpr (K == A::gelu_tanh) {
    return gelu_tanh(v);
  } else if constexpr (K == A::exp) {
    return exp(v);
  } else if constexpr (K == A::log) {
    return log(v);
  } else if constexpr (K == A::erf) {
    return erf(v);
  } else if constexpr (K == A::sqrt) {
    return Simd::sqrt(v);
  } else if constexpr (K == A::reciprocal) {
    return Simd::div(Simd::set1(1.f), v);
  } else if constexpr (K == A::square) {
    return Simd::mul(v, v);
  } else if constexpr (K == A::softplus) {
    return softplus(v);
  } else {
    static_assert(K == A::mish);
    return mish(v);
  }
}

// Calls fn(std::integral_constant<Activation::Kind, kind>) for the runtime kind.
template <class Fn>
inline void with_activation(Activation::Kind kind, Fn&& fn) {
  using A = Activation;
  switch (kind) {
#define WEAVE_KIND_CASE(k) \
  case A::k:               \
    return fn(std::integral_constant<A::Kind, A::k>{});
    WEAVE_KIND_CASE(none)
    WEAVE_KIND_CASE(relu)
    WEAVE_KIND_CASE(clip)
    WEAVE_KIND_CASE(leaky_relu)
    WEAVE_KIND_CASE(hard_swish)
    WEAVE_KIND_CASE(sigmoid)
    WEAVE_KIND_CASE(hard_sigmoid)
    WEAVE_KIND_CASE(tanh)
    WEAVE_KIND_CASE(swish)
    WEAVE_KIND_CASE(gelu)
    WEAVE_KIND_CASE(gelu_tanh)
    WEAVE_KIND_CASE(exp)
    WEAVE_KIND_CASE(log)
    WEAVE_KIND_CASE(erf)
    WEAVE_KIND_CASE(sqrt)
    WEAVE_KIND_CASE(reciprocal)
    WEAVE_KIND_CASE(square)
    WEAVE_KIND_CASE(softplus)
    WEAVE_KIND_CASE(mish)
#undef WEAVE_KIND_CASE
  }
}

// The activation of a kind known only at run time (edge tiles, depthwise and pooling epilogues).
inline V activation(V v, const Activation& a) {
  V out = v;
  with_activation(a.kind, [&](auto k) { out = activation_of<decltype(k)::value>(v, a); });
  return out;
}

inline V activate(V v, const Activation& a) {
  const V y = activation(v, a);
  if (a.post_mul == 1.f && a.post_add == 0.f) return y;
  return Simd::fma(y, Simd::set1(a.post_mul), Simd::set1(a.post_add));
}

}  // namespace weave::fast::WEAVE_ISA_NS
