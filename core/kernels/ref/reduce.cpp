// The reductions ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum and ReduceLogSumExp (one kernel).
//
// Axes come from the `axes` attribute (opset < 18; ReduceSum < 13) or from the optional int64
// input 1 (ReduceSum >= 13, all >= 18), which must be known at infer time. Both forms are
// accepted at any opset. Float sums accumulate in double; integer sums and products wrap.
// Reducing an empty set gives the identity of the op (0 for sums, 1 for Prod, -inf/+inf or the
// type's extremes for Max/Min, NaN for a float Mean, 0 for an integer Mean).
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <type_traits>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::make_kernel;

using Factory = Expected<std::unique_ptr<Kernel>>;

enum class Red { sum, mean, max, min, prod, l1, l2, sum_square, log_sum, log_sum_exp };

constexpr bool float_only(Red op) {
  return op == Red::l2 || op == Red::log_sum || op == Red::log_sum_exp;
}

// Per-op accumulation. Acc is double for floats; for integers an unsigned type so that
// overflow wraps instead of being undefined.
template <Red op, class T>
struct Reducer {
  static constexpr bool kFloat = std::is_floating_point_v<T>;
  static auto acc_tag() {
    if constexpr (op == Red::max || op == Red::min)
      return std::type_identity<T>{};
    else if constexpr (kFloat)
      return std::type_identity<double>{};
    else
      return std::make_unsigned<T>{};
  }
  using Acc = typename decltype(acc_tag())::type;
  static Acc init() {
    if constexpr (op == Red::max)
      return kFloat ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    else if constexpr (op == Red::min)
      return kFloat ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    else if constexpr (op == Red::prod)
      return Acc(1);
    else
      return Acc(0);
  }
  static void step(Acc& a, T x) {
    if constexpr (op == Red::max)
      a = x > a ? x : a;
    else if constexpr (op == Red::min)
      a = x < a ? x : a;
    else if constexpr (op == Red::prod)
      a = static_cast<Acc>(a * static_cast<Acc>(x));
    else if constexpr (op == Red::l1)
      a = static_cast<Acc>(a + static_cast<Acc>(x < 0 ? Acc(0) - static_cast<Acc>(x) : static_cast<Acc>(x)));
    else if constexpr (op == Red::l2 || op == Red::sum_square)
      a = static_cast<Acc>(a + static_cast<Acc>(x) * static_cast<Acc>(x));
    else
      a = static_cast<Acc>(a + static_cast<Acc>(x));
  }
  static T finish(Acc a, int64_t count) {
    if constexpr (op == Red::mean) {
      if constexpr (kFloat)
        return static_cast<T>(count > 0 ? a / static_cast<double>(count) : std::nan(""));
      else
        return count > 0 ? static_cast<T>(static_cast<T>(a) / count) : T(0);
    } else if constexpr (op == Red::l2) {
      return static_cast<T>(std::sqrt(a));
    } else if constexpr (op == Red::log_sum) {
      return static_cast<T>(std::log(a));
    } else {
      return static_cast<T>(a);
    }
  }
};

// Marks reduced axes. `label` null = no validation (run path).
Status reduce_mask(const Dims& d, std::span<const int64_t> axes, bool noop_empty,
                   std::array<bool, kMaxRank>& mask, bool& identity, const std::string* label) {
  mask.fill(false);
  identity = false;
  if (axes.empty()) {
    if (noop_empty) {
      identity = true;
      return {};
    }
    for (int i = 0; i < d.rank(); ++i) mask[i] = true;
    return {};
  }
  for (int64_t a : axes) {
    const int64_t n = a < 0 ? a + d.rank() : a;
    if (n < 0 || n >= d.rank()) {
      if (label) return make_error(*label, ": axis ", a, " is out of range for shape ", dims_str(d));
      continue;
    }
    mask[n] = true;
  }
  return {};
}

template <Red op>
class ReduceKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // axes (opset 18)
  ReduceKernel(std::vector<int64_t> axes, bool has_attr_axes, bool keepdims, bool noop)
      : axes_(std::move(axes)), attr_axes_(has_attr_axes), keepdims_(keepdims), noop_(noop) {}

  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0)) return make_error(ctx.label, ": input 0 is missing");
    const DType t = ctx.inputs[0].dtype;
    const bool ok = t == DType::float32 || t == DType::float64 ||
                    (!float_only(op) && (t == DType::int64 || t == DType::int32));
    if (!ok) return make_error(ctx.label, ": dtype ", dtype_name(t), " is not supported");
    std::vector<int64_t> axes = axes_;
    if (!attr_axes_ && has_input(ctx.inputs, 1)) {
      if (ctx.inputs[1].data == nullptr && ctx.inputs[1].numel() > 0)
        return make_error(ctx.label, ": axes are only known at run time; they must be a constant");
      auto a = kern::read_ints(ctx.inputs[1], ctx.label, "axes");
      if (!a) return a.error();
      axes = *a;
    }
    const Dims& in = ctx.inputs[0].dims;
    std::array<bool, kMaxRank> mask{};
    bool identity = false;
    WEAVE_TRY(reduce_mask(in, axes, noop_, mask, identity, &ctx.label));
    Dims out;
    for (int i = 0; i < in.rank(); ++i) {
      if (!mask[i])
        out.push_back(in[i]);
      else if (keepdims_)
        out.push_back(1);
    }
    ctx.outputs[0].dtype = t;
    ctx.outputs[0].dims = out;
    return {};
  }

  void run(const RunContext& ctx) const override {
    kern::dispatch_numeric(ctx.inputs[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T> || !float_only(op)) run_typed<T>(ctx);
    });
  }

 private:
  template <class T>
  void run_typed(const RunContext& ctx) const {
    const ConstTensorView& in = ctx.inputs[0];
    const Dims& d = in.dims;
    std::array<int64_t, kMaxRank> ax{};
    std::size_t nax = 0;
    if (attr_axes_ || !has_input(ctx.inputs, 1)) {
      nax = std::min<std::size_t>(axes_.size(), kMaxRank);
      for (std::size_t i = 0; i < nax; ++i) ax[i] = axes_[i];
    } else {
      nax = std::min<std::size_t>(static_cast<std::size_t>(ctx.inputs[1].numel()), kMaxRank);
      for (std::size_t i = 0; i < nax; ++i) ax[i] = kern::int_at(ctx.inputs[1], static_cast<int64_t>(i));
    }
    std::array<bool, kMaxRank> mask{};
    bool identity = false;
    (void)reduce_mask(d, {ax.data(), nax}, noop_, mask, identity, nullptr);
    if (identity) {
      kern::copy_bytes(ctx.outputs[0].data, in.data, ctx.outputs[0].bytes());
      return;
    }
    // No output: nothing to do (an empty input's other dims may not multiply).
    if (ctx.outputs[0].numel() == 0) return;
    // Kept axes address the outputs; reduced axes are walked for each output. An empty reduced
    // axis makes every output the reduction of nothing (count 0), whatever the other axes are.
    const Dims st = strides_of(d);
    kern::Plan kept, red;
    kept.n = red.n = 1;
    kept.rank = red.rank = 0;
    bool none = false;
    for (int i = 0; i < d.rank(); ++i) none = none || (mask[i] && d[i] == 0);
    int64_t count = none ? 0 : 1;
    for (int i = 0; i < d.rank(); ++i) {
      kern::Plan& p = mask[i] ? red : kept;
      p.dims[p.rank] = d[i];
      p.strides[0][p.rank] = st[i];
      ++p.rank;
      if (mask[i] && !none) count *= d[i];
    }
    kept.coalesce();
    red.coalesce();
    const T* x = in.as<T>();
    T* y = ctx.outputs[0].as<T>();
    using R = Reducer<op, T>;
    const int64_t n_out = ctx.outputs[0].numel();
    ctx.parallel.for_range(
        n_out, std::max<int64_t>(1, kern::kGrain / std::max<int64_t>(1, count)), [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o) {
            int64_t base = 0, rem = o;
            for (int i = kept.rank - 1; i >= 0; --i) {
              base += (rem % kept.dims[i]) * kept.strides[0][i];
              rem /= kept.dims[i];
            }
            if constexpr (op == Red::log_sum_exp) {
              double mx = -std::numeric_limits<double>::infinity();
              kern::for_each_run<1>(red, 0, count, {base},
                                    [&](int64_t, const std::array<int64_t, 1>& off, int64_t len) {
                                      const int64_t s = red.inner_stride(0);
                                      for (int64_t j = 0; j < len; ++j)
                                        mx = std::max(mx, static_cast<double>(x[off[0] + j * s]));
                                    });
              if (!std::isfinite(mx)) {
                y[o] = static_cast<T>(mx);  // empty -> -inf; +inf stays +inf
                continue;
              }
              double sum = 0;
              kern::for_each_run<1>(red, 0, count, {base},
                                    [&](int64_t, const std::array<int64_t, 1>& off, int64_t len) {
                                      const int64_t s = red.inner_stride(0);
                                      for (int64_t j = 0; j < len; ++j)
                                        sum += std::exp(static_cast<double>(x[off[0] + j * s]) - mx);
                                    });
              y[o] = static_cast<T>(mx + std::log(sum));
            } else {
              typename R::Acc acc = R::init();
              kern::for_each_run<1>(red, 0, count, {base},
                                    [&](int64_t, const std::array<int64_t, 1>& off, int64_t len) {
                                      const int64_t s = red.inner_stride(0);
                                      const T* p = x + off[0];
                                      if (s == 1) {
                                        for (int64_t j = 0; j < len; ++j) R::step(acc, p[j]);
                                      } else {
                                        for (int64_t j = 0; j < len; ++j) R::step(acc, p[j * s]);
                                      }
                                    });
              y[o] = R::finish(acc, count);
            }
          }
        });
  }

  std::vector<int64_t> axes_;
  bool attr_axes_, keepdims_, noop_;
};

template <Red op>
Factory make_reduce(const KernelSetup& s) {
  const bool has_attr = s.node.attrs.has("axes");
  return make_kernel<ReduceKernel<op>>(s.node.attrs.get_ints("axes"), has_attr,
                                       s.node.attrs.get_int("keepdims", 1) != 0,
                                       s.node.attrs.get_int("noop_with_empty_axes", 0) != 0);
}

}  // namespace

void register_reduce(KernelRegistry& r) {
  r.add("ReduceSum", &make_reduce<Red::sum>);
  r.add("ReduceMean", &make_reduce<Red::mean>);
  r.add("ReduceMax", &make_reduce<Red::max>);
  r.add("ReduceMin", &make_reduce<Red::min>);
  r.add("ReduceProd", &make_reduce<Red::prod>);
  r.add("ReduceL1", &make_reduce<Red::l1>);
  r.add("ReduceL2", &make_reduce<Red::l2>);
  r.add("ReduceSumSquare", &make_reduce<Red::sum_square>);
  r.add("ReduceLogSum", &make_reduce<Red::log_sum>);
  r.add("ReduceLogSumExp", &make_reduce<Red::log_sum_exp>);
}

}  // namespace weave
