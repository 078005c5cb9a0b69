#include "core/compiler/for_kernels.h"

#include "core/compiler/fold_channel_scale.h"
#include "core/compiler/fuse_conv_concat.h"
#include "core/compiler/fuse_expand_depthwise.h"
#include "core/compiler/fuse_residual_after_activation.h"
#include "core/compiler/layout_nhwc.h"

namespace weave::compiler {

Status rewrite_for_kernels(Graph& g, const KernelRegistry& registry) {
  if (!registry.has_channels_last_kernels()) return {};
  WEAVE_TRY(layout_nhwc(g, registry));
  WEAVE_TRY(fuse_expand_depthwise(g, registry));
  WEAVE_TRY(fold_channel_scale(g, registry));
  WEAVE_TRY(fuse_residual_after_activation(g));
  return fuse_conv_concat(g, registry);
}

}  // namespace weave::compiler
