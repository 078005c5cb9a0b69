// BatchNormalization (inference and training mode), float32. In inference mode it applies the
// activation a fusion pass may attach (core/kernels/fused_activation.h).
// It folds scale/bias/mean/var into one multiply-add per channel; when all four are params this
// is done once in create.
#include <cmath>
#include <vector>

#include "core/kernels/fused_activation.h"
#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/normalization.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::nc_plane;
using kern::per_channel_infer;

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(float eps, std::vector<float> a, std::vector<float> b, kern::Activation act)
      : eps_(eps), a_(std::move(a)), b_(std::move(b)), act_(act) {}

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
        act_.apply(yp, plane);
      }
    });
  }

 private:
  float eps_;
  std::vector<float> a_, b_;  // folded per-channel multiplier and offset, when params are constant
  kern::Activation act_;      // fused by core/compiler/fuse_conv_epilogue.h
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
  WEAVE_TRY(kern::require_nchw(s));
  WEAVE_TRY(kern::require_inputs(s, 5, 5));
  WEAVE_TRY(kern::require_float(s, {0, 1, 2, 3, 4}));
  auto parsed = kern::parse_activation(s);
  if (!parsed) return parsed.error();
  const kern::Activation act = *parsed;
  if (s.node.attrs.get_int("training_mode", 0) != 0 || kern::has_output(s, 1) || kern::has_output(s, 2)) {
    if (s.node.outputs.size() > 3) return make_error(s.label, ": BatchNormalization has at most 3 outputs");
    if (act.kind != kern::Activation::none || act.post_mul != 1.f || act.post_add != 0.f)
      return make_error(s.label, ": a fused activation needs an inference BatchNormalization");
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
  return std::unique_ptr<Kernel>(std::make_unique<BatchNormKernel>(eps, std::move(a), std::move(b), act));
}

}  // namespace

void register_batch_normalization(KernelRegistry& r) {
  r.add("BatchNormalization", make_batch_norm);
}

}  // namespace weave
