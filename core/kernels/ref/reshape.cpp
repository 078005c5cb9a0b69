// Reshape (the kernel of reshape.h).
#include "core/kernels/ref/reshape.h"

#include <vector>

#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::make_kernel;
using kern::ReshapeLike;

using Factory = Expected<std::unique_ptr<Kernel>>;

class ReshapeKernel final : public ReshapeLike {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // shape
  explicit ReshapeKernel(bool allowzero) : allowzero_(allowzero) {}

 protected:
  Expected<Dims> out_dims(const ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 1)) return make_error(ctx.label, ": Reshape needs the shape input");
    if (ctx.inputs[1].data == nullptr && ctx.inputs[1].numel() > 0)
      return make_error(ctx.label, ": shape of Reshape is only known at run time; it must be a constant");
    auto shape = kern::read_ints(ctx.inputs[1], ctx.label, "shape");
    if (!shape) return shape.error();
    const Dims& in = ctx.inputs[0].dims;
    std::vector<int64_t> out = *shape;
    int infer_at = -1;
    int64_t known = 1;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0 && !allowzero_) {
        if (i >= in.size())
          return make_error(ctx.label, ": shape ", shape_str(*shape), " copies dim ", i, " of ", dims_str(in),
                            " which does not exist");
        out[i] = in[static_cast<int>(i)];
      }
      if (out[i] == -1) {
        if (infer_at >= 0)
          return make_error(ctx.label, ": shape ", shape_str(*shape), " has more than one -1");
        infer_at = static_cast<int>(i);
        continue;
      }
      if (out[i] < 0) return make_error(ctx.label, ": invalid shape ", shape_str(*shape));
      if (out[i] > 0 && known > (int64_t{1} << 62) / out[i])
        return make_error(ctx.label, ": shape ", shape_str(*shape), " is too large");
      known *= out[i];
    }
    if (infer_at >= 0) {
      if (known == 0 || ctx.inputs[0].numel() % known != 0)
        return make_error(ctx.label, ": cannot reshape ", dims_str(in), " into ", shape_str(*shape));
      out[infer_at] = ctx.inputs[0].numel() / known;
    }
    return kern::to_dims(out, ctx.label);
  }

 private:
  bool allowzero_;
};

}  // namespace

void register_reshape(KernelRegistry& r) {
  r.add("Reshape", [](const KernelSetup& s) -> Factory {
    return make_kernel<ReshapeKernel>(s.node.attrs.get_int("allowzero", 0) != 0);
  });
}

}  // namespace weave
