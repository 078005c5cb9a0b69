// GlobalMaxPool and GlobalAveragePool (one kernel), float32: one value per N*C plane.
#include <algorithm>
#include <limits>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

class GlobalPoolKernel final : public Kernel {
 public:
  explicit GlobalPoolKernel(bool is_max) : max_(is_max) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() < 3)
      return make_error(ctx.label, ": input ", kern::dims_bracketed(x), " must be N x C x spatial dims");
    for (int i = 2; i < x.rank(); ++i)
      if (x[i] == 0 && max_)
        return make_error(ctx.label, ": GlobalMaxPool of empty input ", kern::dims_bracketed(x));
    Dims out = x;
    for (int i = 2; i < out.rank(); ++i) out[i] = 1;
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = out;
    ctx.workspace = 0;
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const int64_t plane = shape_numel(xd.span().subspan(2));  // spatial size
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
    ctx.parallel.for_range(xd[0] * xd[1], 4, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const float* xp = x + p * plane;
        if (max_) {
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t i = 0; i < plane; ++i) m = std::max(m, xp[i]);
          y[p] = m;
        } else {
          float s = 0.f;
          for (int64_t i = 0; i < plane; ++i) s += xp[i];
          y[p] = plane > 0 ? s / static_cast<float>(plane) : 0.f;
        }
      }
    });
  }

 private:
  bool max_;
};

Expected<std::unique_ptr<Kernel>> make_global_max(const KernelSetup& s) {
  WEAVE_TRY(kern::require_nchw(s));
  WEAVE_TRY(kern::require_inputs(s, 1, 1));
  WEAVE_TRY(kern::require_float(s, {0}));
  return std::unique_ptr<Kernel>(std::make_unique<GlobalPoolKernel>(true));
}
Expected<std::unique_ptr<Kernel>> make_global_avg(const KernelSetup& s) {
  WEAVE_TRY(kern::require_nchw(s));
  WEAVE_TRY(kern::require_inputs(s, 1, 1));
  WEAVE_TRY(kern::require_float(s, {0}));
  return std::unique_ptr<Kernel>(std::make_unique<GlobalPoolKernel>(false));
}

}  // namespace

void register_global_pool(KernelRegistry& r) {
  r.add("GlobalMaxPool", make_global_max);
  r.add("GlobalAveragePool", make_global_avg);
}

}  // namespace weave
