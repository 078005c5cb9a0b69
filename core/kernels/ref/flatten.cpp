// Flatten (the kernel of reshape.h).
#include "core/kernels/ref/register.h"
#include "core/kernels/ref/reshape.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::make_kernel;
using kern::ReshapeLike;

using Factory = Expected<std::unique_ptr<Kernel>>;

class FlattenKernel final : public ReshapeLike {
 public:
  explicit FlattenKernel(int64_t axis) : axis_(axis) {}

 protected:
  Expected<Dims> out_dims(const ShapeContext& ctx) const override {
    const Dims& in = ctx.inputs[0].dims;
    const int64_t a = axis_ < 0 ? axis_ + in.rank() : axis_;
    if (a < 0 || a > in.rank())
      return make_error(ctx.label, ": axis ", axis_, " is out of range for shape ", dims_str(in));
    // Checked: an empty input may have other dims whose product overflows (fuzz_onnx, UBSan).
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < in.rank(); ++i)
      if (int64_t& side = i < a ? outer : inner; __builtin_mul_overflow(side, in[i], &side))
        return make_error(ctx.label, ": flattening ", dims_str(in), " at axis ", a, " overflows int64");
    return Dims{outer, inner};
  }

 private:
  int64_t axis_;
};

}  // namespace

void register_flatten(KernelRegistry& r) {
  r.add("Flatten", [](const KernelSetup& s) -> Factory {
    return make_kernel<FlattenKernel>(s.node.attrs.get_int("axis", 1));
  });
}

}  // namespace weave
