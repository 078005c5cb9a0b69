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

[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_conv(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_conv_transpose(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_pool(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_resize(const KernelSetup& s);
// Layout-free fast kernels (any tensor the reference kernel would take).
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_matmul(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_gemm(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_softmax(const KernelSetup& s);
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_fast_lstm(const KernelSetup& s);

// Registers every fast kernel (priority above the reference ones, impl "fast") and the graph
// pass that lays activations out for them; does nothing when the CPU has no fast path.
void register_fast_kernels(KernelRegistry& r);

}  // namespace weave::fast
