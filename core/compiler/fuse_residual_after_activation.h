// A residual added after a convolution's activation (a YOLO bottleneck's x + SiLU(conv(x)),
// C3 and C2f blocks): fuse_conv_epilogue takes an Add before the activation into the Conv (its
// residual input), not one after it, which stayed a pass of its own over the map (read two,
// write one). After the layout pass, an NHWC Conv with its activation fused, no residual, and
// its output read only by an Add of a value of the same dims takes that value as its residual,
// added after the activation (fused::kResidualLastAttr; the fast GEMM and Winograd epilogues).
// Ungrouped convolutions of two or more input channels only (the depthwise and grouped kernels
// add the residual before the activation). Runs when the registry has channels-last kernels.
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave::compiler {

[[nodiscard]] Status fuse_residual_after_activation(Graph& g);

}  // namespace weave::compiler
