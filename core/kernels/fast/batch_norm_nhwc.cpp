// Inference BatchNormalization over NHWC data: one multiply-add per element with the channel's
// folded factors, vectorized along channels. Lets a BatchNormalization that no convolution
// absorbs (DenseNet's pre-activation after a Concat) stay channels-last with its neighbours,
// where the reference kernel would need a Transpose to NCHW and one back.
#include <cmath>
#include <vector>

#include "core/kernels/fast/epilogue.h"
#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/kernel_util.h"

namespace weave::fast {
namespace {

class FastBatchNormNhwc final : public Kernel {
 public:
  FastBatchNormNhwc(const Ops& ops, std::vector<float> a, std::vector<float> b, Activation act)
      : ops_(ops), a_(std::move(a)), b_(std::move(b)), act_(act) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() != 4 || x[3] != static_cast<int64_t>(a_.size()))
      return make_error(ctx.label, ": NHWC input ", kern::dims_bracketed(x), " does not have ", a_.size(),
                        " channels last");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = x;
    return {};
  }

  void run(const RunContext& ctx) const override {
    const int64_t c = static_cast<int64_t>(a_.size());
    const int64_t rows = c > 0 ? ctx.inputs[0].numel() / c : 0;
    ops_.channel_affine_rows(ctx.inputs[0].as<float>(), kern::out_f32(ctx, 0), rows, c, a_.data(), b_.data(),
                             act_, ctx.parallel);
  }

  [[nodiscard]] uint32_t in_place() const override { return 1u; }

 private:
  const Ops& ops_;
  std::vector<float> a_, b_;  // per channel: y = act(x * a + b)
  Activation act_;            // fused by core/compiler/fuse_conv_epilogue.h
};

}  // namespace

bool batch_norm_nhwc_supported(const Graph& g, const Node& n) {
  if (n.op != "BatchNormalization" || n.inputs.size() != 5 || n.outputs.size() != 1 ||
      n.attrs.get_int("training_mode", 0) != 0 || n.inputs[0] < 0)
    return false;
  const Value& x = g.values[n.inputs[0]];
  if (x.dtype != DType::float32 || !x.rank_known || x.shape.size() != 4 || x.shape[1] < 1) return false;
  for (std::size_t i = 1; i < 5; ++i) {
    if (n.inputs[i] == kNoValue) return false;
    const Value& p = g.values[n.inputs[i]];
    if (p.kind != ValueKind::param || p.dtype != DType::float32 || p.shape != Shape{x.shape[1]}) return false;
  }
  return true;
}

Expected<std::unique_ptr<Kernel>> make_fast_batch_norm(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  if (ops == nullptr || s.node.attrs.get_string("weave_layout") != "NHWC") return std::unique_ptr<Kernel>();
  const ConstTensorView* p[4] = {kern::constant(s, 1), kern::constant(s, 2), kern::constant(s, 3),
                                 kern::constant(s, 4)};
  for (const ConstTensorView* v : p)
    if (v == nullptr || v->dtype != DType::float32 || v->dims.rank() != 1 || v->numel() != p[0]->numel())
      return make_error(s.label,
                        ": a channels-last BatchNormalization needs scale, B, mean and var as float32 "
                        "constants of one length");
  auto act = parse_epilogue(s);
  if (!act) return act.error();
  // channel_affine_rows applies the activation alone: a scale or offset after it (which no
  // pass attaches to a BatchNormalization today) is left to the reference kernel.
  if (act->post_mul != 1.f || act->post_add != 0.f) return std::unique_ptr<Kernel>();
  const float eps = s.node.attrs.get_float("epsilon", 1e-5f);
  const auto c = static_cast<std::size_t>(p[0]->numel());
  std::vector<float> a(c), b(c);
  const float *sc = p[0]->as<float>(), *bi = p[1]->as<float>(), *mu = p[2]->as<float>(),
              *var = p[3]->as<float>();
  for (std::size_t i = 0; i < c; ++i) {
    // As the reference kernel folds them.
    a[i] = sc[i] / std::sqrt(var[i] + eps);
    b[i] = bi[i] - mu[i] * a[i];
  }
  return std::unique_ptr<Kernel>(std::make_unique<FastBatchNormNhwc>(*ops, std::move(a), std::move(b), *act));
}

}  // namespace weave::fast
