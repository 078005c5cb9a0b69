// Weight packing for the fast path's micro-kernel (see PackedLayout in fast_ops.h). Runs once
// when a Factory creates its kernels; the packed block is owned by the kernel and shared by
// every Executor of the Factory.
#pragma once

#include <cstdint>

#include "core/common/buffer.h"
#include "core/kernels/fast/fast_ops.h"

namespace weave::fast {

struct PackedWeights {
  SharedBytes data;  // may be swapped for equal bytes shared across factories (Kernel::visit_packed)
  PackedLayout layout;
  [[nodiscard]] const float* floats() const { return reinterpret_cast<const float*>(data.data()); }
};

// ONNX convolution weights [groups * Mg][Cg][KH][KW] into panels of `nr` columns (the last one
// rounded up to `vec`), per group: panel[tap][c][col] = w[g*Mg + col0 + col][c][tap].
[[nodiscard]] PackedWeights pack_conv(const float* w, int64_t groups, int64_t Mg, int64_t Cg, int64_t taps,
                                      int nr, int vec);

// A GEMM's B operand, K x N: B[k][n] = b[k * ldb + n], or b[n * ldb + k] when `trans`.
[[nodiscard]] PackedWeights pack_gemm_b(const float* b, int64_t K, int64_t N, int64_t ldb, bool trans, int nr,
                                        int vec);

// Depthwise weights [C][1][KH][KW] as [tap][c_pad] (c_pad = C rounded up to `vec`).
[[nodiscard]] SharedBytes pack_depthwise(const float* w, int64_t C, int64_t taps, int vec, int64_t& c_pad);
// Grouped weights of gw inputs and gw outputs per group, [C][gw][KH][KW], as [tap][i][c_pad]:
// row i holds, for every output channel c, its weight from input gw * (c / gw) + i.
[[nodiscard]] SharedBytes pack_grouped_narrow(const float* w, int64_t C, int64_t gw, int64_t taps, int vec,
                                              int64_t& c_pad);

// Winograd F(4x4, 3x3) weights: U = G g G^T per (output m, input c) of w [M][C][3][3], as 36
// GEMM B operands [C][M] (one per tile point, `layout.group_floats` apart). Computed in double.
[[nodiscard]] PackedWeights pack_winograd_f43(const float* w, int64_t M, int64_t C, int nr, int vec);

// dst = the panels of one group of K rows and N columns (pack_conv of a 1x1 convolution:
// row k is input channel k) with row k scaled by scale[k], padding columns too (0 x scale, NaN
// for an infinite scale: the micro-kernel never stores those columns).
void scale_packed_rows(const float* src, int64_t K, int64_t N, const PackedLayout& l, int vec,
                       const float* scale, float* dst);

// Packs into caller memory (the layout must come from gemm_b_layout); for operands that are
// only known at run time (MatMul of two activations).
[[nodiscard]] PackedLayout gemm_b_layout(int64_t K, int64_t N, int nr, int vec);
void pack_gemm_b_into(const float* b, int64_t K, int64_t N, int64_t ldb, bool trans, const PackedLayout& l,
                      int vec, float* out);

}  // namespace weave::fast
