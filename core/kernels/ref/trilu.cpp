// Trilu: the upper or lower triangle of (a batch of) matrices.
#include <cstring>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::make_kernel;
using kern::need;
using kern::need_int;

using Made = Expected<std::unique_ptr<Kernel>>;

class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(bool upper) : upper_(upper) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 1));
    if (ctx.inputs[0].dims.rank() < 2)
      return make_error(ctx.label, ": input must have rank >= 2, got ", dims_str(ctx.inputs[0].dims));
    if (has_input(ctx.inputs, 1)) {
      WEAVE_TRY(need_int(ctx, 1, "k"));
      if (ctx.inputs[1].numel() != 1) return make_error(ctx.label, ": k must be a scalar");
    }
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const int64_t k = has_input(ctx.inputs, 1) ? kern::int_at(ctx.inputs[1], 0) : 0;
    const Dims& d = ctx.inputs[0].dims;
    const int64_t n = d[d.rank() - 2], m = d[d.rank() - 1];
    const std::size_t es = dtype_size(ctx.inputs[0].dtype);
    const int64_t mats = n * m > 0 ? d.numel() / (n * m) : 0;
    const auto* src = static_cast<const std::byte*>(ctx.inputs[0].data);
    auto* dst = static_cast<std::byte*>(ctx.outputs[0].data);
    for (int64_t b = 0; b < mats; ++b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
          const int64_t off = ((b * n + i) * m + j) * static_cast<int64_t>(es);
          const bool keep = upper_ ? j - i >= k : j - i <= k;
          if (keep)
            std::memmove(dst + off, src + off, es);
          else
            std::memset(dst + off, 0, es);
        }
  }

 private:
  bool upper_;
};

}  // namespace

void register_trilu(KernelRegistry& r) {
  r.add("Trilu", [](const KernelSetup& s) -> Made {
    return make_kernel<TriluKernel>(s.node.attrs.get_int("upper", 1) != 0);
  });
}

}  // namespace weave
