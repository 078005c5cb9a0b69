// Size: the element count of its input as an int64 scalar.
#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::has_input;
using kern::make_kernel;

using Factory = Expected<std::unique_ptr<Kernel>>;

class SizeKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0)) return make_error(ctx.label, ": input 0 is missing");
    ctx.outputs[0].dtype = DType::int64;
    ctx.outputs[0].dims = Dims{};
    return {};
  }
  void run(const RunContext& ctx) const override { *ctx.outputs[0].as<int64_t>() = ctx.inputs[0].numel(); }
};

}  // namespace

void register_size(KernelRegistry& r) {
  r.add("Size", [](const KernelSetup&) -> Factory { return make_kernel<SizeKernel>(); });
}

}  // namespace weave
