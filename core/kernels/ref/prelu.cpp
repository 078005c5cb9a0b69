// PRelu, float32: the slope broadcast to X.
#include "core/kernels/ref/elementwise.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::broadcast_binary;
using kern::make_kernel;

class PReluKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() != 2 || !in[0].present() || !in[1].present())
      return make_error(ctx.label, ": expects 2 inputs (X, slope)");
    if (in[0].dtype != DType::float32 || in[1].dtype != DType::float32)
      return make_error(ctx.label, ": only float32 is supported");
    Dims od;
    if (!kern::broadcast_dims(in[0].dims, in[1].dims, od) || !(od == in[0].dims))
      return make_error(ctx.label, ": slope shape ", kern::dims_str(in[1].dims),
                        " does not broadcast to X shape ", kern::dims_str(in[0].dims));
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = in[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    broadcast_binary(
        in[0].as<float>(), in[0].dims, in[1].as<float>(), in[1].dims, ctx.outputs[0].as<float>(),
        ctx.outputs[0].dims, [](float x, float s) { return x < 0.f ? x * s : x; }, ctx.parallel);
  }
};

}  // namespace

void register_prelu(KernelRegistry& r) {
  r.add("PRelu", [](const KernelSetup&) { return make_kernel<PReluKernel>(); });
}

}  // namespace weave
