// Range.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::has_input;
using kern::make_kernel;

using Factory = Expected<std::unique_ptr<Kernel>>;

class RangeKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return input_bits(0, 2); }
  Status infer(ShapeContext& ctx) const override {
    const char* names[] = {"start", "limit", "delta"};
    for (std::size_t i = 0; i < 3; ++i) {
      if (!has_input(ctx.inputs, i)) return make_error(ctx.label, ": Range needs ", names[i]);
      const ConstTensorView& v = ctx.inputs[i];
      if (v.numel() != 1) return make_error(ctx.label, ": ", names[i], " must be a scalar");
      if (v.data == nullptr)
        return make_error(ctx.label, ": ", names[i],
                          " of Range is only known at run time; it must be a constant");
      if (v.dtype != ctx.inputs[0].dtype) return make_error(ctx.label, ": Range inputs must share one dtype");
    }
    const DType t = ctx.inputs[0].dtype;
    double n = 0;
    if (t == DType::float32 || t == DType::float64) {
      auto get = [&](int i) {
        return t == DType::float32 ? double(*ctx.inputs[i].as<float>()) : *ctx.inputs[i].as<double>();
      };
      const double start = get(0), limit = get(1), delta = get(2);
      if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
        return make_error(ctx.label, ": invalid Range (start ", start, ", limit ", limit, ", delta ", delta,
                          ")");
      n = std::ceil((limit - start) / delta);
    } else if (t == DType::int64 || t == DType::int32) {
      const int64_t start = kern::int_at(ctx.inputs[0], 0), limit = kern::int_at(ctx.inputs[1], 0),
                    delta = kern::int_at(ctx.inputs[2], 0);
      if (delta == 0) return make_error(ctx.label, ": Range delta is 0");
      n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
    } else {
      return make_error(ctx.label, ": dtype ", dtype_name(t), " is not supported");
    }
    if (n > static_cast<double>(int64_t{1} << 31))
      return make_error(ctx.label, ": Range output is too large");
    ctx.outputs[0].dtype = t;
    // Compared before the conversion: a count of -4e26 (limit far below start) is no int64.
    ctx.outputs[0].dims = Dims{n > 0 ? static_cast<int64_t>(n) : 0};
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    const int64_t n = out.numel();
    kern::dispatch_numeric(out.dtype, [&](auto tag) { fill<decltype(tag)>(ctx, n); });
  }

 private:
  template <class T>
  static void fill(const RunContext& ctx, int64_t n) {
    const T start = *ctx.inputs[0].as<T>(), delta = *ctx.inputs[2].as<T>();
    T* o = ctx.outputs[0].as<T>();
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;  // wraps instead of overflowing
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(U(start) + U(i) * U(delta));
    } else {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    }
  }
};

}  // namespace

void register_range(KernelRegistry& r) {
  r.add("Range", [](const KernelSetup&) -> Factory { return make_kernel<RangeKernel>(); });
}

}  // namespace weave
