// ExpandDepthwise (core/kernels/fused_ops.h): a 1x1 expansion Conv (stride 1, unpadded,
// ungrouped, constant weights, any fused activation, no residual) whose output feeds only a
// depthwise Conv (constant weights, no residual), both channels-last, becomes one node. The
// expansion multiplies the channels (6x in MobileNet-v2, whose 16->96 expansion at 112x112
// writes 4.8 MB): unfused, that tensor goes to memory and the depthwise convolution reads it
// back, the largest memory traffic of the model; the fused kernel keeps only the rows its next
// depthwise rows read (core/kernels/fast/expand_depthwise.cpp). Only pairs where fusing was
// measured to pay are fused (a large expanded tensor, enough output rows). Runs after the layout
// pass, when the registry has an ExpandDepthwise kernel. WEAVE_FUSE_EXPAND_DEPTHWISE=0 turns the
// pass off (for side-by-side measurements), =all fuses every matching pair (the tests' edges).
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"
#include "core/kernels/registry.h"

namespace weave::compiler {

[[nodiscard]] Status fuse_expand_depthwise(Graph& g, const KernelRegistry& registry);

}  // namespace weave::compiler
