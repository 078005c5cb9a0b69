// ScaledConv (core/kernels/fused_ops.h): a squeeze-and-excitation block ends in x * s, a
// per-channel scale s computed from x at run time, read only by a 1x1 projection. The product
// is a full pass over the block's widest tensor (efficientnet_b0's 112x112x32: 1.6 MB read and
// written); folded into the projection, the kernel scales its packed weights by s instead
// (W diag(s) x = W (s * x)), M x C multiplies against H x W x C. Folded only where that is
// far fewer: static maps of at least 16 x M pixels (the scaling runs on one thread). Runs after
// the layout pass, when the registry has a ScaledConv kernel.
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"
#include "core/kernels/registry.h"

namespace weave::compiler {

[[nodiscard]] Status fold_channel_scale(Graph& g, const KernelRegistry& registry);

}  // namespace weave::compiler
