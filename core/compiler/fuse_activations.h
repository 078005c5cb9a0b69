// Recognizes activations that exporters write out with elementary ops and replaces each by one
// node, which the fast path runs in one pass over memory and which can then join a
// convolution's epilogue (fuse_conv_epilogue.h):
//   x * Sigmoid(x)                                  -> Swish(x)   (SiLU: YOLO, EfficientNet)
//   x * 0.5 * (1 + Erf(x / sqrt 2))                 -> Gelu(x)    (BERT, ViT, ConvNeXt as exported)
//   x * 0.5 * (1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3)))  -> Gelu(x, approximate = "tanh")
// Products match in any operand order and grouping (the 0.5 may multiply x, the bracket or the
// product; x / sqrt 2 may be x * (1 / sqrt 2); x^3 may be Pow(x, 3) or x * x * x). Swish is
// ONNX's operator of opset 24 (alpha = 1), Gelu opset 20's.
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

[[nodiscard]] Status fuse_activations(Graph& g);

}  // namespace weave
