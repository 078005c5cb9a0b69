// Vector activations shared by every epilogue of the fast kernels. ISA translation units only
// (see simd.h).
#pragma once

#include <type_traits>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/simd.h"

namespace weave::fast::WEAVE_ISA_NS {

template <class S = Simd>
inline typename S::V sigmoid(typename S::V v) {
  using V = typename S::V;
  const V one = S::set1(1.f);
  return S::div(one, S::add(one, exp<S>(S::sub(S::zero(), v))));
}

// tanh to a few float ulp relative: below |x| = 0.55 its Taylor series to x^17 (the next term
// is under 3e-9 of the value); above, 2 / (1 + e^-2x) - 1 (where tanh >= 0.5, so the
// subtraction loses nothing).
template <class S = Simd>
inline typename S::V tanh(typename S::V v) {
  using V = typename S::V;
  const V z = S::mul(v, v);
  V s = horner<S>(z, 5.90027440945586e-4f, -1.45583438705131827e-3f, 3.59212803657248102e-3f,
                  -8.86323552990219656e-3f, 2.18694885361552028e-2f, -5.39682539682539683e-2f,
                  1.33333333333333333e-1f, -3.33333333333333333e-1f);
  const V near = S::fma(S::mul(s, z), v, v);
  const V one = S::set1(1.f), two = S::set1(2.f);
  const V e = exp<S>(S::mul(v, S::set1(-2.f)));
  const V far = S::sub(S::div(two, S::add(one, e)), one);
  return S::select_lt(S::abs(v), S::set1(0.55f), near, far);
}

// erf(x) = 2/sqrt(pi) (x - x^3/3 + x^5/10 - ...) for |x| < 0.8: the Taylor series to x^17 (the
// next term is under 3e-9).
template <class S = Simd>
inline typename S::V erf_near(typename S::V v) {
  using V = typename S::V;
  const V z = S::mul(v, v);
  V s = horner<S>(z, 1.f / 685440.f, -1.f / 75600.f, 1.f / 9360.f, -1.f / 1320.f, 1.f / 216.f, -1.f / 42.f,
                  1.f / 10.f, -1.f / 3.f, 1.f);
  return S::mul(S::mul(s, v), S::set1(1.12837916709551257f));  // 2/sqrt(pi)
}

// erfc(a) for any a >= 0 to about 1e-6 relative (erf takes it from 0.8 on, where 1 - erfc keeps
// erf's own relative precision; gelu everywhere): the Chebyshev fit of
// Numerical Recipes (erfcc, fractional error under 1.2e-7 in exact arithmetic; the float
// exponent -a^2 adds a few ulp of a^2 past a = 2).
template <class S = Simd>
inline typename S::V erfc_far(typename S::V a) {
  using V = typename S::V;
  const V t = S::div(S::set1(1.f), S::fma(a, S::set1(0.5f), S::set1(1.f)));
  V p = horner<S>(t, 0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f,
                  0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f);
  return S::mul(t, exp<S>(S::fnma(a, a, p)));
}

template <class S = Simd>
inline typename S::V erf(typename S::V v) {
  using V = typename S::V;
  const V a = S::abs(v);
  const V far = S::bit_or(S::sub(S::set1(1.f), erfc_far<S>(a)), S::sign(v));
  return S::select_lt(a, S::set1(0.8f), erf_near<S>(v), far);
}

// x * sigmoid(alpha x) = x / (1 + e^(-alpha x))
template <class S = Simd>
inline typename S::V swish(typename S::V v, float alpha) {
  using V = typename S::V;
  const V e = exp<S>(S::mul(v, S::set1(-alpha)));
  return S::div(v, S::add(S::set1(1.f), e));
}

// x/2 (1 + erf(x / sqrt 2)), the bracket from erfc(|u|) alone, u = x / sqrt 2: erfc(|u|) itself
// below 0 (not 1 - (1 - erfc): the negative tail keeps its relative precision), 2 - erfc(u) above.
// The fit holds its relative error at every |u|, and near 0, where erf itself would need its
// series, the bracket is about 1: an absolute error of erfc is a relative one of the bracket.
template <class S = Simd>
inline typename S::V gelu(typename S::V v) {
  using V = typename S::V;
  const V half = S::mul(v, S::set1(0.5f));
  const V u = S::mul(v, S::set1(0.70710678118654752f));
  const V c = erfc_far<S>(S::abs(u));
  return S::mul(half, S::select_lt(u, S::zero(), c, S::sub(S::set1(2.f), c)));
}

template <class S = Simd>
inline typename S::V gelu_tanh(typename S::V v) {
  using V = typename S::V;
  const V inner = S::mul(S::fma(S::mul(v, v), S::set1(0.044715f), S::set1(1.f)), v);
  const V half = S::mul(v, S::set1(0.5f));
  return S::fma(half, tanh<S>(S::mul(inner, S::set1(0.79788456080286536f))), half);
}

// ln(1 + e^x) = max(x, 0) + log1p(e^-|x|), where log1p(u) = log(w) * u / (w - 1), w = 1 + u,
// keeps its precision for small u (and is u where w rounds to 1).
template <class S = Simd>
inline typename S::V softplus(typename S::V v) {
  using V = typename S::V;
  const V u = exp<S>(S::sub(S::zero(), S::abs(v)));
  const V w = S::add(S::set1(1.f), u);
  const V d = S::sub(w, S::set1(1.f));
  const V l = S::select_eq(d, S::zero(), u, S::div(S::mul(log<S>(w), u), d));
  return S::add(S::max(v, S::zero()), l);
}

// x * tanh(softplus(x)) = x * n / (n + 2), n = e^x (e^x + 2); 1 to float precision past x = 20.
template <class S = Simd>
inline typename S::V mish(typename S::V v) {
  using V = typename S::V;
  const V e = exp<S>(S::min(v, S::set1(20.f)));
  const V n = S::mul(e, S::add(e, S::set1(2.f)));
  return S::mul(v, S::div(n, S::add(n, S::set1(2.f))));
}

// The activation of a kind known at compile time (epilogues dispatch once per tile).
template <Activation::Kind K, class S = Simd>
inline typename S::V activation_of(typename S::V v, const Activation& a) {
  using V = typename S::V;
  using A = Activation;
  if constexpr (K == A::none) {
    return v;
  } else if constexpr (K == A::relu) {
    return S::max(S::zero(), v);
  } else if constexpr (K == A::clip) {
    return S::min(S::set1(a.p1), S::max(S::set1(a.p0), v));
  } else if constexpr (K == A::leaky_relu) {
    return S::select_neg(v, S::mul(v, S::set1(a.p0)));
  } else if constexpr (K == A::hard_swish) {
    const V t = S::fma(v, S::set1(1.f / 6.f), S::set1(0.5f));
    return S::mul(v, S::min(S::set1(1.f), S::max(S::zero(), t)));
  } else if constexpr (K == A::sigmoid) {
    return sigmoid<S>(v);
  } else if constexpr (K == A::hard_sigmoid) {
    const V t = S::fma(v, S::set1(a.p0), S::set1(a.p1));
    return S::min(S::set1(1.f), S::max(S::zero(), t));
  } else if constexpr (K == A::tanh) {
    return tanh<S>(v);
  } else if constexpr (K == A::swish) {
    return swish<S>(v, a.p0);
  } else if constexpr (K == A::gelu) {
    return gelu<S>(v);
  } else if constexpr (K == A::gelu_tanh) {
    return gelu_tanh<S>(v);
  } else if constexpr (K == A::exp) {
    return exp<S>(v);
  } else if constexpr (K == A::log) {
    return log<S>(v);
  } else if constexpr (K == A::erf) {
    return erf<S>(v);
  } else if constexpr (K == A::sqrt) {
    return S::sqrt(v);
  } else if constexpr (K == A::reciprocal) {
    return S::div(S::set1(1.f), v);
  } else if constexpr (K == A::square) {
    return S::mul(v, v);
  } else if constexpr (K == A::softplus) {
    return softplus<S>(v);
  } else {
    static_assert(K == A::mish);
    return mish<S>(v);
  }
}

// Vectors of activation K to compute interleaved (Lanes, simd.h): only the longest chains gain,
// and only with AVX-512's 32 registers. Over 151K floats on the Xeon, one thread, ns an element
// (one vector after another, four at a time / 4 interleaved / 8 interleaved), the best of 12:
// GELU 1.10 / 1.01 / 0.84, its tanh form 0.90 / 0.87 / 0.63, tanh 0.61 / 0.64 / 0.55, softplus
// 1.72 / 1.33 / 1.11; not kept: erf 1.00 / 0.98 / 0.96, SiLU 0.43 / 0.54 / 0.48, mish 0.41 /
// 0.66 / 0.47, exp 0.34 / 0.33 / 0.37 (their chains the out-of-order window already overlaps,
// and interleaved they spill). With AVX2 (16 registers) GELU 1.72 / 2.35 / 1.70.
template <Activation::Kind K>
constexpr int kInterleave = ((K == Activation::gelu || K == Activation::gelu_tanh || K == Activation::tanh ||
                              K == Activation::softplus) &&
                             Simd::W == 16)
                                ? 8
                                : 1;

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
