// SIMD vocabulary of the fast kernels, for one instruction set per translation unit. Only the
// ISA translation units include this (isa_avx2.cpp, isa_avx512.cpp); each defines
// WEAVE_FAST_ISA (2 or 512) and WEAVE_ISA_NS (its namespace) first, so the same template code
// compiles once per instruction set into distinct symbols and nothing built with AVX-512 can be
// picked by the linker for a caller on an AVX2 machine.
#pragma once

#include <immintrin.h>

#include <cstdint>

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
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static V round(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // a < 0 ? b : a
  static V select_neg(V a, V b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, zero(), _CMP_LT_OQ), a, b);
  }
  // 2^n for integral-valued n in [-126, 127]
  static V pow2i(V n) {
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
  }
  static float sum(V v) { return _mm512_reduce_add_ps(v); }
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
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
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

// e^x to about 2 ulp over the float range (range reduction by ln 2, degree-6 polynomial);
// clamps below -87.3 (to about 1e-38) and gives +inf above 88.4. NaN in, NaN out.
inline V exp(V x) {
  const V hi = Simd::set1(88.3762626647949f), lo = Simd::set1(-87.3365447504f);
  const V xc = Simd::max(lo, Simd::min(hi, x));  // operand order keeps NaN (min/max return the 2nd)
  const V n = Simd::round(Simd::mul(xc, Simd::set1(1.44269504088896341f)));
  V r = Simd::fma(n, Simd::set1(-0.693359375f), xc);
  r = Simd::fma(n, Simd::set1(2.12194440e-4f), r);
  V p = Simd::set1(1.9875691500e-4f);
  p = Simd::fma(p, r, Simd::set1(1.3981999507e-3f));
  p = Simd::fma(p, r, Simd::set1(8.3334519073e-3f));
  p = Simd::fma(p, r, Simd::set1(4.1665795894e-2f));
  p = Simd::fma(p, r, Simd::set1(1.6666665459e-1f));
  p = Simd::fma(p, r, Simd::set1(5.0000001201e-1f));
  p = Simd::fma(Simd::mul(p, r), r, Simd::add(r, Simd::set1(1.f)));
  return Simd::mul(p, Simd::pow2i(n));
}

}  // namespace weave::fast::WEAVE_ISA_NS
