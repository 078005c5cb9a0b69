// A plain GEMM on the fast path's micro-kernel: the rows of A are the "pixels" of a 1x1
// convolution over packed B. Shared by MatMul, Gemm and the LSTM's products.
#pragma once

#include "core/kernels/fast/fast_ops.h"

namespace weave::fast {

// rows x K times packed B (K x N) -> y (rows x N, ldy = N), with an optional bias / residual
// and activation (applied in that order, in the micro-kernel's epilogue).
inline void gemm_rows(const Ops& ops, const float* a, int64_t rows, int64_t K, const PackedLayout& layout,
                      const float* b, int64_t N, float* y, const float* bias, const float* residual,
                      const Parallel& par, const Activation& act = Activation{}) {
  ConvGemmArgs g;
  g.x = a;
  g.IW = rows;
  g.ldx = K;
  g.x_image = rows * K;
  g.y = y;
  g.OW = rows;
  g.ldy = N;
  g.y_image = rows * N;
  g.Cg = K;
  g.Mg = N;
  g.w = b;
  g.layout = layout;
  g.bias = bias;
  g.residual = residual;
  g.ldr = N;
  g.r_image = rows * N;
  g.act = act;
  ops.conv_gemm(g, par);
}

}  // namespace weave::fast
