// ConstantOfShape.
#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::fill_pattern;
using kern::has_input;
using kern::known_ints;
using kern::make_kernel;

using Factory = Expected<std::unique_ptr<Kernel>>;

class ConstantOfShapeKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 0; }  // shape
  explicit ConstantOfShapeKernel(TensorAttr value) : value_(std::move(value)) {}
  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0)) return make_error(ctx.label, ": ConstantOfShape needs the shape input");
    auto shape = known_ints(ctx, 0, "shape", "ConstantOfShape");
    if (!shape) return shape.error();
    auto d = kern::to_dims(*shape, ctx.label);
    if (!d) return d.error();
    ctx.outputs[0].dtype = value_.dtype;
    ctx.outputs[0].dims = *d;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    const std::size_t es = dtype_size(out.dtype);
    auto* dst = static_cast<std::byte*>(out.data);
    const auto* v = reinterpret_cast<const std::byte*>(value_.bytes.data());
    ctx.parallel.for_range(out.numel(), kern::kGrain, [&](int64_t b, int64_t e) {
      fill_pattern(dst + b * static_cast<int64_t>(es), e - b, v, es);
    });
  }

 private:
  TensorAttr value_;
};

Factory make_constant_of_shape(const KernelSetup& s) {
  TensorAttr v;
  if (const TensorAttr* t = s.node.attrs.get_tensor("value")) {
    if (shape_numel(t->shape) != 1 || dtype_size(t->dtype) == 0 || t->bytes.size() != dtype_size(t->dtype))
      return make_error("ConstantOfShape value must hold exactly one element of a known dtype");
    v = *t;
  } else {
    v.dtype = DType::float32;
    v.shape = {1};
    v.bytes.assign(4, 0);
  }
  return make_kernel<ConstantOfShapeKernel>(std::move(v));
}

}  // namespace

void register_constant_of_shape(KernelRegistry& r) {
  r.add("ConstantOfShape", &make_constant_of_shape);
}

}  // namespace weave
