// ScatterElements (and the older Scatter) and ScatterND, with their reductions.
// Indices are runtime data: every index is wrapped once (negative counts from the end) and then
// checked; an index still outside its axis is skipped, so no input value writes out of bounds.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <type_traits>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::make_kernel;
using kern::need;
using kern::need_int;
using kern::wrap_index;

using Made = Expected<std::unique_ptr<Kernel>>;

void copy_input(const RunContext& ctx) {
  kern::copy_bytes(ctx.outputs[0].data, ctx.inputs[0].data, ctx.outputs[0].bytes());
}

// ---------------------------------------------------------------- scatters

enum class ScatterReduce { none, add, mul, max, min };

Expected<ScatterReduce> scatter_reduction(const KernelSetup& s) {
  const std::string r = s.node.attrs.get_string("reduction", "none");
  if (r == "none") return ScatterReduce::none;
  if (r == "add") return ScatterReduce::add;
  if (r == "mul") return ScatterReduce::mul;
  if (r == "max") return ScatterReduce::max;
  if (r == "min") return ScatterReduce::min;
  return make_error("unsupported attribute reduction='", r, "'");
}

// dst = reduce(dst, src) for one element of dtype `t`.
void combine(std::byte* dst, const std::byte* src, DType t, ScatterReduce r) {
  if (r == ScatterReduce::none) {
    std::memcpy(dst, src, dtype_size(t));
    return;
  }
  (void)kern::dispatch_dtype<kern::kFloats | kern::kHalf | kern::kSigned | kern::kUnsigned>(t, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    using S = kern::storage_t<D>;
    using C = std::conditional_t<D == DType::float16, float, S>;
    S a, b;
    std::memcpy(&a, dst, sizeof a);
    std::memcpy(&b, src, sizeof b);
    C x, y;
    if constexpr (D == DType::float16) {
      x = kern::half_to_float(a);
      y = kern::half_to_float(b);
    } else {
      x = a;
      y = b;
    }
    C z = x;
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<decltype(x + y)>;
      if (r == ScatterReduce::add) z = static_cast<C>(static_cast<U>(x) + static_cast<U>(y));
      if (r == ScatterReduce::mul) z = static_cast<C>(static_cast<U>(x) * static_cast<U>(y));
    } else {
      if (r == ScatterReduce::add) z = x + y;
      if (r == ScatterReduce::mul) z = x * y;
    }
    if (r == ScatterReduce::max) z = std::max(x, y);
    if (r == ScatterReduce::min) z = std::min(x, y);
    if constexpr (D == DType::float16)
      a = kern::float_to_half(z);
    else
      a = z;
    std::memcpy(dst, &a, sizeof a);
  });
}

// Output 0 of a scatter: data's dtype and dims, once the reduction is known to apply to it.
Status scatter_output(ShapeContext& ctx, ScatterReduce r) {
  const DType t = ctx.inputs[0].dtype;
  if (r != ScatterReduce::none &&
      !kern::in_set<kern::kFloats | kern::kHalf | kern::kSigned | kern::kUnsigned>(t))
    return make_error(ctx.label, ": dtype ", dtype_name(t), " cannot be reduced");
  ctx.outputs[0].dtype = t;
  ctx.outputs[0].dims = ctx.inputs[0].dims;
  return {};
}

class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(int64_t axis, ScatterReduce r) : axis_(axis), reduce_(r) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 3));
    WEAVE_TRY(need_int(ctx, 1, "indices"));
    const Dims& d = ctx.inputs[0].dims;
    auto a = kern::normalize_axis(axis_, d.rank(), ctx.label);
    if (!a) return a.error();
    const Dims& idx = ctx.inputs[1].dims;
    if (!(ctx.inputs[2].dims == idx) || ctx.inputs[2].dtype != ctx.inputs[0].dtype || idx.rank() != d.rank())
      return make_error(ctx.label, ": indices ", dims_str(idx), " and updates ", dims_str(ctx.inputs[2].dims),
                        " must have one shape and data's rank (data ", dims_str(d), ")");
    for (int i = 0; i < d.rank(); ++i)
      if (i != *a && idx[i] > d[i])
        return make_error(ctx.label, ": indices ", dims_str(idx), " exceed data ", dims_str(d), " in dim ",
                          i);
    return scatter_output(ctx, reduce_);
  }
  void run(const RunContext& ctx) const override {
    copy_input(ctx);
    const Dims& d = ctx.inputs[0].dims;
    const Dims& idx = ctx.inputs[1].dims;
    const int r = d.rank();
    const int a = static_cast<int>(axis_ < 0 ? axis_ + r : axis_);
    const Dims ds = strides_of(d);
    const std::size_t es = dtype_size(ctx.inputs[0].dtype);
    auto* out = static_cast<std::byte*>(ctx.outputs[0].data);
    const auto* upd = static_cast<const std::byte*>(ctx.inputs[2].data);
    std::array<int64_t, kMaxRank> c{};
    for (int64_t i = 0; i < idx.numel(); ++i) {
      int64_t rem = i, off = 0;
      for (int k = r - 1; k >= 0; --k) {
        c[k] = rem % idx[k];
        rem /= idx[k];
      }
      const int64_t j = wrap_index(kern::int_at(ctx.inputs[1], i), d[a]);
      if (j < 0) continue;
      for (int k = 0; k < r; ++k) off += (k == a ? j : c[k]) * ds[k];
      combine(out + off * static_cast<int64_t>(es), upd + i * static_cast<int64_t>(es), ctx.inputs[0].dtype,
              reduce_);
    }
  }

 private:
  int64_t axis_;
  ScatterReduce reduce_;
};

Made make_scatter_elements(const KernelSetup& s) {
  auto r = scatter_reduction(s);
  if (!r) return r.error();
  return make_kernel<ScatterElementsKernel>(s.node.attrs.get_int("axis", 0), *r);
}

// indices [..., k] address data's first k dims; the rest of data's dims are the slice copied.
class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(ScatterReduce r) : reduce_(r) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 3));
    WEAVE_TRY(need_int(ctx, 1, "indices"));
    const Dims& d = ctx.inputs[0].dims;
    const Dims& idx = ctx.inputs[1].dims;
    const Dims& u = ctx.inputs[2].dims;
    if (idx.rank() < 1 || idx[idx.rank() - 1] > d.rank())
      return make_error(ctx.label, ": indices ", dims_str(idx), " do not fit data ", dims_str(d));
    const int q = idx.rank(), k = static_cast<int>(idx[q - 1]);
    bool ok = u.rank() == q - 1 + d.rank() - k && ctx.inputs[2].dtype == ctx.inputs[0].dtype;
    for (int i = 0; ok && i < q - 1; ++i) ok = u[i] == idx[i];
    for (int i = k; ok && i < d.rank(); ++i) ok = u[q - 1 + i - k] == d[i];
    if (!ok)
      return make_error(ctx.label, ": updates ", dims_str(u), " do not fit indices ", dims_str(idx),
                        " and data ", dims_str(d));
    return scatter_output(ctx, reduce_);
  }
  void run(const RunContext& ctx) const override {
    copy_input(ctx);
    const Dims& d = ctx.inputs[0].dims;
    const Dims& idx = ctx.inputs[1].dims;
    const int k = static_cast<int>(idx[idx.rank() - 1]);
    const Dims ds = strides_of(d);
    const std::size_t es = dtype_size(ctx.inputs[0].dtype);
    int64_t slice = 1;
    for (int i = k; i < d.rank(); ++i) slice *= d[i];
    const int64_t n = k > 0 ? idx.numel() / k : idx.numel();
    auto* out = static_cast<std::byte*>(ctx.outputs[0].data);
    const auto* upd = static_cast<const std::byte*>(ctx.inputs[2].data);
    for (int64_t t = 0; t < n; ++t) {
      int64_t off = 0;
      bool valid = true;
      for (int i = 0; i < k; ++i) {
        const int64_t j = wrap_index(kern::int_at(ctx.inputs[1], t * k + i), d[i]);
        valid = valid && j >= 0;
        off += j * ds[i];
      }
      if (!valid) continue;
      for (int64_t e = 0; e < slice; ++e)
        combine(out + (off + e) * static_cast<int64_t>(es), upd + (t * slice + e) * static_cast<int64_t>(es),
                ctx.inputs[0].dtype, reduce_);
    }
  }

 private:
  ScatterReduce reduce_;
};

}  // namespace

void register_scatter(KernelRegistry& r) {
  r.add("ScatterElements", &make_scatter_elements);
  r.add("Scatter", &make_scatter_elements);
  r.add("ScatterND", [](const KernelSetup& s) -> Made {
    auto red = scatter_reduction(s);
    if (!red) return red.error();
    return make_kernel<ScatterNDKernel>(*red);
  });
}

}  // namespace weave
