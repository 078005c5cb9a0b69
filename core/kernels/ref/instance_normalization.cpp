// InstanceNormalization, float32.
#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/normalization.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::moments;
using kern::per_channel_infer;

class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(float eps) : eps_(eps) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() < 3)
      return make_error(ctx.label, ": input ", kern::dims_bracketed(x), " must be N x C x spatial dims");
    return per_channel_infer(ctx, 2);
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const int64_t C = xd[1];
    const int64_t plane = shape_numel(xd.span().subspan(2));  // spatial size
    const float* x = ctx.inputs[0].as<float>();
    const float* sc = ctx.inputs[1].as<float>();
    const float* bi = ctx.inputs[2].as<float>();
    float* y = kern::out_f32(ctx, 0);
    ctx.parallel.for_range(xd[0] * C, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t c = p % C;
        float mean, inv;
        moments(x + p * plane, plane, eps_, mean, inv);
        const float a = inv * sc[c], b = bi[c] - mean * a;
        const float* xp = x + p * plane;
        float* yp = y + p * plane;
        for (int64_t i = 0; i < plane; ++i) yp[i] = xp[i] * a + b;
      }
    });
  }

 private:
  float eps_;
};

Expected<std::unique_ptr<Kernel>> make_instance_norm(const KernelSetup& s) {
  WEAVE_TRY(kern::require_inputs(s, 3, 3));
  WEAVE_TRY(kern::require_float(s, {0, 1, 2}));
  return std::unique_ptr<Kernel>(
      std::make_unique<InstanceNormKernel>(s.node.attrs.get_float("epsilon", 1e-5f)));
}

}  // namespace

void register_instance_normalization(KernelRegistry& r) {
  r.add("InstanceNormalization", make_instance_norm);
}

}  // namespace weave
