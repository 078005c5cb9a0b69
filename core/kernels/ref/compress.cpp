// Compress.
// Its output shape depends on input values (Kernel::value_inputs): the planner computes it once
// those values are known (core/runtime/plan.h).
#include <algorithm>
#include <cstring>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;
using kern::need;
using kern::need_values;

using Made = Expected<std::unique_ptr<Kernel>>;

class CompressKernel final : public Kernel {
 public:
  CompressKernel(bool has_axis, int64_t axis) : has_axis_(has_axis), axis_(axis) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // condition
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 2));
    WEAVE_TRY(need_values(ctx, 1, "condition"));
    const ConstTensorView& c = ctx.inputs[1];
    if (c.dtype != DType::boolean || c.dims.rank() != 1)
      return make_error(ctx.label, ": condition must be a 1-D bool tensor");
    const Dims& d = ctx.inputs[0].dims;
    const int64_t len = has_axis_ ? 0 : d.numel();
    int a = 0;
    if (has_axis_) {
      auto n = kern::normalize_axis(axis_, d.rank(), ctx.label);
      if (!n) return n.error();
      a = *n;
    }
    const int64_t dim = has_axis_ ? d[a] : len;
    int64_t kept = 0;
    for (int64_t i = 0; i < std::min(dim, c.numel()); ++i) kept += c.as<uint8_t>()[i] != 0;
    Dims out = has_axis_ ? d : Dims{kept};
    if (has_axis_) out[a] = kept;
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    const ConstTensorView& c = ctx.inputs[1];
    const std::size_t es = dtype_size(ctx.inputs[0].dtype);
    const auto v = has_axis_ ? kern::around_axis(d, axis_, static_cast<int64_t>(es))
                             : kern::AxisView{0, 1, d.numel(), static_cast<int64_t>(es)};
    const auto* src = static_cast<const std::byte*>(ctx.inputs[0].data);
    auto* dst = static_cast<std::byte*>(ctx.outputs[0].data);
    const int64_t n = std::min(v.dim, c.numel());
    int64_t w = 0;
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t i = 0; i < n; ++i)
        if (c.as<uint8_t>()[i] != 0) {
          std::memcpy(dst + w * v.inner, src + (o * v.dim + i) * v.inner, static_cast<std::size_t>(v.inner));
          ++w;
        }
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

}  // namespace

void register_compress(KernelRegistry& r) {
  r.add("Compress", [](const KernelSetup& s) -> Made {
    return make_kernel<CompressKernel>(s.node.attrs.has("axis"), s.node.attrs.get_int("axis", 0));
  });
}

}  // namespace weave
