// IsNaN and IsInf (one kernel).
#include <cmath>
#include <cstdint>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;

// IsNaN, or IsInf (with which signs count): float -> bool.
class ClassifyKernel final : public Kernel {
 public:
  ClassifyKernel(bool inf, bool neg, bool pos) : inf_(inf), neg_(neg), pos_(pos) {}
  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.empty() || !ctx.inputs[0].present()) return make_error(ctx.label, ": input 0 is missing");
    if (!kern::in_set<kern::kFloats | kern::kHalf>(ctx.inputs[0].dtype))
      return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
    ctx.outputs[0].dtype = DType::boolean;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    uint8_t* y = ctx.outputs[0].as<uint8_t>();
    kern::dispatch_dtype<kern::kFloats | kern::kHalf>(ctx.inputs[0].dtype, [&](auto tag) {
      constexpr DType D = decltype(tag)::value;
      const auto* x = ctx.inputs[0].as<kern::storage_t<D>>();
      for (int64_t i = 0; i < ctx.outputs[0].numel(); ++i) {
        double v = 0;
        if constexpr (D == DType::float16)
          v = kern::half_to_float(x[i]);
        else
          v = static_cast<double>(x[i]);
        y[i] = static_cast<uint8_t>(inf_ ? std::isinf(v) && (v < 0 ? neg_ : pos_) : std::isnan(v));
      }
    });
  }

 private:
  bool inf_, neg_, pos_;
};

}  // namespace

void register_is_nan(KernelRegistry& r) {
  r.add("IsNaN", [](const KernelSetup&) { return make_kernel<ClassifyKernel>(false, false, false); });
  r.add("IsInf", [](const KernelSetup& s) {
    return make_kernel<ClassifyKernel>(true, s.node.attrs.get_int("detect_negative", 1) != 0,
                                       s.node.attrs.get_int("detect_positive", 1) != 0);
  });
}

}  // namespace weave
