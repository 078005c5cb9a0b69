// Expand: numpy broadcasting of the input to a shape.
#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::known_ints;
using kern::make_kernel;
using kern::need_input;

using Factory = Expected<std::unique_ptr<Kernel>>;

class ExpandKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // shape
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    if (!has_input(ctx.inputs, 1)) return make_error(ctx.label, ": Expand needs the shape input");
    auto shape = known_ints(ctx, 1, "shape", "Expand");
    if (!shape) return shape.error();
    auto sd = kern::to_dims(*shape, ctx.label);
    if (!sd) return sd.error();
    Dims out;
    if (!kern::broadcast_dims(ctx.inputs[0].dims, *sd, out))
      return make_error(ctx.label, ": incompatible broadcast shapes ", dims_str(ctx.inputs[0].dims), " and ",
                        dims_str(*sd));
    if (!kern::size_ok(out.span()))
      return make_error(ctx.label, ": Expand output ", dims_str(out), " is too large");
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    if (out.numel() == 0) return;
    const kern::Plan p = kern::broadcast_plan(out.dims, {&ctx.inputs[0].dims});
    kern::strided_copy(p, static_cast<const std::byte*>(ctx.inputs[0].data), 0,
                       static_cast<std::byte*>(out.data), dtype_size(out.dtype), out.numel(), ctx.parallel);
  }
};

}  // namespace

void register_expand(KernelRegistry& r) {
  r.add("Expand", [](const KernelSetup&) -> Factory { return make_kernel<ExpandKernel>(); });
}

}  // namespace weave
