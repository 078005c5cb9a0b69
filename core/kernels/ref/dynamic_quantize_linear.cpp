// DynamicQuantizeLinear.
#include <algorithm>
#include <cmath>

#include "core/kernels/ref/quantize.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;
using kern::qput;

using Made = Expected<std::unique_ptr<Kernel>>;

// y = quantize(x) with scale and zero point chosen from x's range (extended to include 0).
class DynamicQuantizeKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.empty() || !ctx.inputs[0].present() || ctx.inputs[0].dtype != DType::float32)
      return make_error(ctx.label, ": x must be float32");
    ctx.outputs[0].dtype = DType::uint8;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    if (ctx.outputs.size() > 1) {
      ctx.outputs[1].dtype = DType::float32;
      ctx.outputs[1].dims = Dims{};
    }
    if (ctx.outputs.size() > 2) {
      ctx.outputs[2].dtype = DType::uint8;
      ctx.outputs[2].dims = Dims{};
    }
    return {};
  }
  void run(const RunContext& ctx) const override {
    const float* x = ctx.inputs[0].as<float>();
    const int64_t n = ctx.inputs[0].numel();
    float lo = 0.f, hi = 0.f;
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(x[i])) continue;
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    const float scale = (hi - lo) / 255.f;
    const double z = scale > 0 ? std::nearbyint(0.0 - lo / scale) : 0.0;
    const double zp = std::isnan(z) ? 0.0 : std::clamp(z, 0.0, 255.0);
    for (int64_t i = 0; i < n; ++i)
      qput(ctx.outputs[0], i, scale > 0 ? std::nearbyint(x[i] / scale) + zp : zp);
    if (ctx.outputs.size() > 1 && ctx.outputs[1].present()) *ctx.outputs[1].as<float>() = scale;
    if (ctx.outputs.size() > 2 && ctx.outputs[2].present())
      *ctx.outputs[2].as<uint8_t>() = static_cast<uint8_t>(zp);
  }
};

}  // namespace

void register_dynamic_quantize_linear(KernelRegistry& r) {
  r.add("DynamicQuantizeLinear",
        [](const KernelSetup&) -> Made { return make_kernel<DynamicQuantizeKernel>(); });
}

}  // namespace weave
