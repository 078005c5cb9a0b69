// Fast Softmax / LogSoftmax (vectorized exp) over the innermost axis, or along any other axis
// of opset 13 (vectorised across the axes after it: softmax_columns).
#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/kernel_util.h"

namespace weave::fast {
namespace {

class FastSoftmax final : public Kernel {
 public:
  FastSoftmax(const Ops& ops, int64_t axis, bool coerce, bool log)
      : ops_(ops), axis_(axis), coerce_(coerce), log_(log) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    const int64_t a = axis_ < 0 ? axis_ + x.rank() : axis_;
    if (x.rank() < 1 || a < 0 || a >= x.rank())
      return make_error(ctx.label, ": axis ", axis_, " is out of range for input ", kern::dims_bracketed(x));
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = x;
    ctx.workspace = 0;
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    const int64_t a = axis_ < 0 ? axis_ + x.rank() : axis_;
    if (x.numel() == 0) return;
    // Opset 13: along `axis`; before (coerce_2d): over every axis from `axis` on, as rows.
    int64_t inner = 1;
    for (int i = static_cast<int>(a) + 1; i < x.rank(); ++i) inner *= x[i];
    if (coerce_ || inner == 1) {
      const int64_t n = x[static_cast<int>(a)] * inner;
      ops_.softmax_rows(ctx.inputs[0].as<float>(), kern::out_f32(ctx, 0), x.numel() / n, n, log_,
                        ctx.parallel);
      return;
    }
    const int64_t k = x[static_cast<int>(a)];
    ops_.softmax_columns(ctx.inputs[0].as<float>(), kern::out_f32(ctx, 0), x.numel() / (k * inner), k, inner,
                         log_, ctx.parallel);
  }

 private:
  const Ops& ops_;
  int64_t axis_;
  bool coerce_, log_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_fast_softmax(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  const Value* x = kern::input_info(s, 0);
  if (ops == nullptr || s.node.inputs.size() != 1 || x == nullptr || x->dtype != DType::float32 ||
      !x->rank_known)
    return std::unique_ptr<Kernel>();
  const bool coerce = s.node.attrs.get_int("coerce_2d", 0) != 0;
  const int64_t axis = s.node.attrs.get_int("axis", coerce ? 1 : -1);
  return std::unique_ptr<Kernel>(
      std::make_unique<FastSoftmax>(*ops, axis, coerce, s.node.op == "LogSoftmax"));
}

}  // namespace weave::fast
