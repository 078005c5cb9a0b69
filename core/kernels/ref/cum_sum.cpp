// CumSum (exclusive and reverse too).
#include <type_traits>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;
using kern::need;
using kern::need_int;

using Made = Expected<std::unique_ptr<Kernel>>;

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

}  // namespace

void register_cum_sum(KernelRegistry& r) {
  r.add("CumSum", [](const KernelSetup& s) -> Made {
    return make_kernel<CumSumKernel>(s.node.attrs.get_int("exclusive", 0) != 0,
                                     s.node.attrs.get_int("reverse", 0) != 0);
  });
}

}  // namespace weave
