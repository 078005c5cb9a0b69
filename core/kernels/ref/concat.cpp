// Concat.
#include <algorithm>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::make_kernel;
using kern::need_input;

using Factory = Expected<std::unique_ptr<Kernel>>;

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(int64_t axis) : axis_(axis) {}
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.empty()) return make_error(ctx.label, ": Concat needs at least one input");
    for (std::size_t i = 0; i < in.size(); ++i) WEAVE_TRY(need_input(ctx, i, "data"));
    auto a = kern::normalize_axis(axis_, in[0].dims.rank(), ctx.label);
    if (!a) return a.error();
    Dims out = in[0].dims;
    for (std::size_t i = 1; i < in.size(); ++i) {
      bool ok = in[i].dtype == in[0].dtype && in[i].dims.rank() == out.rank();
      for (int k = 0; ok && k < out.rank(); ++k) ok = k == *a || in[i].dims[k] == out[k];
      if (!ok)
        return make_error(ctx.label, ": cannot concatenate ", dtype_name(in[0].dtype), "[",
                          dims_str(in[0].dims), "] and ", dtype_name(in[i].dtype), "[", dims_str(in[i].dims),
                          "] (input ", i, ") on axis ", axis_);
      out[*a] += in[i].dims[*a];
    }
    ctx.outputs[0].dtype = in[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    const auto [a, outer, dim, inner] =
        kern::around_axis(out.dims, axis_, static_cast<int64_t>(dtype_size(out.dtype)));
    const int64_t out_row = dim * inner;
    auto* dst = static_cast<std::byte*>(out.data);
    ctx.parallel.for_range(
        outer, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, out_row)), [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o) {
            int64_t pos = 0;
            for (const ConstTensorView& in : ctx.inputs) {
              const int64_t row = in.dims[a] * inner;
              kern::copy_bytes(dst + o * out_row + pos, static_cast<const std::byte*>(in.data) + o * row,
                               static_cast<std::size_t>(row));
              pos += row;
            }
          }
        });
  }

 private:
  int64_t axis_;
};

}  // namespace

void register_concat(KernelRegistry& r) {
  r.add("Concat", [](const KernelSetup& s) -> Factory {
    if (!s.node.attrs.has("axis")) return make_error("Concat needs the 'axis' attribute");
    return make_kernel<ConcatKernel>(s.node.attrs.get_int("axis", 0));
  });
}

}  // namespace weave
