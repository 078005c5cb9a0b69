// LRN (local response normalization across channels), float32.
#include <algorithm>
#include <cmath>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/normalization.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::nc_plane;

// LRN across channels: y = x / (bias + alpha / size * sum of x^2 over the window)^beta, the window
// [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the channels.
class LrnKernel final : public Kernel {
 public:
  LrnKernel(int64_t size, float alpha, float beta, float bias)
      : size_(size), alpha_(alpha), beta_(beta), bias_(bias) {}
  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() < 2)
      return make_error(ctx.label, ": input ", kern::dims_bracketed(x), " must be N x C x ...");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = x;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto [N, C, plane] = nc_plane(ctx.inputs[0].dims);
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < plane; ++i) {
          double sq = 0;
          for (int64_t k = std::max<int64_t>(0, c - lo); k <= std::min(C - 1, c + hi); ++k) {
            const double v = x[(n * C + k) * plane + i];
            sq += v * v;
          }
          const int64_t at = (n * C + c) * plane + i;
          y[at] =
              static_cast<float>(x[at] / std::pow(bias_ + alpha_ / static_cast<double>(size_) * sq, beta_));
        }
  }

 private:
  int64_t size_;
  float alpha_, beta_, bias_;
};

Expected<std::unique_ptr<Kernel>> make_lrn(const KernelSetup& s) {
  WEAVE_TRY(kern::require_inputs(s, 1, 1));
  WEAVE_TRY(kern::require_float(s, {0}));
  const int64_t size = s.node.attrs.get_int("size", 0);
  if (size < 1) return make_error(s.label, ": LRN needs the attribute size >= 1");
  return std::unique_ptr<Kernel>(std::make_unique<LrnKernel>(size, s.node.attrs.get_float("alpha", 1e-4f),
                                                             s.node.attrs.get_float("beta", 0.75f),
                                                             s.node.attrs.get_float("bias", 1.f)));
}

}  // namespace

void register_lrn(KernelRegistry& r) {
  r.add("LRN", make_lrn);
}

}  // namespace weave
