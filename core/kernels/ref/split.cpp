// Split.
#include <algorithm>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::known_ints;
using kern::make_kernel;
using kern::need_input;

using Factory = Expected<std::unique_ptr<Kernel>>;

class SplitKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // split
  SplitKernel(int64_t axis, std::vector<int64_t> split_attr, bool split_from_input, int64_t num_outputs)
      : axis_(axis),
        split_attr_(std::move(split_attr)),
        from_input_(split_from_input),
        num_outputs_(num_outputs) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    const Dims& in = ctx.inputs[0].dims;
    auto a = kern::normalize_axis(axis_, in.rank(), ctx.label);
    if (!a) return a.error();
    const int64_t n = static_cast<int64_t>(ctx.outputs.size());
    const int64_t d = in[*a];
    std::vector<int64_t> split = split_attr_;
    if (from_input_ && has_input(ctx.inputs, 1)) {
      auto s = known_ints(ctx, 1, "split", "Split");
      if (!s) return s.error();
      split = *s;
    }
    if (split.empty()) {
      if (num_outputs_ > 0 && num_outputs_ != n)
        return make_error(ctx.label, ": num_outputs ", num_outputs_, " differs from the ", n, " outputs");
      if (num_outputs_ > 0) {
        const int64_t chunk = (d + n - 1) / n;
        for (int64_t i = 0; i < n; ++i) split.push_back(std::clamp<int64_t>(d - i * chunk, 0, chunk));
      } else {
        if (d % n != 0)
          return make_error(ctx.label, ": cannot split ", dims_str(in), " evenly into ", n, " outputs");
        split.assign(static_cast<std::size_t>(n), d / n);
      }
    }
    if (static_cast<int64_t>(split.size()) != n)
      return make_error(ctx.label, ": split has ", split.size(), " entries for ", n, " outputs");
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0) return make_error(ctx.label, ": negative split size ", s);
      sum += s;
    }
    if (sum != d)
      return make_error(ctx.label, ": split ", shape_str(split), " does not add up to dim ", d, " of ",
                        dims_str(in));
    for (int64_t i = 0; i < n; ++i) {
      ctx.outputs[i].dtype = ctx.inputs[0].dtype;
      ctx.outputs[i].dims = in;
      ctx.outputs[i].dims[*a] = split[i];
    }
    return {};
  }
  void run(const RunContext& ctx) const override {
    const ConstTensorView& in = ctx.inputs[0];
    const auto [a, outer, dim, inner] =
        kern::around_axis(in.dims, axis_, static_cast<int64_t>(dtype_size(in.dtype)));
    const int64_t in_row = dim * inner;
    // Nothing to copy (a zero dim anywhere): do not walk a hostile, huge outer count (fuzz_artifact).
    if (in_row == 0 || outer == 0) return;
    const auto* src = static_cast<const std::byte*>(in.data);
    ctx.parallel.for_range(outer, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, in_row)),
                           [&](int64_t b, int64_t e) {
                             for (int64_t o = b; o < e; ++o) {
                               int64_t pos = 0;
                               for (const TensorView& out : ctx.outputs) {
                                 const int64_t row = out.dims[a] * inner;
                                 kern::copy_bytes(static_cast<std::byte*>(out.data) + o * row,
                                                  src + o * in_row + pos, static_cast<std::size_t>(row));
                                 pos += row;
                               }
                             }
                           });
  }

 private:
  int64_t axis_;
  std::vector<int64_t> split_attr_;
  bool from_input_;
  int64_t num_outputs_;
};

Factory make_split(const KernelSetup& s) {
  const int64_t n = s.node.attrs.get_int("num_outputs", 0);
  if (s.node.attrs.has("num_outputs") && n <= 0) return make_error("num_outputs must be positive");
  return make_kernel<SplitKernel>(s.node.attrs.get_int("axis", 0), s.node.attrs.get_ints("split"),
                                  s.opset >= 13, n);
}

}  // namespace

void register_split(KernelRegistry& r) {
  r.add("Split", &make_split);
}

}  // namespace weave
