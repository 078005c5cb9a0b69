// Reference BatchNormalization (inference), LayerNormalization and InstanceNormalization, float32.
// BatchNormalization folds scale/bias/mean/var into one multiply-add per channel; when all four
// are params this is done once in create.
#include <cmath>
#include <vector>

#include "core/kernels/ref_util.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

// Mean and 1/sqrt(var + eps) of n values (two passes: accurate for large means).
inline void moments(const float* x, int64_t n, float eps, float& mean, float& inv_std) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  const double m = n > 0 ? s / static_cast<double>(n) : 0.0;
  double v = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i] - m;
    v += d * d;
  }
  v = n > 0 ? v / static_cast<double>(n) : 0.0;
  mean = static_cast<float>(m);
  inv_std = static_cast<float>(1.0 / std::sqrt(v + eps));
}

// Inputs 1..last must be [C] for input 0 = [N, C, ...]; output 0 has the input's shape.
Status per_channel_infer(ShapeContext& ctx, std::size_t last) {
  const Dims& x = ctx.inputs[0].dims;
  for (std::size_t i = 1; i <= last; ++i) {
    const Dims& p = ctx.inputs[i].dims;
    if (p.rank() != 1 || p[0] != x[1])
      return make_error(ctx.label, ": input ", i, " ", ref::dims_str(p), " does not match the ", x[1],
                        " channels of input ", ref::dims_str(x));
  }
  ctx.outputs[0].dtype = DType::float32;
  ctx.outputs[0].dims = x;
  ctx.workspace = 0;
  return {};
}

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(float eps, std::vector<float> a, std::vector<float> b)
      : eps_(eps), a_(std::move(a)), b_(std::move(b)) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() < 2) return make_error(ctx.label, ": input ", ref::dims_str(x), " must be N x C x ...");
    return per_channel_infer(ctx, 4);
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const int64_t C = xd[1];
    const int64_t plane = shape_numel(xd.span().subspan(2));  // spatial size
    const float* x = ctx.inputs[0].as<float>();
    float* y = ref::out_f32(ctx, 0);
    const float *sc = ctx.inputs[1].as<float>(), *bi = ctx.inputs[2].as<float>(),
                *mu = ctx.inputs[3].as<float>(), *var = ctx.inputs[4].as<float>();
    ctx.parallel.for_range(xd[0] * C, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t c = p % C;
        float a, b;
        if (!a_.empty()) {
          a = a_[c], b = b_[c];
        } else {
          a = sc[c] / std::sqrt(var[c] + eps_);
          b = bi[c] - mu[c] * a;
        }
        const float* xp = x + p * plane;
        float* yp = y + p * plane;
        for (int64_t i = 0; i < plane; ++i) yp[i] = xp[i] * a + b;
      }
    });
  }

 private:
  float eps_;
  std::vector<float> a_, b_;  // folded per-channel multiplier and offset, when params are constant
};

Expected<std::unique_ptr<Kernel>> make_batch_norm(const KernelSetup& s) {
  WEAVE_TRY(ref::require_inputs(s, 5, 5));
  WEAVE_TRY(ref::require_float(s, {0, 1, 2, 3, 4}));
  if (s.node.attrs.get_int("training_mode", 0) != 0 || ref::has_output(s, 1) || ref::has_output(s, 2))
    return make_error(s.label, ": BatchNormalization in training mode is not supported");
  const float eps = s.node.attrs.get_float("epsilon", 1e-5f);
  std::vector<float> a, b;
  const ConstTensorView* cs[4] = {ref::constant(s, 1), ref::constant(s, 2), ref::constant(s, 3),
                                  ref::constant(s, 4)};
  if (cs[0] && cs[1] && cs[2] && cs[3]) {
    const int64_t C = cs[0]->numel();
    for (auto* c : cs)
      if (c->numel() != C || c->dims.rank() != 1)
        return make_error(s.label, ": scale/B/mean/var shapes differ: ", ref::dims_str(cs[0]->dims), " vs ",
                          ref::dims_str(c->dims));
    a.resize(static_cast<std::size_t>(C));
    b.resize(static_cast<std::size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      a[c] = cs[0]->as<float>()[c] / std::sqrt(cs[3]->as<float>()[c] + eps);
      b[c] = cs[1]->as<float>()[c] - cs[2]->as<float>()[c] * a[c];
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<BatchNormKernel>(eps, std::move(a), std::move(b)));
}

// ---------------------------------------------------------------------------------------------

class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(int64_t axis, float eps) : axis_(axis), eps_(eps) {}

  Expected<int> axis(const Dims& x, const std::string& label) const {
    const int64_t a = axis_ < 0 ? axis_ + x.rank() : axis_;
    if (a < 0 || a >= x.rank())
      return make_error(label, ": axis ", axis_, " is out of range for input ", ref::dims_str(x));
    return static_cast<int>(a);
  }

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    auto a = axis(x, ctx.label);
    if (!a) return a.error();
    int64_t D = 1;
    for (int i = *a; i < x.rank(); ++i) D *= x[i];
    for (std::size_t i = 1; i <= 2; ++i) {
      if (!ref::present(ctx, i)) continue;
      const Dims& p = ctx.inputs[i].dims;
      if (p.numel() != D && p.numel() != 1)
        return make_error(ctx.label, ": ", i == 1 ? "Scale " : "B ", ref::dims_str(p),
                          " does not match the normalized dims of input ", ref::dims_str(x), " (axis ", *a,
                          ")");
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
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const std::string label;
    auto a = axis(xd, label);
    if (!a) return;
    int64_t D = 1;
    for (int i = *a; i < xd.rank(); ++i) D *= xd[i];
    const int64_t rows = D > 0 ? xd.numel() / D : 0;
    const float* x = ctx.inputs[0].as<float>();
    const float* sc = ctx.inputs[1].as<float>();
    const float* bi = ref::present(ctx, 2) ? ctx.inputs[2].as<float>() : nullptr;
    const bool sc1 = ctx.inputs[1].numel() == 1, bi1 = bi && ctx.inputs[2].numel() == 1;
    float* y = ref::out_f32(ctx, 0);
    float* mean_out = ref::out_f32(ctx, 1);
    float* inv_out = ref::out_f32(ctx, 2);
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
  WEAVE_TRY(ref::require_inputs(s, 2, 3));
  WEAVE_TRY(ref::require_float(s, {0, 1, 2}));
  return std::unique_ptr<Kernel>(std::make_unique<LayerNormKernel>(s.node.attrs.get_int("axis", -1),
                                                                   s.node.attrs.get_float("epsilon", 1e-5f)));
}

// ---------------------------------------------------------------------------------------------

class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(float eps) : eps_(eps) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() < 3)
      return make_error(ctx.label, ": input ", ref::dims_str(x), " must be N x C x spatial dims");
    return per_channel_infer(ctx, 2);
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const int64_t C = xd[1];
    const int64_t plane = shape_numel(xd.span().subspan(2));  // spatial size
    const float* x = ctx.inputs[0].as<float>();
    const float* sc = ctx.inputs[1].as<float>();
    const float* bi = ctx.inputs[2].as<float>();
    float* y = ref::out_f32(ctx, 0);
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
  WEAVE_TRY(ref::require_inputs(s, 3, 3));
  WEAVE_TRY(ref::require_float(s, {0, 1, 2}));
  return std::unique_ptr<Kernel>(
      std::make_unique<InstanceNormKernel>(s.node.attrs.get_float("epsilon", 1e-5f)));
}

}  // namespace

void register_normalization_kernels(KernelRegistry& r) {
  r.add("BatchNormalization", make_batch_norm);
  r.add("LayerNormalization", make_layer_norm);
  r.add("InstanceNormalization", make_instance_norm);
}

}  // namespace weave
