// Identity: a copy of its input.
#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;

class CopyKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.empty() || !ctx.inputs[0].present()) return make_error(ctx.label, ": input 0 is missing");
    if (dtype_size(ctx.inputs[0].dtype) == 0)
      return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    kern::copy_bytes(ctx.outputs[0].data, ctx.inputs[0].data, ctx.outputs[0].bytes());
  }
};

Expected<std::unique_ptr<Kernel>> make_identity(const KernelSetup&) {
  return make_kernel<CopyKernel>();
}

}  // namespace

void register_identity(KernelRegistry& r) {
  r.add("Identity", &make_identity);
}

}  // namespace weave
