// Reference BatchNormalization (inference and training mode), LayerNormalization,
// InstanceNormalization, LRN and MeanVarianceNormalization, float32.
// BatchNormalization folds scale/bias/mean/var into one multiply-add per channel; when all four
// are params this is done once in create.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "core/kernels/kernel_util.h"
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

// [N, C, ...] as batch, channels and the product of the rest.
struct NcPlane {
  int64_t n, c, plane;
};
inline NcPlane nc_plane(const Dims& d) {
  return {d[0], d[1], shape_numel(d.span().subspan(2))};
}

// Inputs 1..last must be [C] for input 0 = [N, C, ...]; output 0 has the input's shape.
Status per_channel_infer(ShapeContext& ctx, std::size_t last) {
  const Dims& x = ctx.inputs[0].dims;
  for (std::size_t i = 1; i <= last; ++i) {
    const Dims& p = ctx.inputs[i].dims;
    if (p.rank() != 1 || p[0] != x[1])
      return make_error(ctx.label, ": input ", i, " ", kern::dims_bracketed(p), " does not match the ", x[1],
                        " channels of input ", kern::dims_bracketed(x));
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
    if (x.rank() < 2)
      return make_error(ctx.label, ": input ", kern::dims_bracketed(x), " must be N x C x ...");
    return per_channel_infer(ctx, 4);
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const int64_t C = xd[1];
    const int64_t plane = shape_numel(xd.span().subspan(2));  // spatial size
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
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

// Training mode: normalizes with the batch's own mean and (population) variance per channel and
// outputs the updated running statistics, input * momentum + batch * (1 - momentum).
class BatchNormTrainingKernel final : public Kernel {
 public:
  BatchNormTrainingKernel(float eps, float momentum) : eps_(eps), momentum_(momentum) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() < 2)
      return make_error(ctx.label, ": input ", kern::dims_bracketed(x), " must be N x C x ...");
    WEAVE_TRY(per_channel_infer(ctx, 4));
    for (std::size_t k = 1; k < ctx.outputs.size(); ++k) {
      ctx.outputs[k].dtype = DType::float32;
      ctx.outputs[k].dims = Dims{x[1]};
    }
    return {};
  }

  void run(const RunContext& ctx) const override {
    const auto [N, C, plane] = nc_plane(ctx.inputs[0].dims);
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
    const float *sc = ctx.inputs[1].as<float>(), *bi = ctx.inputs[2].as<float>(),
                *mu = ctx.inputs[3].as<float>(), *var = ctx.inputs[4].as<float>();
    for (int64_t c = 0; c < C; ++c) {
      double s = 0, s2 = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < plane; ++i) s += x[(n * C + c) * plane + i];
      const double count = static_cast<double>(N * plane);
      const double m = count > 0 ? s / count : 0.0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < plane; ++i) {
          const double d = x[(n * C + c) * plane + i] - m;
          s2 += d * d;
        }
      const double v = count > 0 ? s2 / count : 0.0;
      const double a = sc[c] / std::sqrt(v + eps_), b = bi[c] - m * a;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < plane; ++i)
          y[(n * C + c) * plane + i] = static_cast<float>(x[(n * C + c) * plane + i] * a + b);
      if (float* rm = kern::out_f32(ctx, 1))
        rm[c] = static_cast<float>(mu[c] * momentum_ + m * (1 - momentum_));
      if (float* rv = kern::out_f32(ctx, 2))
        rv[c] = static_cast<float>(var[c] * momentum_ + v * (1 - momentum_));
    }
  }

 private:
  float eps_, momentum_;
};

Expected<std::unique_ptr<Kernel>> make_batch_norm(const KernelSetup& s) {
  WEAVE_TRY(kern::require_inputs(s, 5, 5));
  WEAVE_TRY(kern::require_float(s, {0, 1, 2, 3, 4}));
  if (s.node.attrs.get_int("training_mode", 0) != 0 || kern::has_output(s, 1) || kern::has_output(s, 2)) {
    if (s.node.outputs.size() > 3) return make_error(s.label, ": BatchNormalization has at most 3 outputs");
    return std::unique_ptr<Kernel>(std::make_unique<BatchNormTrainingKernel>(
        s.node.attrs.get_float("epsilon", 1e-5f), s.node.attrs.get_float("momentum", 0.9f)));
  }
  const float eps = s.node.attrs.get_float("epsilon", 1e-5f);
  std::vector<float> a, b;
  const ConstTensorView* cs[4] = {kern::constant(s, 1), kern::constant(s, 2), kern::constant(s, 3),
                                  kern::constant(s, 4)};
  if (cs[0] && cs[1] && cs[2] && cs[3]) {
    const int64_t C = cs[0]->numel();
    for (auto* c : cs)
      if (c->numel() != C || c->dims.rank() != 1)
        return make_error(s.label, ": scale/B/mean/var shapes differ: ", kern::dims_bracketed(cs[0]->dims),
                          " vs ", kern::dims_bracketed(c->dims));
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
    ctx.keep(*a);
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    int64_t D = 1;
    for (int i = ctx.kept<int>(); i < xd.rank(); ++i) D *= xd[i];
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

// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------

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

// MeanVarianceNormalization over `axes`: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9), as the
// ONNX function defines it.
class MvnKernel final : public Kernel {
 public:
  explicit MvnKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}
  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    for (int64_t a : axes_)
      if (a < -x.rank() || a >= x.rank())
        return make_error(ctx.label, ": axis ", a, " is out of range for input ", kern::dims_bracketed(x));
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = x;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    const int r = d.rank();
    std::array<bool, kMaxRank> reduced{};
    for (int64_t a : axes_) reduced[static_cast<std::size_t>(a < 0 ? a + r : a)] = true;
    // Group of an element: its index with the reduced axes dropped.
    auto group = [&](int64_t i) {
      int64_t g = 0, rem = i;
      std::array<int64_t, kMaxRank> c{};
      for (int k = r - 1; k >= 0; --k) {
        c[k] = rem % d[k];
        rem /= d[k];
      }
      for (int k = 0; k < r; ++k)
        if (!reduced[k]) g = g * d[k] + c[k];
      return g;
    };
    int64_t groups = 1, per = 1;
    for (int k = 0; k < r; ++k) (reduced[k] ? per : groups) *= d[k];
    std::vector<double> s(static_cast<std::size_t>(groups)), s2(static_cast<std::size_t>(groups));
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
    for (int64_t i = 0; i < d.numel(); ++i) {
      const auto g = static_cast<std::size_t>(group(i));
      s[g] += x[i];
      s2[g] += static_cast<double>(x[i]) * x[i];
    }
    for (int64_t i = 0; i < d.numel(); ++i) {
      const auto g = static_cast<std::size_t>(group(i));
      const double m = s[g] / static_cast<double>(per);
      const double var = std::max(0.0, s2[g] / static_cast<double>(per) - m * m);
      y[i] = static_cast<float>((x[i] - m) / (std::sqrt(var) + 1e-9));
    }
  }

 private:
  std::vector<int64_t> axes_;
};

}  // namespace

void register_normalization_kernels(KernelRegistry& r) {
  r.add("LRN", make_lrn);
  r.add("MeanVarianceNormalization", [](const KernelSetup& s) -> Expected<std::unique_ptr<Kernel>> {
    WEAVE_TRY(kern::require_inputs(s, 1, 1));
    WEAVE_TRY(kern::require_float(s, {0}));
    return std::unique_ptr<Kernel>(std::make_unique<MvnKernel>(s.node.attrs.get_ints("axes", {0, 2, 3})));
  });
  r.add("BatchNormalization", make_batch_norm);
  r.add("LayerNormalization", make_layer_norm);
  r.add("InstanceNormalization", make_instance_norm);
}

}  // namespace weave
