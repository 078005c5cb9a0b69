// Reference indexing kernels: Trilu, EyeLike, CumSum, ScatterElements (and the older Scatter),
// ScatterND, GatherND, OneHot, Compress, NonZero, Unique, ReverseSequence.
//
// Indices are runtime data: every index is wrapped once (negative counts from the end) and then
// checked; an index still outside its axis is skipped (scatters), or gives zeros (gathers), so no
// input value reads or writes out of bounds. Compress, NonZero, Unique and OneHot have output
// shapes that depend on input values (Kernel::value_inputs): the planner computes them once
// those values are known (core/runtime/plan.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "core/kernels/kernel_util.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::make_kernel;

using Made = Expected<std::unique_ptr<Kernel>>;

// idx wrapped into [0, dim); -1 when outside.
int64_t wrap_index(int64_t idx, int64_t dim) {
  if (idx < 0) idx += dim;
  return idx >= 0 && idx < dim ? idx : -1;
}

Status need(const ShapeContext& ctx, std::size_t n) {
  if (ctx.inputs.size() < n)
    return make_error(ctx.label, ": expects ", n, " inputs, got ", ctx.inputs.size());
  for (std::size_t i = 0; i < n; ++i)
    if (!ctx.inputs[i].present()) return make_error(ctx.label, ": input ", i, " is missing");
  if (dtype_size(ctx.inputs[0].dtype) == 0)
    return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
  return {};
}

// Input i's values, which infer needs (value_inputs), must be there.
Status need_values(const ShapeContext& ctx, std::size_t i, const char* what) {
  if (ctx.inputs[i].data == nullptr && ctx.inputs[i].numel() > 0)
    return make_error(ctx.label, ": ", what, " is only known at run time");
  return {};
}

Status need_int(const ShapeContext& ctx, std::size_t i, const char* what) {
  if (ctx.inputs[i].dtype != DType::int64 && ctx.inputs[i].dtype != DType::int32)
    return make_error(ctx.label, ": ", what, " must be int32 or int64, got ",
                      dtype_name(ctx.inputs[i].dtype));
  return {};
}

void copy_input(const RunContext& ctx) {
  kern::copy_bytes(ctx.outputs[0].data, ctx.inputs[0].data, ctx.outputs[0].bytes());
}

// Writes the value 1 (or 0) of dtype `t` at `p`.
void write_one(void* p, DType t, bool one) {
  (void)kern::dispatch_dtype<kern::kAllNumeric | kern::kBool>(t, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    kern::storage_t<D> v{};
    if constexpr (D == DType::float16)
      v = kern::float_to_half(one ? 1.f : 0.f);
    else
      v = static_cast<kern::storage_t<D>>(one ? 1 : 0);
    std::memcpy(p, &v, sizeof v);
  });
}

// ---------------------------------------------------------------- Trilu, EyeLike

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

class EyeLikeKernel final : public Kernel {
 public:
  EyeLikeKernel(DType dtype, int64_t k) : dtype_(dtype), k_(k) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 1));
    if (ctx.inputs[0].dims.rank() != 2)
      return make_error(ctx.label, ": input must be 2-D, got ", dims_str(ctx.inputs[0].dims));
    const DType t = dtype_ == DType::undefined ? ctx.inputs[0].dtype : dtype_;
    if (!kern::in_set<kern::kAllNumeric | kern::kBool>(t))
      return make_error(ctx.label, ": dtype ", dtype_name(t), " is not supported");
    ctx.outputs[0].dtype = t;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    const int64_t n = out.dims[0], m = out.dims[1];
    const std::size_t es = dtype_size(out.dtype);
    auto* dst = static_cast<std::byte*>(out.data);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        write_one(dst + (i * m + j) * static_cast<int64_t>(es), out.dtype, j - i == k_);
  }

 private:
  DType dtype_;
  int64_t k_;
};

Made make_eye_like(const KernelSetup& s) {
  DType t = DType::undefined;
  if (s.node.attrs.has("dtype")) {
    const int64_t raw = s.node.attrs.get_int("dtype", 0);
    if (raw != static_cast<int32_t>(raw) || !dtype_valid(static_cast<int32_t>(raw)))
      return make_error("unsupported attribute dtype=", raw);
    t = static_cast<DType>(raw);
  }
  return make_kernel<EyeLikeKernel>(t, s.node.attrs.get_int("k", 0));
}

// ---------------------------------------------------------------- CumSum

constexpr unsigned kCumTypes = kern::kFloats | kern::kSigned | kern::kUnsigned;

class CumSumKernel final : public Kernel {
 public:
  CumSumKernel(bool exclusive, bool reverse) : exclusive_(exclusive), reverse_(reverse) {}
  // The axis is checked against the rank when planned (a value computed in the run makes the
  // plan continue once it is known).
  [[nodiscard]] uint32_t value_inputs() const override { return input_bits(1, 1); }
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 2));
    if (!kern::in_set<kCumTypes>(ctx.inputs[0].dtype))
      return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
    WEAVE_TRY(need_int(ctx, 1, "axis"));
    if (ctx.inputs[1].numel() != 1) return make_error(ctx.label, ": axis must be a scalar");
    if (ctx.inputs[1].data == nullptr) return make_error(ctx.label, ": the axis is not known when planned");
    auto a = kern::normalize_axis(kern::int_at(ctx.inputs[1], 0), ctx.inputs[0].dims.rank(), ctx.label);
    if (!a) return a.error();
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    ctx.keep(kern::around_axis(ctx.inputs[0].dims, *a));
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& v = ctx.kept<kern::AxisView>();
    kern::dispatch_dtype<kCumTypes>(ctx.inputs[0].dtype, [&](auto tag) {
      using T = kern::storage_t<decltype(tag)::value>;
      const T* x = ctx.inputs[0].as<T>();
      T* y = ctx.outputs[0].as<T>();
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          T acc = T(0);
          for (int64_t t = 0; t < v.dim; ++t) {
            const int64_t k = reverse_ ? v.dim - 1 - t : t;
            const int64_t at = (o * v.dim + k) * v.inner + i;
            if (exclusive_) {
              y[at] = acc;
              acc = add(acc, x[at]);
            } else {
              acc = add(acc, x[at]);
              y[at] = acc;
            }
          }
        }
    });
  }

 private:
  template <class T>
  static T add(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<decltype(a + b)>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
  bool exclusive_, reverse_;
};

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

// ---------------------------------------------------------------- GatherND

class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(int64_t batch_dims) : b_(batch_dims) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 2));
    WEAVE_TRY(need_int(ctx, 1, "indices"));
    const Dims& d = ctx.inputs[0].dims;
    const Dims& idx = ctx.inputs[1].dims;
    const int q = idx.rank();
    if (q < 1 || b_ < 0 || b_ >= q || b_ >= d.rank() || idx[q - 1] > d.rank() - b_)
      return make_error(ctx.label, ": indices ", dims_str(idx), " do not fit data ", dims_str(d),
                        " with batch_dims ", b_);
    for (int i = 0; i < b_; ++i)
      if (idx[i] != d[i])
        return make_error(ctx.label, ": batch dims of indices ", dims_str(idx), " and data ", dims_str(d),
                          " differ");
    Dims out;
    for (int i = 0; i < q - 1; ++i) out.push_back(idx[i]);
    const int k = static_cast<int>(idx[q - 1]);
    if (out.rank() + d.rank() - b_ - k > kMaxRank) return make_error(ctx.label, ": output rank too high");
    for (int i = static_cast<int>(b_) + k; i < d.rank(); ++i) out.push_back(d[i]);
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    const Dims& idx = ctx.inputs[1].dims;
    const int q = idx.rank();
    const int k = static_cast<int>(idx[q - 1]);
    const int b = static_cast<int>(b_);
    const Dims ds = strides_of(d);
    const std::size_t es = dtype_size(ctx.inputs[0].dtype);
    int64_t slice = 1, batch = 1;
    for (int i = b + k; i < d.rank(); ++i) slice *= d[i];
    for (int i = 0; i < b; ++i) batch *= d[i];
    const int64_t per_batch = batch > 0 && k > 0 ? idx.numel() / k / batch : 0;
    const auto* src = static_cast<const std::byte*>(ctx.inputs[0].data);
    auto* dst = static_cast<std::byte*>(ctx.outputs[0].data);
    const int64_t bytes = slice * static_cast<int64_t>(es);
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t t = 0; t < per_batch; ++t) {
        const int64_t row = bi * per_batch + t;
        int64_t off = bi * (b > 0 ? ds[b - 1] : 0);
        bool valid = true;
        for (int i = 0; i < k; ++i) {
          const int64_t j = wrap_index(kern::int_at(ctx.inputs[1], row * k + i), d[b + i]);
          valid = valid && j >= 0;
          off += j * ds[b + i];
        }
        if (valid)
          std::memcpy(dst + row * bytes, src + off * static_cast<int64_t>(es),
                      static_cast<std::size_t>(bytes));
        else
          std::memset(dst + row * bytes, 0, static_cast<std::size_t>(bytes));
      }
  }

 private:
  int64_t b_;
};

// ---------------------------------------------------------------- OneHot

class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(int64_t axis) : axis_(axis) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // depth
  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.size() != 3 || !ctx.inputs[0].present() || !ctx.inputs[1].present() ||
        !ctx.inputs[2].present())
      return make_error(ctx.label, ": expects indices, depth and values");
    const ConstTensorView& depth = ctx.inputs[1];
    if (depth.numel() != 1 || depth.data == nullptr)
      return make_error(ctx.label, ": depth must be a known scalar");
    double dv = 0;
    if (!kern::dispatch_dtype<kern::kFloats | kern::kSigned | kern::kUnsigned>(depth.dtype, [&](auto tag) {
          dv = static_cast<double>(*depth.as<kern::storage_t<decltype(tag)::value>>());
        }))
      return make_error(ctx.label, ": depth dtype ", dtype_name(depth.dtype), " is not supported");
    if (!(dv >= 1 && dv < static_cast<double>(kern::kMaxElements)))
      return make_error(ctx.label, ": depth ", dv, " is out of range");
    if (!kern::in_set<kern::kFloats | kern::kSigned | kern::kUnsigned>(ctx.inputs[0].dtype))
      return make_error(ctx.label, ": indices dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
    if (ctx.inputs[2].numel() != 2) return make_error(ctx.label, ": values must hold [off, on]");
    const Dims& in = ctx.inputs[0].dims;
    const int r = in.rank() + 1;
    if (r > kMaxRank) return make_error(ctx.label, ": output rank too high");
    auto a = kern::normalize_axis(axis_, r, ctx.label);
    if (!a) return a.error();
    Dims out;
    for (int i = 0, j = 0; i < r; ++i) out.push_back(i == *a ? static_cast<int64_t>(dv) : in[j++]);
    if (!kern::size_ok(out.span())) return make_error(ctx.label, ": output ", dims_str(out), " is too large");
    ctx.outputs[0].dtype = ctx.inputs[2].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    const int r = out.dims.rank();
    const int a = static_cast<int>(axis_ < 0 ? axis_ + r : axis_);
    const auto v = kern::around_axis(out.dims, a);
    const std::size_t es = dtype_size(out.dtype);
    const auto* vals = static_cast<const std::byte*>(ctx.inputs[2].data);
    auto* dst = static_cast<std::byte*>(out.data);
    for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(dst + i * static_cast<int64_t>(es), vals, es);
    kern::dispatch_dtype<kern::kFloats | kern::kSigned | kern::kUnsigned>(ctx.inputs[0].dtype, [&](auto tag) {
      const auto* idx = ctx.inputs[0].as<kern::storage_t<decltype(tag)::value>>();
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const double raw = static_cast<double>(idx[o * v.inner + i]);
          if (!std::isfinite(raw)) continue;
          const int64_t j = wrap_index(static_cast<int64_t>(std::clamp(raw, -9e18, 9e18)), v.dim);
          if (j >= 0)
            std::memcpy(dst + ((o * v.dim + j) * v.inner + i) * static_cast<int64_t>(es), vals + es, es);
        }
    });
  }

 private:
  int64_t axis_;
};

// ---------------------------------------------------------------- Compress, NonZero

class CompressKernel final : public Kernel {
 public:
  CompressKernel(bool has_axis, int64_t axis) : has_axis_(has_axis), axis_(axis) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // condition
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 2));
    WEAVE_TRY(need_values(ctx, 1, "condition"));
    const ConstTensorView& c = ctx.inputs[1];
    if (c.dtype != DType::boolean || c.dims.rank() != 1)
      return make_error(ctx.label, ": condition must be a 1-D bool tensor");
    const Dims& d = ctx.inputs[0].dims;
    const int64_t len = has_axis_ ? 0 : d.numel();
    int a = 0;
    if (has_axis_) {
      auto n = kern::normalize_axis(axis_, d.rank(), ctx.label);
      if (!n) return n.error();
      a = *n;
    }
    const int64_t dim = has_axis_ ? d[a] : len;
    int64_t kept = 0;
    for (int64_t i = 0; i < std::min(dim, c.numel()); ++i) kept += c.as<uint8_t>()[i] != 0;
    Dims out = has_axis_ ? d : Dims{kept};
    if (has_axis_) out[a] = kept;
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    const ConstTensorView& c = ctx.inputs[1];
    const std::size_t es = dtype_size(ctx.inputs[0].dtype);
    const auto v = has_axis_ ? kern::around_axis(d, axis_, static_cast<int64_t>(es))
                             : kern::AxisView{0, 1, d.numel(), static_cast<int64_t>(es)};
    const auto* src = static_cast<const std::byte*>(ctx.inputs[0].data);
    auto* dst = static_cast<std::byte*>(ctx.outputs[0].data);
    const int64_t n = std::min(v.dim, c.numel());
    int64_t w = 0;
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t i = 0; i < n; ++i)
        if (c.as<uint8_t>()[i] != 0) {
          std::memcpy(dst + w * v.inner, src + (o * v.dim + i) * v.inner, static_cast<std::size_t>(v.inner));
          ++w;
        }
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

// Reads element i of a numeric or bool tensor as "is it nonzero".
bool nonzero_at(const ConstTensorView& x, int64_t i) {
  bool nz = false;
  (void)kern::dispatch_dtype<kern::kAllNumeric | kern::kBool>(x.dtype, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    const auto v = x.as<kern::storage_t<D>>()[i];
    if constexpr (D == DType::float16)
      nz = kern::half_to_float(v) != 0.f;
    else
      nz = v != 0;
  });
  return nz;
}

class NonZeroKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 0; }
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 1));
    if (!kern::in_set<kern::kAllNumeric | kern::kBool>(ctx.inputs[0].dtype))
      return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
    WEAVE_TRY(need_values(ctx, 0, "the input"));
    int64_t n = 0;
    for (int64_t i = 0; i < ctx.inputs[0].numel(); ++i) n += nonzero_at(ctx.inputs[0], i);
    ctx.outputs[0].dtype = DType::int64;
    ctx.outputs[0].dims = Dims{ctx.inputs[0].dims.rank(), n};
    return {};
  }
  void run(const RunContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    const int r = d.rank();
    const int64_t n = ctx.outputs[0].dims[1];
    int64_t* out = ctx.outputs[0].as<int64_t>();
    int64_t w = 0;
    for (int64_t i = 0; i < d.numel() && w < n; ++i) {
      if (!nonzero_at(ctx.inputs[0], i)) continue;
      int64_t rem = i;
      for (int k = r - 1; k >= 0; --k) {
        out[k * n + w] = rem % d[k];
        rem /= d[k];
      }
      ++w;
    }
  }
};

// ---------------------------------------------------------------- Unique

// Unique elements (or slices along `axis`) of X: Y, and optionally indices (first occurrence),
// inverse_indices and counts. sorted=1 orders Y ascending (lexicographically for slices), else
// by first occurrence.
class UniqueKernel final : public Kernel {
 public:
  UniqueKernel(bool has_axis, int64_t axis, bool sorted)
      : has_axis_(has_axis), axis_(axis), sorted_(sorted) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 0; }
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 1));
    if (!kern::in_set<kern::kAllNumeric | kern::kBool>(ctx.inputs[0].dtype))
      return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
    WEAVE_TRY(need_values(ctx, 0, "the input"));
    const Dims& d = ctx.inputs[0].dims;
    if (has_axis_) {
      auto a = kern::normalize_axis(axis_, d.rank(), ctx.label);
      if (!a) return a.error();
    }
    Groups g = group(ctx.inputs[0]);
    const auto u = static_cast<int64_t>(g.first.size());
    Dims y = has_axis_ ? d : Dims{u};
    if (has_axis_) y[static_cast<int>(axis_ < 0 ? axis_ + d.rank() : axis_)] = u;
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = y;
    const int64_t n = static_cast<int64_t>(g.inverse.size());
    const Dims sizes[] = {Dims{u}, Dims{n}, Dims{u}};
    for (std::size_t k = 1; k < ctx.outputs.size() && k < 4; ++k) {
      ctx.outputs[k].dtype = DType::int64;
      ctx.outputs[k].dims = sizes[k - 1];
    }
    return {};
  }
  void run(const RunContext& ctx) const override {
    Groups g = group(ctx.inputs[0]);
    const View v = view(ctx.inputs[0]);
    const auto* src = static_cast<const std::byte*>(ctx.inputs[0].data);
    auto* dst = static_cast<std::byte*>(ctx.outputs[0].data);
    const auto u = static_cast<int64_t>(g.first.size());
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t j = 0; j < u; ++j)
        std::memcpy(dst + (o * u + j) * v.inner, src + (o * v.dim + g.first[j]) * v.inner,
                    static_cast<std::size_t>(v.inner));
    auto put = [&](std::size_t k, const std::vector<int64_t>& vals) {
      if (k < ctx.outputs.size() && ctx.outputs[k].present())
        std::copy(vals.begin(), vals.end(), ctx.outputs[k].as<int64_t>());
    };
    put(1, g.first);
    put(2, g.inverse);
    put(3, g.counts);
  }

 private:
  struct View {
    int64_t outer = 1, dim = 1, inner = 1;  // inner in bytes
  };
  struct Groups {
    std::vector<int64_t> first, inverse, counts;
  };
  [[nodiscard]] View view(const ConstTensorView& x) const {
    const auto es = static_cast<int64_t>(dtype_size(x.dtype));
    if (!has_axis_) return View{1, x.numel(), es};
    const auto a = kern::around_axis(x.dims, axis_, es);
    return View{a.outer, a.dim, a.inner};
  }
  // Element/slice j as a vector of doubles (every outer block, then the inner elements).
  [[nodiscard]] std::vector<double> key(const ConstTensorView& x, const View& v, int64_t j) const {
    const auto es = static_cast<int64_t>(dtype_size(x.dtype));
    const int64_t per = v.inner / es;
    std::vector<double> k;
    k.reserve(static_cast<std::size_t>(v.outer * per));
    (void)kern::dispatch_dtype<kern::kAllNumeric | kern::kBool>(x.dtype, [&](auto tag) {
      constexpr DType D = decltype(tag)::value;
      const auto* p = x.as<kern::storage_t<D>>();
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < per; ++i) {
          const auto e = p[(o * v.dim + j) * per + i];
          if constexpr (D == DType::float16)
            k.push_back(kern::half_to_float(e));
          else
            k.push_back(static_cast<double>(e));
        }
    });
    return k;
  }
  [[nodiscard]] Groups group(const ConstTensorView& x) const {
    const View v = view(x);
    std::map<std::vector<double>, int64_t> seen;  // key -> group (in first-occurrence order)
    Groups g;
    std::vector<std::vector<double>> keys;
    for (int64_t j = 0; j < v.dim; ++j) {
      auto k = key(x, v, j);
      auto [it, fresh] = seen.emplace(k, static_cast<int64_t>(g.first.size()));
      if (fresh) {
        g.first.push_back(j);
        g.counts.push_back(0);
        keys.push_back(std::move(k));
      }
      g.inverse.push_back(it->second);
      ++g.counts[static_cast<std::size_t>(it->second)];
    }
    if (sorted_) {
      std::vector<int64_t> order(g.first.size()), rank(g.first.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
      for (std::size_t i = 0; i < order.size(); ++i)
        rank[static_cast<std::size_t>(order[i])] = static_cast<int64_t>(i);
      Groups s;
      for (int64_t o : order) {
        s.first.push_back(g.first[static_cast<std::size_t>(o)]);
        s.counts.push_back(g.counts[static_cast<std::size_t>(o)]);
      }
      for (int64_t i : g.inverse) s.inverse.push_back(rank[static_cast<std::size_t>(i)]);
      return s;
    }
    return g;
  }

  bool has_axis_;
  int64_t axis_;
  bool sorted_;
};

// ---------------------------------------------------------------- ReverseSequence

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

void register_indexing_kernels(KernelRegistry& r) {
  r.add("Trilu", [](const KernelSetup& s) -> Made {
    return make_kernel<TriluKernel>(s.node.attrs.get_int("upper", 1) != 0);
  });
  r.add("EyeLike", &make_eye_like);
  r.add("CumSum", [](const KernelSetup& s) -> Made {
    return make_kernel<CumSumKernel>(s.node.attrs.get_int("exclusive", 0) != 0,
                                     s.node.attrs.get_int("reverse", 0) != 0);
  });
  r.add("ScatterElements", &make_scatter_elements);
  r.add("Scatter", &make_scatter_elements);
  r.add("ScatterND", [](const KernelSetup& s) -> Made {
    auto red = scatter_reduction(s);
    if (!red) return red.error();
    return make_kernel<ScatterNDKernel>(*red);
  });
  r.add("GatherND", [](const KernelSetup& s) -> Made {
    return make_kernel<GatherNDKernel>(s.node.attrs.get_int("batch_dims", 0));
  });
  r.add("OneHot", [](const KernelSetup& s) -> Made {
    return make_kernel<OneHotKernel>(s.node.attrs.get_int("axis", -1));
  });
  r.add("Compress", [](const KernelSetup& s) -> Made {
    return make_kernel<CompressKernel>(s.node.attrs.has("axis"), s.node.attrs.get_int("axis", 0));
  });
  r.add("NonZero", [](const KernelSetup&) -> Made { return make_kernel<NonZeroKernel>(); });
  r.add("Unique", [](const KernelSetup& s) -> Made {
    return make_kernel<UniqueKernel>(s.node.attrs.has("axis"), s.node.attrs.get_int("axis", 0),
                                     s.node.attrs.get_int("sorted", 1) != 0);
  });
  r.add("ReverseSequence", [](const KernelSetup& s) -> Made {
    return make_kernel<ReverseSequenceKernel>(s.node.attrs.get_int("batch_axis", 1),
                                              s.node.attrs.get_int("time_axis", 0));
  });
}

}  // namespace weave
