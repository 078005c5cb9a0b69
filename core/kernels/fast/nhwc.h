// The fast path's channels-last kernels as the registry and the layout pass see them.
#pragma once

#include <span>

#include "core/graph/graph.h"
#include "core/kernels/kernel.h"

namespace weave {
class KernelRegistry;
}

namespace weave::fast {

// Static checks shared by the layout pass and the kernel factory, so the pass marks a Conv
// NHWC only when the fast kernel will take it (the reference Conv refuses NHWC nodes).
[[nodiscard]] bool conv_nhwc_supported(const Node& n, const Value* x, const Value* w, bool w_const,
                                       const Value* b, bool b_const);
[[nodiscard]] bool conv_transpose_nhwc_supported(const Node& n, const Value* x, const Value* w, bool w_const,
                                                 const Value* b, bool b_const);
[[nodiscard]] bool pool_nhwc_supported(const Node& n, const Value* x);
// An inference BatchNormalization of a 4-D float32 input with its four params constant.
[[nodiscard]] bool batch_norm_nhwc_supported(const Graph& g, const Node& n);
// Resize of the middle axes of a 4-D tensor with constant scales/sizes keeping the last axis.
[[nodiscard]] bool resize_nhwc_supported(const Graph& g, const Node& n);

// The registry's channels-last query (KernelRegistry::takes_nhwc) for these kernels.
[[nodiscard]] bool has_nhwc_kernel(const Graph& g, const Node& n);

// The fast Conv as ConvConcat drives it: it can write its output into a wider NHWC tensor.
class NhwcConvKernel : public Kernel {
 public:
  // False for the depthwise kernel, whose output pixels are always its channel count apart.
  [[nodiscard]] virtual bool can_run_into() const = 0;
  [[nodiscard]] virtual int64_t out_channels() const = 0;
  // run(), but the output goes to `y`, pixels `ldy` floats apart (ctx.outputs is not read).
  virtual void run_into(const RunContext& ctx, float* y, int64_t ldy) const = 0;
};

// The Kernel it makes is an NhwcConvKernel (or null when it declines the node). It also makes
// ScaledConv's (core/kernels/fused_ops.h, core/compiler/fold_channel_scale.h): each image's GEMM
// runs over the packed weights scaled by that image's s (in the node's workspace).
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_conv(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_conv_transpose(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_pool(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_batch_norm(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_resize(const KernelSetup& s);
// ExpandDepthwise and ConvConcat (core/kernels/fused_ops.h): the fused nodes the compiler makes
// for these kernels (core/compiler/fuse_expand_depthwise.h, fuse_conv_concat.h).
//
// ExpandDepthwise runs the pair as one node: each thread works on a band of output rows and
// keeps only the expanded input rows its next depthwise rows read (a few rows, in its slice of
// the node's workspace), so the expanded tensor never leaves the cache and the pair costs one
// fork-join instead of two. Bands split the rows by the threads the parallel gives (at most
// min(cores, 8)); neighbouring bands expand the rows their windows share once each (kernel
// height minus stride rows per band boundary).
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_expand_depthwise(const KernelSetup& s);

// ConvConcat runs its convolutions one after the other, each split over the threads as alone,
// each writing into its channels of the joined tensor (NhwcConvKernel::run_into).
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_conv_concat(const KernelSetup& s);

// Layout-free fast kernels (any tensor the reference kernel would take).
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_matmul(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_gemm(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_softmax(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_gather(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_lstm(const KernelSetup& s);
// Elementwise unary math (unary_fast.cpp) for the ops fast_unary_ops() names; declines dtypes
// other than float32, Clip bounds and Pow exponents that are not constants it knows.
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_unary(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_layer_norm(const KernelSetup& s);
[[nodiscard]] std::span<const char* const> fast_unary_ops();

// Registers every fast kernel (priority above the reference ones, impl "fast") and their
// channels-last query; does nothing when the CPU has no fast path.
void register_fast_kernels(KernelRegistry& r);

}  // namespace weave::fast
