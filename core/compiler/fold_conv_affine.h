// Folds a constant scale or shift applied to a convolution's output into its weights and bias:
//   Mul(conv(x, W) + B, s)  -> conv(x, W * s) + B * s
//   Div(conv(x, W) + B, s)  -> conv(x, W / s) + B / s
//   Add(conv(x, W) + B, c)  -> conv(x, W) + (B + c)          (Sub: B - c)
// for Conv and ConvTranspose, when s / c is a float32 param that is one number or one number
// per output channel (shape [M, 1, ..], [1, M, 1, ..] or [1]), the convolution's output feeds
// nothing else and is no graph output. Exporters emit such chains for learnable affine layers
// (PaddleOCR's PPLCNetV3 puts one after every convolution) and for a bias added after a
// ConvTranspose. Chains fold one after another; double arithmetic, float32 results.
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

[[nodiscard]] Status fold_conv_affine(Graph& g);

}  // namespace weave
