// ConvConcat (core/kernels/fused_ops.h): a channel Concat (NHWC axis 3) all of whose inputs come
// from channels-last, non-depthwise Convs used by it alone (with or without a residual: YOLOv5's
// C3 joins a bottleneck's x + conv(x) with a plain conv) becomes one node whose
// convolutions write straight into their channels of the joined tensor (the fast micro-kernels
// take an output pixel stride), so the Concat's copy of every branch goes away: SqueezeNet's
// fire modules, the join of Inception-style branches. Runs after the layout pass, when the
// registry has a ConvConcat kernel and takes each Conv channels-last. WEAVE_FUSE_CONV_CONCAT=0
// turns the pass off (for side-by-side measurements).
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"
#include "core/kernels/registry.h"

namespace weave::compiler {

[[nodiscard]] Status fuse_conv_concat(Graph& g, const KernelRegistry& registry);

}  // namespace weave::compiler
