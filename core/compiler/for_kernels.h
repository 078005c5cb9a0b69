// The rewrites a Factory makes for the kernels it is about to create, after the graph is
// compiled and before any kernel sees it: with a registry that has channels-last kernels (the
// fast CPU path), the layout pass (layout_nhwc.h) and the fusions whose kernels it registers
// (fuse_expand_depthwise.h, fold_channel_scale.h, fuse_residual_after_activation.h,
// fuse_conv_concat.h). With the reference registry, nothing. The graph's inputs and outputs
// never change; the rewritten graph is never stored in an artifact.
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"
#include "core/kernels/registry.h"

namespace weave::compiler {

[[nodiscard]] Status rewrite_for_kernels(Graph& g, const KernelRegistry& registry);

}  // namespace weave::compiler
