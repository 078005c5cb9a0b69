// What the reference normalizations share (batch_normalization.cpp, layer_normalization.cpp,
// instance_normalization.cpp, lrn.cpp): moments of a row, the [N, C, rest] view of an input and
// the check of per-channel parameters.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/kernels/kernel_util.h"

namespace weave::kern {

// Mean and 1/sqrt(var + eps) of n values (two passes: accurate for large means).
inline void moments(const float* x, int64_t n, float eps, float& mean, float& inv_std) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  const double m = n > 0 ? s / static_cast<double>(n) : 0.0;
  double v = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i] - m;
    v += d * d;
  }
  v = n > 0 ? v / static_cast<double>(n) : 0.0;
  mean = static_cast<float>(m);
  inv_std = static_cast<float>(1.0 / std::sqrt(v + eps));
}

// [N, C, ...] as batch, channels and the product of the rest.
struct NcPlane {
  int64_t n, c, plane;
};
inline NcPlane nc_plane(const Dims& d) {
  return {d[0], d[1], shape_numel(d.span().subspan(2))};
}

// Inputs 1..last must be [C] for input 0 = [N, C, ...]; output 0 has the input's shape.
inline Status per_channel_infer(ShapeContext& ctx, std::size_t last) {
  const Dims& x = ctx.inputs[0].dims;
  for (std::size_t i = 1; i <= last; ++i) {
    const Dims& p = ctx.inputs[i].dims;
    if (p.rank() != 1 || p[0] != x[1])
      return make_error(ctx.label, ": input ", i, " ", kern::dims_bracketed(p), " does not match the ", x[1],
                        " channels of input ", kern::dims_bracketed(x));
  }
  ctx.outputs[0].dtype = DType::float32;
  ctx.outputs[0].dims = x;
  ctx.workspace = 0;
  return {};
}

}  // namespace weave::kern
