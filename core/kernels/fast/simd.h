// SIMD vocabulary of the fast kernels, for one instruction set per translation unit. Only the
// ISA translation units include this (isa_avx2.cpp, isa_avx512.cpp); each defines
// WEAVE_FAST_ISA (2 or 512) and WEAVE_ISA_NS (its namespace) first, so the same template code
// compiles once per instruction set into distinct symbols and nothing built with AVX-512 can be
// picked by the linker for a caller on an AVX2 machine.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

// exp's rounding by a shifter, and min/max keeping NaN by operand order, need IEEE arithmetic as
// written: -ffast-math may fold (a + s) - s or reorder min/max.
#ifdef __FAST_MATH__
#error "the fast kernels must not be built with -ffast-math"
#endif

#if !defined(WEAVE_FAST_ISA) || !defined(WEAVE_ISA_NS)
#error "define WEAVE_FAST_ISA and WEAVE_ISA_NS before including simd.h"
#endif

namespace weave::fast::WEAVE_ISA_NS {

#if WEAVE_FAST_ISA == 512
struct Simd {
  using V = __m512;
  using Mask = __mmask16;
  static constexpr int W = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float v) { return _mm512_set1_ps(v); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static Mask mask(int64_t n) { return n >= W ? Mask(0xffff) : Mask((1u << n) - 1u); }
  static V load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, V v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fnma(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a * b
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static V sqrt(V a) { return _mm512_sqrt_ps(a); }
  static V abs(V a) { return _mm512_andnot_ps(set1(-0.f), a); }
  static V scalef(V a, V n) { return _mm512_scalef_ps(a, n); }  // a * 2^floor(n)
  // Lane i of the result is lane idx[i] of v (idx: W int32).
  static V permute(V v, const int32_t* idx) { return _mm512_permutexvar_ps(_mm512_loadu_si512(idx), v); }
  // Lane j of the result: lane 4 * (j / 4) + ((Imm >> 2 * (j % 4)) & 3) of v, a shuffle inside each
  // 128-bit lane (one cheap instruction; permute crosses lanes).
  template <int Imm>
  static V shuffle_in_lane(V v) {
    return _mm512_permute_ps(v, Imm);
  }
  // Lane i of the result: a[idx[i]] for idx[i] < W, else b[idx[i] - W].
  static V permute2(V a, V b, const int32_t* idx) {
    return _mm512_permutex2var_ps(a, _mm512_loadu_si512(idx), b);
  }
  static V sign(V a) { return _mm512_and_ps(set1(-0.f), a); }  // the sign bit alone
  static V bit_or(V a, V b) { return _mm512_or_ps(a, b); }
  // a < b ? t : f (false for NaN)
  static V select_lt(V a, V b, V t, V f) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), f, t);
  }
  // a == b ? t : f
  static V select_eq(V a, V b, V t, V f) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), f, t);
  }
  // x = m * 2^e with m in [0.5, 1) for positive normal x: m, and e as a float.
  static V frexp_mant(V x) { return _mm512_getmant_ps(x, _MM_MANT_NORM_p5_1, _MM_MANT_SIGN_src); }
  static V frexp_exp(V x) { return _mm512_add_ps(_mm512_getexp_ps(x), set1(1.f)); }
  // a < 0 ? b : a
  static V select_neg(V a, V b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, zero(), _CMP_LT_OQ), a, b);
  }
  // 2^n for integral-valued n in [-126, 127]
  static V pow2i(V n) {
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
  }
  static float sum(V v) {
    // By hand: GCC 12's _mm512_reduce_add_ps trips -Wmaybe-uninitialized (_mm256_undefined_pd).
    const __m256 h =
        _mm256_add_ps(_mm512_castps512_ps256(v),
                      _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, _mm512_castps_pd(v), 1)));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};
#else
struct Simd {
  using V = __m256;
  using Mask = __m256i;
  static constexpr int W = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float v) { return _mm256_set1_ps(v); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static Mask mask(int64_t n) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n < W ? n : W)), lanes);
  }
  static V load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, V v, Mask m) { _mm256_maskstore_ps(p, m, v); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V fnma(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V sqrt(V a) { return _mm256_sqrt_ps(a); }
  static V abs(V a) { return _mm256_andnot_ps(set1(-0.f), a); }
  static V permute(V v, const int32_t* idx) {
    return _mm256_permutevar8x32_ps(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx)));
  }
  template <int Imm>
  static V shuffle_in_lane(V v) {
    return _mm256_permute_ps(v, Imm);
  }
  // Lane i of the result: a[idx[i]] for idx[i] < W, else b[idx[i] - W] (both permuted by the low
  // three bits, then blended on bit 3 moved into the sign).
  static V permute2(V a, V b, const int32_t* idx) {
    const __m256i i = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx));
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(a, i), _mm256_permutevar8x32_ps(b, i),
                            _mm256_castsi256_ps(_mm256_slli_epi32(i, 28)));
  }
  static V sign(V a) { return _mm256_and_ps(set1(-0.f), a); }
  static V bit_or(V a, V b) { return _mm256_or_ps(a, b); }
  static V select_lt(V a, V b, V t, V f) { return _mm256_blendv_ps(f, t, _mm256_cmp_ps(a, b, _CMP_LT_OQ)); }
  static V select_eq(V a, V b, V t, V f) { return _mm256_blendv_ps(f, t, _mm256_cmp_ps(a, b, _CMP_EQ_OQ)); }
  static V frexp_mant(V x) {
    const __m256i i = _mm256_castps_si256(x);
    return _mm256_castsi256_ps(
        _mm256_or_si256(_mm256_and_si256(i, _mm256_set1_epi32(0x807fffff)), _mm256_set1_epi32(0x3f000000)));
  }
  static V frexp_exp(V x) {
    const __m256i e = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
    return _mm256_cvtepi32_ps(
        _mm256_sub_epi32(_mm256_and_si256(e, _mm256_set1_epi32(0xff)), _mm256_set1_epi32(126)));
  }
  static V select_neg(V a, V b) { return _mm256_blendv_ps(a, b, _mm256_cmp_ps(a, zero(), _CMP_LT_OQ)); }
  static V pow2i(V n) {
    return _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
  }
  static float sum(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};
#endif

using V = Simd::V;

// N vectors as one value, each operation applied to all N in turn. The activations below are
// written once over a policy S (Simd, or Lanes<N>); over Lanes<N> they run N independent chains
// interleaved instruction by instruction. GCC does not reorder x86 code across such chains, and
// one vector's chain (GELU's: a division, 10 and 7 FMAs of polynomials, about 90 cycles of
// latency) is longer than the out-of-order window covers: GELU over 151K floats on the Xeon, 4
// vectors one after another 154 us, 8 interleaved 95 us (one thread, the same process). Only
// long chains gain: see kInterleave in impl_epilogue.h.
template <int N>
struct Lanes {
  struct V {
    Simd::V v[N];
  };
  static constexpr int W = Simd::W;

#define WEAVE_LANES(signature, expr)                                    \
  __attribute__((always_inline)) static V signature {                   \
    V r;                                                                \
    _Pragma("GCC unroll 16") for (int j = 0; j < N; ++j) r.v[j] = expr; \
    return r;                                                           \
  }
  WEAVE_LANES(zero(), Simd::zero())
  WEAVE_LANES(set1(float x), Simd::set1(x))
  WEAVE_LANES(fma(V a, V b, V c), Simd::fma(a.v[j], b.v[j], c.v[j]))
  WEAVE_LANES(fnma(V a, V b, V c), Simd::fnma(a.v[j], b.v[j], c.v[j]))
  WEAVE_LANES(add(V a, V b), Simd::add(a.v[j], b.v[j]))
  WEAVE_LANES(sub(V a, V b), Simd::sub(a.v[j], b.v[j]))
  WEAVE_LANES(mul(V a, V b), Simd::mul(a.v[j], b.v[j]))
  WEAVE_LANES(div(V a, V b), Simd::div(a.v[j], b.v[j]))
  WEAVE_LANES(max(V a, V b), Simd::max(a.v[j], b.v[j]))
  WEAVE_LANES(min(V a, V b), Simd::min(a.v[j], b.v[j]))
  WEAVE_LANES(sqrt(V a), Simd::sqrt(a.v[j]))
  WEAVE_LANES(abs(V a), Simd::abs(a.v[j]))
  WEAVE_LANES(sign(V a), Simd::sign(a.v[j]))
  WEAVE_LANES(bit_or(V a, V b), Simd::bit_or(a.v[j], b.v[j]))
  WEAVE_LANES(select_lt(V a, V b, V t, V f), Simd::select_lt(a.v[j], b.v[j], t.v[j], f.v[j]))
  WEAVE_LANES(select_eq(V a, V b, V t, V f), Simd::select_eq(a.v[j], b.v[j], t.v[j], f.v[j]))
  WEAVE_LANES(select_neg(V a, V b), Simd::select_neg(a.v[j], b.v[j]))
  WEAVE_LANES(frexp_mant(V a), Simd::frexp_mant(a.v[j]))
  WEAVE_LANES(frexp_exp(V a), Simd::frexp_exp(a.v[j]))
  WEAVE_LANES(pow2i(V a), Simd::pow2i(a.v[j]))
#if WEAVE_FAST_ISA == 512
  WEAVE_LANES(scalef(V a, V n), Simd::scalef(a.v[j], n.v[j]))
#endif
#undef WEAVE_LANES
};

// c0 x^n + c1 x^(n-1) + ... + cn by Horner's rule (one FMA a coefficient).
template <class S, class... C>
__attribute__((always_inline)) inline typename S::V horner(typename S::V x, float c0, C... c) {
  typename S::V p = S::set1(c0);
  ((p = S::fma(p, x, S::set1(c))), ...);
  return p;
}

// e^x to about 2 ulp over the float range (range reduction by ln 2, degree-6 polynomial). NaN
// in, NaN out. Inline always: the activations' loops (SiLU, GELU, sigmoid) call it per vector,
// and out of line it cost them a call and their constants reloaded each time.
//
// n = round(x / ln 2) by adding and subtracting 1.5 * 2^23 (one FMA and a subtraction, where a
// multiply and a rounding instruction were three operations, two of them on one port), and the
// polynomial in Estrin's form (three FMAs side by side, then two, instead of a chain of six): SiLU's chain is
// about 90 cycles long and the out-of-order window holds only so many of them. SiLU over 4096
// floats on the Xeon: 6.5-6.9 -> 6.0 ns a vector.
//
// AVX-512 scales by 2^n with vscalefps, which gives the subnormals and +inf itself; the input is
// clamped only to keep n finite. AVX2 builds 2^n from the exponent bits: it clamps below -87.3
// (to about 1e-38) and gives +inf above 88.38 (where e^x passes 2^127.5; it overflows float at
// 88.72).
template <class S = Simd>
__attribute__((always_inline)) inline typename S::V exp(typename S::V x) {
  using V = typename S::V;
#if WEAVE_FAST_ISA == 512
  const V hi = S::set1(89.f), lo = S::set1(-104.f);
#else
  const V hi = S::set1(88.3762626647949f), lo = S::set1(-87.3365447504f);
#endif
  const V xc = S::max(lo, S::min(hi, x));  // operand order keeps NaN (min/max return the 2nd)
  // 1.5 * 2^23: its sum with |v| < 2^22 rounds v to an integer, to nearest in the default rounding
  // mode (a host that changes MXCSR's would widen r to ln 2 and the error to about 9e-7)
  const V shifter = S::set1(12582912.f);
  const V n = S::sub(S::fma(xc, S::set1(1.44269504088896341f), shifter), shifter);
  V r = S::fma(n, S::set1(-0.693359375f), xc);
  r = S::fma(n, S::set1(2.12194440e-4f), r);
  // e^r = 1 + r + r^2 (c0 r^5 + c1 r^4 + ... + c5)
  const V r2 = S::mul(r, r);
  V p;
  if constexpr (std::is_same_v<S, Simd>) {
    const V hi_terms = S::fma(S::set1(1.9875691500e-4f), r, S::set1(1.3981999507e-3f));
    const V mid_terms = S::fma(S::set1(8.3334519073e-3f), r, S::set1(4.1665795894e-2f));
    const V lo_terms = S::fma(S::set1(1.6666665459e-1f), r, S::set1(5.0000001201e-1f));
    p = S::fma(S::fma(hi_terms, r2, mid_terms), r2, lo_terms);
  } else {  // interleaved vectors (Lanes) overlap their chains already; Estrin's temporaries spill
    p = horner<S>(r, 1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f,
                  5.0000001201e-1f);
  }
  const V e = S::fma(p, r2, S::add(r, S::set1(1.f)));
#if WEAVE_FAST_ISA == 512
  return S::scalef(e, n);
#else
  return S::select_lt(hi, x, S::set1(__builtin_inff()), S::mul(e, S::pow2i(n)));
#endif
}

// ln x to a few ulp for positive x (split into mantissa and exponent, degree-8 polynomial on
// the mantissa near 1; subnormals scaled by 2^23 first); 0 gives -inf, negative values and NaN
// give NaN, +inf gives +inf.
template <class S = Simd>
inline typename S::V log(typename S::V x) {
  using V = typename S::V;
  const V one = S::set1(1.f);
  const V tiny = S::set1(1.17549435e-38f);  // the least normal float
  const V xs = S::select_lt(x, tiny, S::mul(x, S::set1(8388608.f)), x);
  V e = S::sub(S::frexp_exp(xs), S::select_lt(x, tiny, S::set1(23.f), S::zero()));
  V m = S::frexp_mant(xs);
  // m in [sqrt(1/2), sqrt(2)): keeps the polynomial's argument in [-0.29, 0.41]
  const V small = S::select_lt(m, S::set1(0.707106781186547524f), one, S::zero());
  e = S::sub(e, small);
  m = S::sub(S::add(m, S::mul(m, small)), one);
  const V z = S::mul(m, m);
  V p = horner<S>(m, 7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f,
                  1.4249322787e-1f, -1.6668057665e-1f, 2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f);
  V y = S::mul(S::mul(p, m), z);
  y = S::fma(e, S::set1(-2.12194440e-4f), y);
  y = S::fma(z, S::set1(-0.5f), y);
  y = S::add(m, y);
  y = S::fma(e, S::set1(0.693359375f), y);
  const V inf = S::set1(__builtin_inff());
  y = S::select_eq(x, S::zero(), S::set1(-__builtin_inff()), y);  // +0 and -0
  y = S::select_lt(x, S::zero(), S::set1(__builtin_nanf("")), y);
  y = S::select_eq(x, inf, inf, y);
  return S::select_eq(x, x, y, x);  // NaN in, NaN out
}

}  // namespace weave::fast::WEAVE_ISA_NS
