// Recognizes layer normalization written out with elementary ops (PyTorch's exports before
// opset 17, TensorFlow's) and replaces it by one LayerNormalization node:
//   m = ReduceMean(x, trailing axes); d = x - m
//   y = d / Sqrt(ReduceMean(d^2, same axes) + eps)      (d^2 as Pow(d, 2) or d * d)
//   [y * scale] [+ bias]                                 (constants over the normalized axes)
// The axes must be x's last ones, both ReduceMeans keep dims, and scale and bias must vary along
// the normalized axes only. One node is two passes over a row instead of eight, and the fast
// path runs it vectorized (core/kernels/fast/norm_fast.cpp).
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

[[nodiscard]] Status fuse_layer_norm(Graph& g);

}  // namespace weave
