// Unique.
// Its output shape depends on input values (Kernel::value_inputs): the planner computes it once
// those values are known (core/runtime/plan.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;
using kern::need;
using kern::need_values;

using Made = Expected<std::unique_ptr<Kernel>>;

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
    const int64_t n = g.inverse_size();
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
    // Empty slices: nothing to copy (outer may be huge beside a zero inner, or the reverse).
    for (int64_t o = 0; v.inner > 0 && o < v.outer; ++o)
      for (int64_t j = 0; j < u; ++j)
        std::memcpy(dst + (o * u + j) * v.inner, src + (o * v.dim + g.first[j]) * v.inner,
                    static_cast<std::size_t>(v.inner));
    auto put = [&](std::size_t k, const std::vector<int64_t>& vals) {
      if (k < ctx.outputs.size() && ctx.outputs[k].present())
        std::copy(vals.begin(), vals.end(), ctx.outputs[k].as<int64_t>());
    };
    put(1, g.first);
    if (g.empty_slices && 2 < ctx.outputs.size() && ctx.outputs[2].present())
      std::fill_n(ctx.outputs[2].as<int64_t>(), g.rows, int64_t{0});
    else
      put(2, g.inverse);
    put(3, g.counts);
  }

 private:
  struct View {
    int64_t outer = 1, dim = 1, inner = 1;  // inner in bytes
  };
  struct Groups {
    std::vector<int64_t> first, inverse, counts;
    // Slices of no elements (an empty tensor with a nonzero axis dim) are all equal: one group of
    // `rows`, whose inverse (all 0) is not spelled out -- a hostile dim of 2^32 would cost 32 GB.
    bool empty_slices = false;
    int64_t rows = 0;
    [[nodiscard]] int64_t inverse_size() const {
      return empty_slices ? rows : static_cast<int64_t>(inverse.size());
    }
  };
  [[nodiscard]] View view(const ConstTensorView& x) const {
    const auto es = static_cast<int64_t>(dtype_size(x.dtype));
    if (!has_axis_) return View{1, x.numel(), es};
    const auto a = kern::around_axis(x.dims, axis_, es);
    return View{a.outer, a.dim, a.inner};
  }
  // Every element/slice as a row of keys (every outer block, then the inner elements), rows one
  // after another: keys[j * per_row ...]. long double holds every int64 and uint64 exactly
  // (a double would merge 2^53 and 2^53 + 1).
  [[nodiscard]] std::vector<long double> keys(const ConstTensorView& x, const View& v,
                                              int64_t& per_row) const {
    const auto es = static_cast<int64_t>(dtype_size(x.dtype));
    const int64_t per = v.inner / es;
    per_row = v.outer * per;
    std::vector<long double> k(static_cast<std::size_t>(v.dim * per_row));
    (void)kern::dispatch_dtype<kern::kAllNumeric | kern::kBool>(x.dtype, [&](auto tag) {
      constexpr DType D = decltype(tag)::value;
      const auto* p = x.as<kern::storage_t<D>>();
      for (int64_t j = 0; j < v.dim; ++j)
        for (int64_t o = 0; o < v.outer; ++o)
          for (int64_t i = 0; i < per; ++i) {
            const auto e = p[(o * v.dim + j) * per + i];
            long double d;
            if constexpr (D == DType::float16)
              d = kern::half_to_float(e);
            else
              d = static_cast<long double>(e);
            k[static_cast<std::size_t>(j * per_row + o * per + i)] = d;
          }
    });
    return k;
  }
  // Groups of equal rows by sorting row indices (stably: a group's first index is its first
  // occurrence): memory a few words per row, where a map of row copies took ~250 bytes per
  // element (a hostile 4M-element Range fed to Unique took 1 GB). NaNs order last and equal
  // each other.
  [[nodiscard]] Groups group(const ConstTensorView& x) const {
    const View v = view(x);
    if (v.dim > 0 && (v.outer == 0 || v.inner == 0)) {
      Groups g;
      g.first = {0};
      g.counts = {v.dim};
      g.empty_slices = true;
      g.rows = v.dim;
      return g;
    }
    int64_t per = 0;
    const std::vector<long double> k = keys(x, v, per);
    auto row = [&](int64_t j) { return k.data() + j * per; };
    auto less = [](long double a, long double b) {
      return std::isnan(a) ? false : std::isnan(b) ? true : a < b;
    };
    auto row_less = [&](int64_t a, int64_t b) {
      const long double *ra = row(a), *rb = row(b);
      for (int64_t i = 0; i < per; ++i) {
        if (less(ra[i], rb[i])) return true;
        if (less(rb[i], ra[i])) return false;
      }
      return false;
    };
    std::vector<int64_t> order(static_cast<std::size_t>(v.dim));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), row_less);
    // Runs of equal rows in sorted order; group_of[j] is run's number.
    Groups g;
    std::vector<int64_t> run_of(static_cast<std::size_t>(v.dim));
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i == 0 || row_less(order[i - 1], order[i])) {
        g.first.push_back(order[i]);
        g.counts.push_back(0);
      }
      run_of[static_cast<std::size_t>(order[i])] = static_cast<int64_t>(g.first.size()) - 1;
      ++g.counts.back();
    }
    // sorted = 0: groups in order of first occurrence instead.
    std::vector<int64_t> number(g.first.size());
    std::iota(number.begin(), number.end(), 0);
    if (!sorted_) {
      std::vector<int64_t> by_first(g.first.size());
      std::iota(by_first.begin(), by_first.end(), 0);
      std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
        return g.first[static_cast<std::size_t>(a)] < g.first[static_cast<std::size_t>(b)];
      });
      Groups o;
      for (std::size_t i = 0; i < by_first.size(); ++i) {
        number[static_cast<std::size_t>(by_first[i])] = static_cast<int64_t>(i);
        o.first.push_back(g.first[static_cast<std::size_t>(by_first[i])]);
        o.counts.push_back(g.counts[static_cast<std::size_t>(by_first[i])]);
      }
      g.first = std::move(o.first);
      g.counts = std::move(o.counts);
    }
    g.inverse.resize(static_cast<std::size_t>(v.dim));
    for (std::size_t j = 0; j < run_of.size(); ++j)
      g.inverse[j] = number[static_cast<std::size_t>(run_of[j])];
    return g;
  }

  bool has_axis_;
  int64_t axis_;
  bool sorted_;
};

}  // namespace

void register_unique(KernelRegistry& r) {
  r.add("Unique", [](const KernelSetup& s) -> Made {
    return make_kernel<UniqueKernel>(s.node.attrs.has("axis"), s.node.attrs.get_int("axis", 0),
                                     s.node.attrs.get_int("sorted", 1) != 0);
  });
}

}  // namespace weave
