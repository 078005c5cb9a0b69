// Slice.
#include <algorithm>
#include <array>
#include <span>
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

// ---------------------------------------------------------------- Slice

struct SliceParams {
  std::array<int64_t, kMaxRank> start{}, step{}, count{};
};

// ONNX Slice semantics: negative starts/ends count from the end, values are clamped, steps may
// be negative. Errors name `label`.
Status slice_params(const Dims& d, std::span<const int64_t> starts, std::span<const int64_t> ends,
                    std::span<const int64_t> axes, std::span<const int64_t> steps, SliceParams& p,
                    const std::string& label) {
  const int r = d.rank();
  for (int i = 0; i < r; ++i) {
    p.start[i] = 0;
    p.step[i] = 1;
    p.count[i] = d[i];
  }
  if (starts.size() != ends.size())
    return make_error(label, ": starts and ends have different lengths (", starts.size(), " and ",
                      ends.size(), ")");
  if ((!axes.empty() && axes.size() != starts.size()) || (!steps.empty() && steps.size() != starts.size()))
    return make_error(label, ": axes/steps lengths differ from starts");
  std::array<bool, kMaxRank> seen{};
  for (std::size_t k = 0; k < starts.size() && k < ends.size(); ++k) {
    int64_t ax = axes.empty() ? static_cast<int64_t>(k) : axes[k];
    if (ax < 0) ax += r;
    if (ax < 0 || ax >= r)
      return make_error(label, ": slice axis ", axes.empty() ? k : axes[k], " is out of range for ",
                        dims_str(d));
    if (seen[ax]) return make_error(label, ": axis ", ax, " is sliced twice");
    seen[ax] = true;
    int64_t step = steps.empty() ? 1 : steps[k];
    if (step == 0) return make_error(label, ": slice step is 0");
    const int64_t dim = d[static_cast<int>(ax)];
    // Steps larger than the dim select at most one element; clamping them avoids overflow.
    step = std::clamp<int64_t>(step, -(dim + 1), dim + 1);
    if (step == 0) step = 1;
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t cnt;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      cnt = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      cnt = s > e ? (s - e - step - 1) / (-step) : 0;
    }
    p.start[ax] = cnt > 0 ? s : 0;
    p.step[ax] = step;
    p.count[ax] = cnt;
  }
  return {};
}

class SliceKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return input_bits(1, 4); }
  // opset < 10: starts/ends/axes attributes; otherwise inputs 1..4.
  SliceKernel(bool from_attrs, std::vector<int64_t> starts, std::vector<int64_t> ends,
              std::vector<int64_t> axes)
      : from_attrs_(from_attrs), starts_(std::move(starts)), ends_(std::move(ends)), axes_(std::move(axes)) {}

  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    std::array<std::vector<int64_t>, 4> v;
    if (from_attrs_) {
      v = {starts_, ends_, axes_, {}};
    } else {
      static constexpr const char* kNames[] = {"starts", "ends", "axes", "steps"};
      for (std::size_t i = 1; i <= 4; ++i) {
        if (!has_input(ctx.inputs, i)) {
          if (i <= 2) return make_error(ctx.label, ": Slice needs ", kNames[i - 1]);
          continue;
        }
        auto r = known_ints(ctx, i, kNames[i - 1], "Slice");
        if (!r) return r.error();
        v[i - 1] = *r;
      }
    }
    SliceParams p;
    WEAVE_TRY(slice_params(ctx.inputs[0].dims, v[0], v[1], v[2], v[3], p, ctx.label));
    Dims out;
    for (int i = 0; i < ctx.inputs[0].dims.rank(); ++i) out.push_back(p.count[i]);
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    ctx.keep(p);
    return {};
  }

  void run(const RunContext& ctx) const override {
    const ConstTensorView& in = ctx.inputs[0];
    const SliceParams& p = ctx.kept<SliceParams>();
    const Dims st = strides_of(in.dims);
    kern::Plan plan;
    plan.rank = in.dims.rank();
    plan.n = 1;
    int64_t base = 0;
    for (int i = 0; i < plan.rank; ++i) {
      plan.dims[i] = p.count[i];
      plan.strides[0][i] = st[i] * p.step[i];
      base += p.start[i] * st[i];
    }
    const int64_t total = ctx.outputs[0].numel();
    if (total == 0) return;
    plan.coalesce();
    kern::strided_copy(plan, static_cast<const std::byte*>(in.data), base,
                       static_cast<std::byte*>(ctx.outputs[0].data), dtype_size(in.dtype), total,
                       ctx.parallel);
  }

 private:
  bool from_attrs_;
  std::vector<int64_t> starts_, ends_, axes_;
};

Factory make_slice(const KernelSetup& s) {
  if (s.opset < 10)
    return make_kernel<SliceKernel>(true, s.node.attrs.get_ints("starts"), s.node.attrs.get_ints("ends"),
                                    s.node.attrs.get_ints("axes"));
  return make_kernel<SliceKernel>(false, std::vector<int64_t>{}, std::vector<int64_t>{},
                                  std::vector<int64_t>{});
}

}  // namespace

void register_slice(KernelRegistry& r) {
  r.add("Slice", &make_slice);
}

}  // namespace weave
