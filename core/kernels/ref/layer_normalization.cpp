// LayerNormalization, float32.
#include <cmath>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/normalization.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::moments;

class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(int64_t axis, float eps) : axis_(axis), eps_(eps) {}

  Expected<int> axis(const Dims& x, const std::string& label) const {
    const int64_t a = axis_ < 0 ? axis_ + x.rank() : axis_;
    if (a < 0 || a >= x.rank())
      return make_error(label, ": axis ", axis_, " is out of range for input ", kern::dims_bracketed(x));
    return static_cast<int>(a);
  }

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    auto a = axis(x, ctx.label);
    if (!a) return a.error();
    int64_t D = 1;
    for (int i = *a; i < x.rank(); ++i) D *= x[i];
    for (std::size_t i = 1; i <= 2; ++i) {
      if (!kern::present(ctx, i)) continue;
      const Dims& p = ctx.inputs[i].dims;
      if (p.numel() != D && p.numel() != 1)
        return make_error(ctx.label, ": ", i == 1 ? "Scale " : "B ", kern::dims_bracketed(p),
                          " does not match the normalized dims of input ", kern::dims_bracketed(x), " (axis ",
                          *a, ")");
    }
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = x;
    Dims stat = x;
    for (int i = *a; i < x.rank(); ++i) stat[i] = 1;
    for (std::size_t o = 1; o < ctx.outputs.size() && o <= 2; ++o) {
      ctx.outputs[o].dtype = DType::float32;
      ctx.outputs[o].dims = stat;
    }
    ctx.workspace = 0;
    int64_t normalized = 1;  // the elements of one row: the dims from the axis on
    for (int i = *a; i < x.rank(); ++i) normalized *= x[i];
    ctx.keep(normalized);
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const int64_t D = ctx.kept<int64_t>();
    const int64_t rows = D > 0 ? xd.numel() / D : 0;
    const float* x = ctx.inputs[0].as<float>();
    const float* sc = ctx.inputs[1].as<float>();
    const float* bi = kern::present(ctx, 2) ? ctx.inputs[2].as<float>() : nullptr;
    const bool sc1 = ctx.inputs[1].numel() == 1, bi1 = bi && ctx.inputs[2].numel() == 1;
    float* y = kern::out_f32(ctx, 0);
    float* mean_out = kern::out_f32(ctx, 1);
    float* inv_out = kern::out_f32(ctx, 2);
    ctx.parallel.for_range(rows, 16, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* xr = x + r * D;
        float* yr = y + r * D;
        float mean, inv;
        moments(xr, D, eps_, mean, inv);
        if (mean_out) mean_out[r] = mean;
        if (inv_out) inv_out[r] = inv;
        for (int64_t i = 0; i < D; ++i) {
          const float s = sc1 ? sc[0] : sc[i];
          const float b = bi ? (bi1 ? bi[0] : bi[i]) : 0.f;
          yr[i] = (xr[i] - mean) * inv * s + b;
        }
      }
    });
  }

 private:
  int64_t axis_;
  float eps_;
};

Expected<std::unique_ptr<Kernel>> make_layer_norm(const KernelSetup& s) {
  WEAVE_TRY(kern::require_inputs(s, 2, 3));
  WEAVE_TRY(kern::require_float(s, {0, 1, 2}));
  return std::unique_ptr<Kernel>(std::make_unique<LayerNormKernel>(s.node.attrs.get_int("axis", -1),
                                                                   s.node.attrs.get_float("epsilon", 1e-5f)));
}

}  // namespace

void register_layer_normalization(KernelRegistry& r) {
  r.add("LayerNormalization", make_layer_norm);
}

}  // namespace weave
