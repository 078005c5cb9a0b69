// What the ops that only relabel dims share (reshape.cpp, flatten.cpp, squeeze.cpp): their kernel
// copies the input's bytes, and each computes its output dims.
#pragma once

#include "core/kernels/kernel_util.h"

namespace weave::kern {

// Output holds the input's bytes under new dims; subclasses compute the dims.
class ReshapeLike : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const final {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    auto d = out_dims(ctx);
    if (!d) return d.error();
    if (d->numel() != ctx.inputs[0].numel())
      return make_error(ctx.label, ": cannot reshape ", dims_str(ctx.inputs[0].dims), " into ", dims_str(*d));
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = *d;
    return {};
  }
  // Planned in place where the input dies here: then the output is the input's memory and the
  // copy below moves nothing (Swin's reshapes around its attention copied 0.9 ms a run).
  [[nodiscard]] uint32_t in_place() const final { return 1u; }
  [[nodiscard]] bool relabels() const final { return true; }
  void run(const RunContext& ctx) const final {
    kern::copy_bytes(ctx.outputs[0].data, ctx.inputs[0].data, ctx.outputs[0].bytes());
  }

 protected:
  [[nodiscard]] virtual Expected<Dims> out_dims(const ShapeContext& ctx) const = 0;
};

}  // namespace weave::kern
