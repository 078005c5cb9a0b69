// Reading a node's fused epilogue (the "activation" attributes, see
// core/compiler/fuse_conv_epilogue.h) into the fast path's Activation.
#pragma once

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/kernel.h"

namespace weave::fast {

[[nodiscard]] Expected<Activation> parse_epilogue(const KernelSetup& s);

}  // namespace weave::fast
