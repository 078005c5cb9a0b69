// The loop of bench_fma_peak for one instruction set. bench/meson.build compiles this file twice,
// into two translation units with their own flags (never -march=native): with -mavx2 -mfma it
// defines fma_loop_avx2(), with -mavx512f fma_loop_avx512(). bench/fma_peak.cpp, built for the
// baseline x86-64, calls one only when the CPU has that instruction set.
//
// Each chain computes c = c * a + b. With a just below 1 every chain converges to b / (1 - a):
// no overflow, no denormals, so the FMA units run at full rate. Independent accumulators in
// registers hide the FMA latency: latency x pipes (4 x 2 on current x86 cores) chains are needed;
// we keep more so that no core's latency hides behind a dependency.
#include <immintrin.h>

#include "bench/fma_peak.h"

namespace weave::bench {
namespace {

#if defined(__AVX512F__)
using V = __m512;
constexpr int kLanes = 16;
constexpr int kChains = 24;  // of the 32 zmm registers
V set1(float x) {
  return _mm512_set1_ps(x);
}
V fma(V a, V b, V c) {
  return _mm512_fmadd_ps(a, b, c);
}
void store(float* p, V v) {
  _mm512_store_ps(p, v);
}
constexpr const char* kIsa = "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
using V = __m256;
constexpr int kLanes = 8;
constexpr int kChains = 12;  // of the 16 ymm registers
V set1(float x) {
  return _mm256_set1_ps(x);
}
V fma(V a, V b, V c) {
  return _mm256_fmadd_ps(a, b, c);
}
void store(float* p, V v) {
  _mm256_store_ps(p, v);
}
constexpr const char* kIsa = "avx2";
#else
#error "bench/fma_isa.cpp is built with -mavx2 -mfma or with -mavx512f (bench/meson.build)"
#endif

float run(int64_t iters) {
  const V a = set1(0.99999f);
  const V b = set1(1e-5f);
  V c[kChains];
#pragma GCC unroll 32
  for (int k = 0; k < kChains; ++k) c[k] = set1(static_cast<float>(k));
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 32
    for (int k = 0; k < kChains; ++k) c[k] = fma(c[k], a, b);
  }
  // The sum keeps every chain alive, so the compiler cannot drop any of them.
  float s = 0;
  alignas(sizeof(V)) float lanes[kLanes];
  for (int k = 0; k < kChains; ++k) {
    store(lanes, c[k]);
    for (float x : lanes) s += x;
  }
  return s;
}

}  // namespace

#if defined(__AVX512F__)
FmaLoop fma_loop_avx512() {
#else
FmaLoop fma_loop_avx2() {
#endif
  return {kIsa, kLanes, kChains, &run};
}

}  // namespace weave::bench
