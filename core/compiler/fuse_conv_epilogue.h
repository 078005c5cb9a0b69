// Moves the elementwise work that follows a convolution into the convolution itself, so the
// output is written once, already finished:
//   Add(conv(x), r)                 -> Conv with a 4th input r (the residual, added after the
//                                      bias; ResNet and MobileNet-v2 blocks)
//   act(conv(x) [+ r])              -> Conv attribute "activation" (Relu, Clip with constant
//                                      bounds, LeakyRelu, HardSwish, Sigmoid, HardSigmoid, Tanh,
//                                      Swish, Gelu)
//   act(...) * s + t                -> "activation_post_mul" / "activation_post_add" (scalar s,
//                                      t: PPLCNetV3's learnable affine after each activation)
//   MatMul(x, W) + b                -> MatMul with a 3rd input b (W a constant [K, N], b per
//                                      column: a transformer's linear layers), then act(...)
//                                      as for a convolution (an MLP's GELU)
// ConvTranspose takes the activation only, and so does an inference BatchNormalization that no
// convolution absorbed (DenseNet's BN -> ReLU after each Concat: one pass over memory, not two).
// Each step needs the conv's output to feed nothing else and be no graph output; a residual must
// have the conv output's rank and, dim by dim, the same static size or both dynamic (no
// broadcasting). The fused node takes the place of the last node it absorbs, so every input it
// reads is computed before it.
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

[[nodiscard]] Status fuse_conv_epilogue(Graph& g);

}  // namespace weave
