// Fast LayerNormalization (float32, Y only; Scale and B constants of the row's length, as the
// compiler's fuse_layer_norm makes and exporters write). Anything else — Mean/InvStdDev outputs,
// a broadcast one-element Scale, computed Scale or B — declines to the reference kernel.
#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/kernel_util.h"

namespace weave::fast {
namespace {

class FastLayerNorm final : public Kernel {
 public:
  FastLayerNorm(const Ops& ops, int64_t axis, float eps, int64_t len)
      : ops_(ops), axis_(axis), eps_(eps), len_(len) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    const int64_t a = axis_ < 0 ? axis_ + x.rank() : axis_;
    if (a < 0 || a >= x.rank())
      return make_error(ctx.label, ": axis ", axis_, " is out of range for input ", kern::dims_bracketed(x));
    int64_t n = 1;
    for (int i = static_cast<int>(a); i < x.rank(); ++i) n *= x[i];
    if (n != len_)
      return make_error(ctx.label, ": Scale has ", len_, " elements but a row of input ",
                        kern::dims_bracketed(x), " from axis ", a, " has ", n);
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = x;
    ctx.workspace = 0;
    return {};
  }

  void run(const RunContext& ctx) const override {
    const int64_t numel = ctx.inputs[0].numel();
    if (numel == 0 || len_ == 0) return;
    const float* bias = kern::present(ctx, 2) ? ctx.inputs[2].as<float>() : nullptr;
    ops_.layer_norm_rows(ctx.inputs[0].as<float>(), kern::out_f32(ctx, 0), numel / len_, len_,
                         ctx.inputs[1].as<float>(), bias, eps_, ctx.parallel);
  }

 private:
  const Ops& ops_;
  int64_t axis_;
  float eps_;
  int64_t len_;  // elements of one row (Scale's)
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_fast_layer_norm(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  const Value* x = kern::input_info(s, 0);
  const ConstTensorView* scale = kern::constant(s, 1);
  const ConstTensorView* bias = kern::constant(s, 2);
  const bool has_bias = s.node.inputs.size() > 2 && s.node.inputs[2] != kNoValue;
  if (ops == nullptr || x == nullptr || x->dtype != DType::float32 || s.node.inputs.size() < 2 ||
      s.node.inputs.size() > 3 || scale == nullptr || scale->dtype != DType::float32 || scale->numel() < 2 ||
      (has_bias && (bias == nullptr || bias->dtype != DType::float32 || bias->numel() != scale->numel())))
    return std::unique_ptr<Kernel>();
  for (std::size_t o = 1; o < s.node.outputs.size(); ++o)
    if (s.node.outputs[o] != kNoValue) return std::unique_ptr<Kernel>();  // Mean, InvStdDev: the reference
  s.float_inputs |= 1u;
  return std::unique_ptr<Kernel>(std::make_unique<FastLayerNorm>(
      *ops, s.node.attrs.get_int("axis", -1), s.node.attrs.get_float("epsilon", 1e-5f), scale->numel()));
}

}  // namespace weave::fast
