// ArgMax and ArgMin (one kernel).
#include <algorithm>
#include <cmath>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::make_kernel;

using Factory = Expected<std::unique_ptr<Kernel>>;

template <bool is_max>
class ArgKernel final : public Kernel {
 public:
  ArgKernel(int64_t axis, bool keepdims, bool last) : axis_(axis), keepdims_(keepdims), last_(last) {}

  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0)) return make_error(ctx.label, ": input 0 is missing");
    const DType t = ctx.inputs[0].dtype;
    if (t != DType::float32 && t != DType::float64 && t != DType::int64 && t != DType::int32)
      return make_error(ctx.label, ": dtype ", dtype_name(t), " is not supported");
    const Dims& in = ctx.inputs[0].dims;
    auto a = kern::normalize_axis(axis_, in.rank(), ctx.label);
    if (!a) return a.error();
    if (in[*a] == 0)
      return make_error(ctx.label, ": cannot take ", is_max ? "ArgMax" : "ArgMin", " over empty axis ", axis_,
                        " of shape ", dims_str(in));
    Dims out;
    for (int i = 0; i < in.rank(); ++i) {
      if (i != *a)
        out.push_back(in[i]);
      else if (keepdims_)
        out.push_back(1);
    }
    ctx.outputs[0].dtype = DType::int64;
    ctx.outputs[0].dims = out;
    return {};
  }

  void run(const RunContext& ctx) const override {
    kern::dispatch_numeric(ctx.inputs[0].dtype, [&](auto tag) { run_typed<decltype(tag)>(ctx); });
  }

 private:
  template <class T>
  void run_typed(const RunContext& ctx) const {
    const ConstTensorView& in = ctx.inputs[0];
    const auto [a, outer, dim, inner] = kern::around_axis(in.dims, axis_);
    const T* x = in.as<T>();
    int64_t* y = ctx.outputs[0].as<int64_t>();
    ctx.parallel.for_range(outer * inner, std::max<int64_t>(1, kern::kGrain / std::max<int64_t>(1, dim)),
                           [&](int64_t b, int64_t e) {
                             for (int64_t t = b; t < e; ++t) {
                               const T* p = x + (t / inner) * dim * inner + t % inner;
                               T best = p[0];
                               int64_t bi = 0;
                               for (int64_t k = 1; k < dim; ++k) {
                                 const T v = p[k * inner];
                                 const bool better =
                                     is_max ? (last_ ? v >= best : v > best) : (last_ ? v <= best : v < best);
                                 if (better) {
                                   best = v;
                                   bi = k;
                                 }
                               }
                               y[t] = bi;
                             }
                           });
  }

  int64_t axis_;
  bool keepdims_, last_;
};

template <bool is_max>
Factory make_arg(const KernelSetup& s) {
  return make_kernel<ArgKernel<is_max>>(s.node.attrs.get_int("axis", 0),
                                        s.node.attrs.get_int("keepdims", 1) != 0,
                                        s.node.attrs.get_int("select_last_index", 0) != 0);
}

}  // namespace

void register_arg_max(KernelRegistry& r) {
  r.add("ArgMax", &make_arg<true>);
  r.add("ArgMin", &make_arg<false>);
}

}  // namespace weave
