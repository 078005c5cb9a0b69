// The broadcasting arithmetic ops Add, Sub, Mul, Div, Max, Min, Sum, Mean and Mod (one kernel,
// BinaryKernel in elementwise.h, which the comparisons and logical ops share), and Pow.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/kernels/ref/elementwise.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::Bin;
using kern::infer_two;
using kern::make_binary;
using kern::make_kernel;
using kern::saturate;
using kern::wrap;

// ---------------------------------------------------------------- Pow

// Pow(X: T, Y: T1) -> T, where the exponent may have another dtype than the base. Integer
// base and exponent: exact, wrapping integer power (a negative exponent gives 0 unless the base
// is 1 or -1). Otherwise computed in double and converted to T (truncated and saturated for an
// integer T, like Cast).
template <class T>
T int_pow(T base, int64_t e) {
  if (e < 0) {
    if (base == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>)
      if (base == T(-1)) return (e % 2 == 0) ? T(1) : T(-1);
    return T(0);
  }
  T r = T(1);
  while (e > 0) {
    if (e & 1) r = wrap(r, base, '*');
    base = wrap(base, base, '*');
    e >>= 1;
  }
  return r;
}

constexpr unsigned kPowBase = kern::kFloats | kern::kHalf | kern::kSigned | kern::kUnsigned;

// Element i of the exponent, read through one switch per element rather than a kernel per
// (base, exponent) dtype pair: 11 instantiations instead of 121 (which were half of this file's
// compile time in every build), and std::pow costs more than the switch.
struct Exponent {
  const void* data;
  DType dtype;

  [[nodiscard]] bool integral() const { return !kern::in_set<kern::kFloats | kern::kHalf>(dtype); }

  // As a double (a float exponent, or an integer one for a float base).
  [[nodiscard]] double real(int64_t i) const {
    double v = 0;
    (void)kern::dispatch_dtype<kPowBase>(dtype, [&](auto tag) {
      const auto b = static_cast<const kern::storage_t<decltype(tag)::value>*>(data)[i];
      if constexpr (decltype(tag)::value == DType::float16)
        v = kern::half_to_float(b);
      else
        v = static_cast<double>(b);
    });
    return v;
  }

  // An integer exponent for int_pow: -1 for any negative one, large ones clamped to 2^62.
  [[nodiscard]] int64_t whole(int64_t i) const {
    int64_t v = 0;
    (void)kern::dispatch_dtype<kern::kSigned | kern::kUnsigned>(dtype, [&](auto tag) {
      using B = kern::storage_t<decltype(tag)::value>;
      const B b = static_cast<const B*>(data)[i];
      if constexpr (std::is_signed_v<B>)
        if (b < 0) {
          v = -1;
          return;
        }
      v = static_cast<int64_t>(std::min<uint64_t>(static_cast<uint64_t>(b), uint64_t{1} << 62));
    });
    return v;
  }
};

class PowKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    return infer_two(ctx, "numbers",
                     [](DType a, DType b) { return kern::in_set<kPowBase>(a) && kern::in_set<kPowBase>(b); });
  }

  void run(const RunContext& ctx) const override {
    kern::dispatch_dtype<kPowBase>(ctx.inputs[0].dtype, [&](auto a) { run_typed<decltype(a)::value>(ctx); });
  }

 private:
  template <DType DA>
  static void run_typed(const RunContext& ctx) {
    using A = kern::storage_t<DA>;
    const auto& in = ctx.inputs;
    const TensorView& out = ctx.outputs[0];
    const kern::Plan p = kern::broadcast_plan(out.dims, {&in[0].dims, &in[1].dims});
    const A* x = in[0].as<A>();
    const Exponent y{in[1].data, in[1].dtype};
    const bool int_power = std::is_integral_v<A> && DA != DType::float16 && y.integral();
    A* o = out.as<A>();
    auto f = [&](A a, int64_t j) -> A {
      if constexpr (std::is_integral_v<A> && DA != DType::float16)
        if (int_power) return int_pow(a, y.whole(j));
      double base;
      if constexpr (DA == DType::float16)
        base = kern::half_to_float(a);
      else
        base = static_cast<double>(a);
      const double r = std::pow(base, y.real(j));
      if constexpr (DA == DType::float16)
        return kern::float_to_half(static_cast<float>(r));
      else if constexpr (std::is_floating_point_v<A>)
        return static_cast<A>(r);
      else
        return saturate<A>(r);
    };
    ctx.parallel.for_range(out.numel(), kern::kGrain, [&](int64_t begin, int64_t end) {
      kern::for_each_run<2>(p, begin, end, {0, 0},
                            [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t len) {
                              const int64_t sx = p.inner_stride(0), sy = p.inner_stride(1);
                              for (int64_t j = 0; j < len; ++j)
                                o[oo + j] = f(x[off[0] + j * sx], off[1] + j * sy);
                            });
    });
  }
};

}  // namespace

bool kern::is_pow_kernel(const Kernel& k) {
  return dynamic_cast<const PowKernel*>(&k) != nullptr;
}

void register_binary(KernelRegistry& r) {
  r.add("Add", &make_binary<Bin::add>);
  r.add("Sub", &make_binary<Bin::sub>);
  r.add("Mul", &make_binary<Bin::mul>);
  r.add("Div", &make_binary<Bin::div>);
  r.add("Pow", [](const KernelSetup&) { return make_kernel<PowKernel>(); });
  r.add("Max", &make_binary<Bin::max>);
  r.add("Min", &make_binary<Bin::min>);
  r.add("Sum", &make_binary<Bin::sum>);
  r.add("Mean", &make_binary<Bin::mean>);
  r.add("Mod", &make_binary<Bin::mod>);
}

}  // namespace weave
