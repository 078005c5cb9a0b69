// NonZero.
// Its output shape depends on input values (Kernel::value_inputs): the planner computes it once
// those values are known (core/runtime/plan.h).
#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;
using kern::need;
using kern::need_values;

using Made = Expected<std::unique_ptr<Kernel>>;

// Reads element i of a numeric or bool tensor as "is it nonzero".
bool nonzero_at(const ConstTensorView& x, int64_t i) {
  bool nz = false;
  (void)kern::dispatch_dtype<kern::kAllNumeric | kern::kBool>(x.dtype, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    const auto v = x.as<kern::storage_t<D>>()[i];
    if constexpr (D == DType::float16)
      nz = kern::half_to_float(v) != 0.f;
    else
      nz = v != 0;
  });
  return nz;
}

class NonZeroKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 0; }
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 1));
    if (!kern::in_set<kern::kAllNumeric | kern::kBool>(ctx.inputs[0].dtype))
      return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
    WEAVE_TRY(need_values(ctx, 0, "the input"));
    int64_t n = 0;
    for (int64_t i = 0; i < ctx.inputs[0].numel(); ++i) n += nonzero_at(ctx.inputs[0], i);
    ctx.outputs[0].dtype = DType::int64;
    ctx.outputs[0].dims = Dims{ctx.inputs[0].dims.rank(), n};
    return {};
  }
  void run(const RunContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    const int r = d.rank();
    const int64_t n = ctx.outputs[0].dims[1];
    int64_t* out = ctx.outputs[0].as<int64_t>();
    int64_t w = 0;
    for (int64_t i = 0; i < d.numel() && w < n; ++i) {
      if (!nonzero_at(ctx.inputs[0], i)) continue;
      int64_t rem = i;
      for (int k = r - 1; k >= 0; --k) {
        out[k * n + w] = rem % d[k];
        rem /= d[k];
      }
      ++w;
    }
  }
};

}  // namespace

void register_non_zero(KernelRegistry& r) {
  r.add("NonZero", [](const KernelSetup&) -> Made { return make_kernel<NonZeroKernel>(); });
}

}  // namespace weave
