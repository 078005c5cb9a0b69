// The fast path's channels-last kernels as the registry and the layout pass see them.
#pragma once

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
// Resize of the middle axes of a 4-D tensor with constant scales/sizes keeping the last axis.
[[nodiscard]] bool resize_nhwc_supported(const Graph& g, const Node& n);

// NhwcKernelQuery of the layout pass (core/compiler/layout_nhwc.h) for these kernels.
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

// The Kernel it makes is an NhwcConvKernel (or null when it declines the node).
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_conv(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_conv_transpose(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_pool(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_resize(const KernelSetup& s);
// ExpandDepthwise: a 1x1 expansion Conv (stride 1, unpadded, ungrouped, constant weights, any
// fused activation, no residual) whose output feeds only a depthwise Conv (constant weights, no
// residual), both NHWC, run as one node. The expansion multiplies the channels (6x in
// MobileNet-v2, whose 16->96 expansion at 112x112 writes 4.8 MB): unfused, that tensor goes to
// memory and the depthwise convolution reads it back, the largest memory traffic of the model.
// Fused, each thread works on a band of output rows and keeps only the expanded input rows its
// next depthwise rows read (a few rows, in its slice of the node's workspace), so the expanded
// tensor never leaves the cache and the pair costs one fork-join instead of two. Bands split the
// rows by the threads the parallel gives (at most min(cores, 8)); neighbouring bands expand the
// rows their windows share once each (kernel height minus stride rows per band boundary).
// Inputs: x, expansion weights, expansion bias (or none), depthwise weights, depthwise bias (or
// none); attributes: the depthwise Conv's, plus the expansion's activation* attributes under
// "expand_activation*". Made by fuse_expand_depthwise, after the layout pass; never stored in an
// artifact (the pass runs when a Factory is made with the fast registry).
// Only pairs where fusing was measured to pay are fused (a large expanded tensor, enough output
// rows; expand_depthwise.cpp). WEAVE_FUSE_EXPAND_DEPTHWISE=0 turns the pass off (for
// side-by-side measurements), =all fuses every matching pair (the tests' edge shapes).
[[nodiscard]] Status fuse_expand_depthwise(Graph& g);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_expand_depthwise(const KernelSetup& s);

// ConvConcat: a channel Concat (NHWC axis 3) all of whose inputs come from fast, non-depthwise
// NHWC Convs (no residual) used by it alone, run as one node whose convolutions write straight
// into their channels of the joined tensor (the micro-kernels take an output pixel stride), so
// the Concat's copy of every branch goes away: SqueezeNet's fire modules, the join of
// Inception-style branches. The convolutions run one after the other, each split over the
// threads as alone. Inputs: x, weights, bias (or none) per conv; attributes: "convs" (their
// count) and each conv's attributes under "conv<i>_". Made by fuse_conv_concat after the layout
// pass; never stored in an artifact. WEAVE_FUSE_CONV_CONCAT=0 turns the pass off (for
// side-by-side measurements).
[[nodiscard]] Status fuse_conv_concat(Graph& g);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_conv_concat(const KernelSetup& s);

// Layout-free fast kernels (any tensor the reference kernel would take).
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_matmul(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_gemm(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_softmax(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_lstm(const KernelSetup& s);

// Registers every fast kernel (priority above the reference ones, impl "fast") and the graph
// pass that lays activations out for them; does nothing when the CPU has no fast path.
void register_fast_kernels(KernelRegistry& r);

}  // namespace weave::fast
