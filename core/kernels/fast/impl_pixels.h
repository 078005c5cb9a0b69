// 8-bit pixels to float tensors (weaveconvert's last step, core/vision/preprocess.cpp), for one
// instruction set. ISA translation units only (see simd.h).
//
// A plain loop: compiled with the unit's -mavx2 / -mavx512* flags the compiler turns the stride-3
// loads into shuffles and the conversion into vector FMAs, where the portable path looks every
// value up in a table (docs/performance.md, "Pipeline overhead", has the figures).
#pragma once

#include <cstdint>

#include "core/kernels/fast/fast_ops.h"

namespace weave::fast::WEAVE_ISA_NS {

inline void pixels_to_planes(const std::uint8_t* __restrict src, int64_t n, float* __restrict p0,
                             float* __restrict p1, float* __restrict p2, const float* a, const float* b) {
  const float a0 = a[0], a1 = a[1], a2 = a[2], b0 = b[0], b1 = b[1], b2 = b[2];
  for (int64_t x = 0; x < n; ++x) {
    p0[x] = static_cast<float>(src[3 * x]) * a0 + b0;
    p1[x] = static_cast<float>(src[3 * x + 1]) * a1 + b1;
    p2[x] = static_cast<float>(src[3 * x + 2]) * a2 + b2;
  }
}

}  // namespace weave::fast::WEAVE_ISA_NS
