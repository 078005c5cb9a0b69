// ReverseSequence.
#include <algorithm>
#include <cstring>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::make_kernel;
using kern::need;
using kern::need_int;

using Made = Expected<std::unique_ptr<Kernel>>;

class ReverseSequenceKernel final : public Kernel {
 public:
  ReverseSequenceKernel(int64_t batch_axis, int64_t time_axis) : batch_(batch_axis), time_(time_axis) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 2));
    WEAVE_TRY(need_int(ctx, 1, "sequence_lens"));
    const Dims& d = ctx.inputs[0].dims;
    if (d.rank() < 2 || (batch_ != 0 && batch_ != 1) || (time_ != 0 && time_ != 1) || batch_ == time_)
      return make_error(ctx.label, ": needs rank >= 2 and batch_axis/time_axis of 0 and 1");
    if (ctx.inputs[1].dims.rank() != 1 || ctx.inputs[1].dims[0] != d[static_cast<int>(batch_)])
      return make_error(ctx.label, ": sequence_lens ", dims_str(ctx.inputs[1].dims),
                        " must have the batch size ", d[static_cast<int>(batch_)]);
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = d;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    const int64_t B = d[static_cast<int>(batch_)], T = d[static_cast<int>(time_)];
    const std::size_t es = dtype_size(ctx.inputs[0].dtype);
    int64_t inner = 1;
    for (int i = 2; i < d.rank(); ++i) inner *= d[i];
    const int64_t row = inner * static_cast<int64_t>(es);
    // An empty tensor: nothing to copy (its B x T rows may still be billions, and data null).
    if (row == 0 || B == 0 || T == 0) return;
    const auto* src = static_cast<const std::byte*>(ctx.inputs[0].data);
    auto* dst = static_cast<std::byte*>(ctx.outputs[0].data);
    auto at = [&](int64_t b, int64_t t) { return (time_ == 0 ? t * B + b : b * T + t) * row; };
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = std::clamp<int64_t>(kern::int_at(ctx.inputs[1], b), 0, T);
      for (int64_t t = 0; t < T; ++t) {
        const int64_t from = t < len ? len - 1 - t : t;
        std::memcpy(dst + at(b, t), src + at(b, from), static_cast<std::size_t>(row));
      }
    }
  }

 private:
  int64_t batch_, time_;
};

}  // namespace

void register_reverse_sequence(KernelRegistry& r) {
  r.add("ReverseSequence", [](const KernelSetup& s) -> Made {
    return make_kernel<ReverseSequenceKernel>(s.node.attrs.get_int("batch_axis", 1),
                                              s.node.attrs.get_int("time_axis", 0));
  });
}

}  // namespace weave
