// OneHot.
// Its output shape depends on input values (Kernel::value_inputs): the planner computes it once
// those values are known (core/runtime/plan.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::make_kernel;
using kern::wrap_index;

using Made = Expected<std::unique_ptr<Kernel>>;

class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(int64_t axis) : axis_(axis) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // depth
  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.size() != 3 || !ctx.inputs[0].present() || !ctx.inputs[1].present() ||
        !ctx.inputs[2].present())
      return make_error(ctx.label, ": expects indices, depth and values");
    const ConstTensorView& depth = ctx.inputs[1];
    if (depth.numel() != 1 || depth.data == nullptr)
      return make_error(ctx.label, ": depth must be a known scalar");
    double dv = 0;
    if (!kern::dispatch_dtype<kern::kFloats | kern::kSigned | kern::kUnsigned>(depth.dtype, [&](auto tag) {
          dv = static_cast<double>(*depth.as<kern::storage_t<decltype(tag)::value>>());
        }))
      return make_error(ctx.label, ": depth dtype ", dtype_name(depth.dtype), " is not supported");
    if (!(dv >= 1 && dv < static_cast<double>(kern::kMaxElements)))
      return make_error(ctx.label, ": depth ", dv, " is out of range");
    if (!kern::in_set<kern::kFloats | kern::kSigned | kern::kUnsigned>(ctx.inputs[0].dtype))
      return make_error(ctx.label, ": indices dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
    if (ctx.inputs[2].numel() != 2) return make_error(ctx.label, ": values must hold [off, on]");
    const Dims& in = ctx.inputs[0].dims;
    const int r = in.rank() + 1;
    if (r > kMaxRank) return make_error(ctx.label, ": output rank too high");
    auto a = kern::normalize_axis(axis_, r, ctx.label);
    if (!a) return a.error();
    Dims out;
    for (int i = 0, j = 0; i < r; ++i) out.push_back(i == *a ? static_cast<int64_t>(dv) : in[j++]);
    if (!kern::size_ok(out.span())) return make_error(ctx.label, ": output ", dims_str(out), " is too large");
    ctx.outputs[0].dtype = ctx.inputs[2].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    const int r = out.dims.rank();
    const int a = static_cast<int>(axis_ < 0 ? axis_ + r : axis_);
    const auto v = kern::around_axis(out.dims, a);
    const std::size_t es = dtype_size(out.dtype);
    const auto* vals = static_cast<const std::byte*>(ctx.inputs[2].data);
    auto* dst = static_cast<std::byte*>(out.data);
    for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(dst + i * static_cast<int64_t>(es), vals, es);
    kern::dispatch_dtype<kern::kFloats | kern::kSigned | kern::kUnsigned>(ctx.inputs[0].dtype, [&](auto tag) {
      const auto* idx = ctx.inputs[0].as<kern::storage_t<decltype(tag)::value>>();
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const double raw = static_cast<double>(idx[o * v.inner + i]);
          if (!std::isfinite(raw)) continue;
          const int64_t j = wrap_index(static_cast<int64_t>(std::clamp(raw, -9e18, 9e18)), v.dim);
          if (j >= 0)
            std::memcpy(dst + ((o * v.dim + j) * v.inner + i) * static_cast<int64_t>(es), vals + es, es);
        }
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

void register_one_hot(KernelRegistry& r) {
  r.add("OneHot", [](const KernelSetup& s) -> Made {
    return make_kernel<OneHotKernel>(s.node.attrs.get_int("axis", -1));
  });
}

}  // namespace weave
