// Recognizes hard-swish written out with elementary ops and replaces it by one HardSwish node:
//   x * Clip(x + 3, 0, 6) / 6     (Div by 6 or Mul by 1/6, in any operand order)
//   x * (Clip(x + 3, 0, 6) / 6)
//   x * HardSigmoid(x, alpha = 1/6, beta = 0.5)
// Exporters from frameworks without the ONNX op emit these (PaddleOCR's models have one per
// block); as one node it is one pass over memory and can join a convolution's epilogue. Every
// intermediate must feed only the pattern and be no graph output.
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

[[nodiscard]] Status fuse_hardswish(Graph& g);

}  // namespace weave
