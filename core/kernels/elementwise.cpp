// Reference elementwise kernels: broadcasting binary and variadic ops, comparisons and logic,
// Where, PRelu, unary math, Clip, Identity/Dropout and Cast.
//
// Integer arithmetic wraps (computed in the unsigned type) and integer division or modulo by
// zero yields 0, so that no input value can cause undefined behaviour. Float->integer Cast
// truncates toward zero and saturates (NaN -> 0) for the same reason.
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <type_traits>

#include "core/kernels/in_place.h"
#include "core/kernels/kernel_util.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;

template <class T>
T wrap(T a, T b, char op) {
  // In the unsigned type of the promoted operands: int8 * int8 promotes to int, whose product
  // must not overflow either.
  using U = std::make_unsigned_t<decltype(a + b)>;
  const U ua = static_cast<U>(a), ub = static_cast<U>(b);
  switch (op) {
    case '+':
      return static_cast<T>(ua + ub);
    case '-':
      return static_cast<T>(ua - ub);
    default:
      return static_cast<T>(ua * ub);
  }
}

// ---------------------------------------------------------------- binary ops

enum class Bin { add, sub, mul, div, max, min, mod, sum, mean, eq, lt, gt, le, ge, land, lor, lxor };

constexpr bool is_compare(Bin op) {
  return op == Bin::eq || op == Bin::lt || op == Bin::gt || op == Bin::le || op == Bin::ge;
}
constexpr bool is_logic(Bin op) {
  return op == Bin::land || op == Bin::lor || op == Bin::lxor;
}
constexpr bool is_variadic(Bin op) {
  return op == Bin::max || op == Bin::min || op == Bin::sum || op == Bin::mean;
}

template <Bin op, class T>
struct BinFn {
  bool fmod = false;
  auto operator()(T a, T b) const {
    if constexpr (op == Bin::add || op == Bin::sum || op == Bin::mean) {
      if constexpr (std::is_integral_v<T>)
        return wrap(a, b, '+');
      else
        return static_cast<T>(a + b);
    } else if constexpr (op == Bin::sub) {
      if constexpr (std::is_integral_v<T>)
        return wrap(a, b, '-');
      else
        return static_cast<T>(a - b);
    } else if constexpr (op == Bin::mul) {
      if constexpr (std::is_integral_v<T>)
        return wrap(a, b, '*');
      else
        return static_cast<T>(a * b);
    } else if constexpr (op == Bin::div) {
      if constexpr (std::is_integral_v<T>) {
        if (b == 0) return T(0);
        if constexpr (std::is_signed_v<T>)
          if (b == T(-1)) return wrap(T(0), a, '-');  // avoids INT_MIN / -1
        return static_cast<T>(a / b);
      } else {
        return static_cast<T>(a / b);
      }
    } else if constexpr (op == Bin::max) {
      return a < b ? b : a;
    } else if constexpr (op == Bin::min) {
      return b < a ? b : a;
    } else if constexpr (op == Bin::mod) {
      if constexpr (std::is_unsigned_v<T>) {
        return b == 0 ? T(0) : static_cast<T>(a % b);
      } else if constexpr (std::is_integral_v<T>) {
        if (b == 0 || b == T(-1)) return T(0);
        T r = static_cast<T>(a % b);
        // fmod=0: the result takes the sign of the divisor (Python semantics).
        if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
      } else {
        T r = std::fmod(a, b);
        if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
      }
    } else if constexpr (op == Bin::eq) {
      if constexpr (std::is_same_v<T, uint8_t>)
        return static_cast<uint8_t>((a != 0) == (b != 0));
      else
        return static_cast<uint8_t>(a == b);
    } else if constexpr (op == Bin::lt) {
      return static_cast<uint8_t>(a < b);
    } else if constexpr (op == Bin::gt) {
      return static_cast<uint8_t>(a > b);
    } else if constexpr (op == Bin::le) {
      return static_cast<uint8_t>(a <= b);
    } else if constexpr (op == Bin::ge) {
      return static_cast<uint8_t>(a >= b);
    } else if constexpr (op == Bin::land) {
      return static_cast<uint8_t>((a != 0) && (b != 0));
    } else if constexpr (op == Bin::lor) {
      return static_cast<uint8_t>((a != 0) || (b != 0));
    } else {
      return static_cast<uint8_t>((a != 0) != (b != 0));
    }
  }
};

// o[j] = f(a[j*sa], b[j*sb]) with sa, sb in {0, 1}; the four cases keep the loops vectorisable.
template <class F, class A, class O>
inline void bin_loop(const A* a, int64_t sa, const A* b, int64_t sb, O* o, int64_t n, const F& f) {
  if (sa != 0 && sb != 0) {
    for (int64_t j = 0; j < n; ++j) o[j] = f(a[j], b[j]);
  } else if (sa != 0) {
    const A bv = *b;
    for (int64_t j = 0; j < n; ++j) o[j] = f(a[j], bv);
  } else if (sb != 0) {
    const A av = *a;
    for (int64_t j = 0; j < n; ++j) o[j] = f(av, b[j]);
  } else {
    const auto v = f(*a, *b);
    for (int64_t j = 0; j < n; ++j) o[j] = v;
  }
}

// out = f(a, b) with both broadcast to out's dims.
template <class F, class A, class O>
void broadcast_binary(const A* a, const Dims& ad, const A* b, const Dims& bd, O* out, const Dims& od,
                      const F& f, const Parallel& par) {
  const kern::Plan p = kern::broadcast_plan(od, {&ad, &bd});
  par.for_range(od.numel(), kern::kGrain, [&](int64_t begin, int64_t end) {
    kern::for_each_run<2>(
        p, begin, end, {0, 0}, [&](int64_t o, const std::array<int64_t, 2>& off, int64_t len) {
          bin_loop(a + off[0], p.inner_stride(0), b + off[1], p.inner_stride(1), out + o, len, f);
        });
  });
}

bool bin_supports(Bin op, DType t) {
  if (is_logic(op)) return t == DType::boolean;
  if (op == Bin::eq) return kern::in_set<kern::kAllNumeric | kern::kBool>(t);
  return kern::in_set<kern::kAllNumeric>(t);
}

// float16 in, float16 out (comparisons: bool out), computed in float32.
template <class F>
struct HalfFn {
  F f;
  auto operator()(uint16_t a, uint16_t b) const {
    const auto r = f(kern::half_to_float(a), kern::half_to_float(b));
    if constexpr (std::is_same_v<decltype(r), const uint8_t>)
      return r;
    else
      return kern::float_to_half(r);
  }
};

template <Bin op>
class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(bool fmod) : fmod_(fmod) {}

  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.empty() || (!is_variadic(op) && in.size() != 2))
      return make_error(ctx.label, ": expects ", is_variadic(op) ? "at least 1" : "2", " inputs, got ",
                        in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (!in[i].present()) return make_error(ctx.label, ": input ", i, " is missing");
      if (in[i].dtype != in[0].dtype)
        return make_error(ctx.label, ": input dtypes differ (", dtype_name(in[0].dtype), " and ",
                          dtype_name(in[i].dtype), ")");
    }
    if (!bin_supports(op, in[0].dtype))
      return make_error(ctx.label, ": dtype ", dtype_name(in[0].dtype), " is not supported");
    auto od = kern::broadcast_inputs(in, 0, in.size(), ctx.label);
    if (!od) return od.error();
    ctx.outputs[0].dtype = (is_compare(op) || is_logic(op)) ? DType::boolean : in[0].dtype;
    ctx.outputs[0].dims = *od;
    return {};
  }

  void run(const RunContext& ctx) const override {
    kern::dispatch_dtype<kern::kAllNumeric | kern::kBool>(
        ctx.inputs[0].dtype, [&](auto tag) { run_typed<decltype(tag)::value>(ctx); });
  }

 private:
  template <DType D>
  void run_typed(const RunContext& ctx) const {
    constexpr bool is_bool = D == DType::boolean;
    constexpr bool valid = is_logic(op) ? is_bool : op == Bin::eq ? true : !is_bool;
    if constexpr (!valid) {
      return;  // infer rejected this dtype
    } else {
      using T = kern::storage_t<D>;
      using O = std::conditional_t<is_compare(op) || is_logic(op), uint8_t, T>;
      const auto& in = ctx.inputs;
      const TensorView& out = ctx.outputs[0];
      O* o = out.as<O>();
      if (in.size() == 1) {
        kern::copy_bytes(o, in[0].data, out.bytes());
        return;
      }
      auto apply = [&](const auto& f) {
        broadcast_binary(in[0].as<T>(), in[0].dims, in[1].as<T>(), in[1].dims, o, out.dims, f, ctx.parallel);
        if constexpr (is_variadic(op)) {
          for (std::size_t i = 2; i < in.size(); ++i)
            broadcast_binary(static_cast<const T*>(o), out.dims, in[i].as<T>(), in[i].dims, o, out.dims, f,
                             ctx.parallel);
        }
      };
      if constexpr (D == DType::float16)
        apply(HalfFn<BinFn<op, float>>{BinFn<op, float>{fmod_}});
      else
        apply(BinFn<op, T>{fmod_});
      if constexpr (op == Bin::mean) {
        const auto count = static_cast<double>(in.size());
        ctx.parallel.for_range(out.numel(), kern::kGrain, [&](int64_t b, int64_t e) {
          for (int64_t j = b; j < e; ++j) {
            if constexpr (D == DType::float16)
              o[j] = kern::float_to_half(static_cast<float>(kern::half_to_float(o[j]) / count));
            else
              o[j] = static_cast<T>(o[j] / static_cast<T>(count));
          }
        });
      }
    }
  }

  bool fmod_;
};

template <Bin op>
Expected<std::unique_ptr<Kernel>> make_binary(const KernelSetup& s) {
  const bool fmod = s.node.attrs.get_int("fmod", 0) != 0;
  if constexpr (op == Bin::mod) {
    if (!fmod && !s.inputs.empty() && s.inputs[0] != nullptr &&
        (s.inputs[0]->dtype == DType::float32 || s.inputs[0]->dtype == DType::float64))
      return make_error("Mod on floating point requires fmod=1");
  }
  if (s.node.outputs.size() != 1) return make_error("expects 1 output");
  return make_kernel<BinaryKernel<op>>(fmod);
}

// ---------------------------------------------------------------- Where, PRelu

class WhereKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() != 3 || !in[0].present() || !in[1].present() || !in[2].present())
      return make_error(ctx.label, ": expects 3 inputs (condition, X, Y)");
    if (in[0].dtype != DType::boolean)
      return make_error(ctx.label, ": condition must be bool, got ", dtype_name(in[0].dtype));
    if (in[1].dtype != in[2].dtype)
      return make_error(ctx.label, ": X and Y dtypes differ (", dtype_name(in[1].dtype), " and ",
                        dtype_name(in[2].dtype), ")");
    const std::size_t es = dtype_size(in[1].dtype);
    if (es != 1 && es != 2 && es != 4 && es != 8)
      return make_error(ctx.label, ": dtype ", dtype_name(in[1].dtype), " is not supported");
    auto od = kern::broadcast_inputs(in, 0, 3, ctx.label);
    if (!od) return od.error();
    ctx.outputs[0].dtype = in[1].dtype;
    ctx.outputs[0].dims = *od;
    return {};
  }

  void run(const RunContext& ctx) const override {
    (void)kern::dispatch_bytes(dtype_size(ctx.inputs[1].dtype),
                               [&](auto tag) { run_typed<decltype(tag)>(ctx); });
  }

 private:
  template <class T>
  static void run_typed(const RunContext& ctx) {
    const auto& in = ctx.inputs;
    const TensorView& out = ctx.outputs[0];
    const kern::Plan p = kern::broadcast_plan(out.dims, {&in[0].dims, &in[1].dims, &in[2].dims});
    const uint8_t* c = in[0].as<uint8_t>();
    const T* x = in[1].as<T>();
    const T* y = in[2].as<T>();
    T* o = out.as<T>();
    const int64_t sc = p.inner_stride(0), sx = p.inner_stride(1), sy = p.inner_stride(2);
    ctx.parallel.for_range(out.numel(), kern::kGrain, [&](int64_t b, int64_t e) {
      kern::for_each_run<3>(p, b, e, {0, 0, 0},
                            [&](int64_t oo, const std::array<int64_t, 3>& off, int64_t len) {
                              const uint8_t* cc = c + off[0];
                              const T* xx = x + off[1];
                              const T* yy = y + off[2];
                              T* dst = o + oo;
                              for (int64_t j = 0; j < len; ++j) dst[j] = cc[j * sc] ? xx[j * sx] : yy[j * sy];
                            });
    });
  }
};

class PReluKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() != 2 || !in[0].present() || !in[1].present())
      return make_error(ctx.label, ": expects 2 inputs (X, slope)");
    if (in[0].dtype != DType::float32 || in[1].dtype != DType::float32)
      return make_error(ctx.label, ": only float32 is supported");
    Dims od;
    if (!kern::broadcast_dims(in[0].dims, in[1].dims, od) || !(od == in[0].dims))
      return make_error(ctx.label, ": slope shape ", kern::dims_str(in[1].dims),
                        " does not broadcast to X shape ", kern::dims_str(in[0].dims));
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = in[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    broadcast_binary(
        in[0].as<float>(), in[0].dims, in[1].as<float>(), in[1].dims, ctx.outputs[0].as<float>(),
        ctx.outputs[0].dims, [](float x, float s) { return x < 0.f ? x * s : x; }, ctx.parallel);
  }
};

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

template <class I>
I saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (v <= static_cast<double>(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
  return static_cast<I>(v);  // truncates toward zero
}

constexpr unsigned kPowBase = kern::kFloats | kern::kHalf | kern::kSigned | kern::kUnsigned;

// Two present inputs broadcast into output 0 of input 0's dtype, when `dtypes_ok` holds for them.
template <class Ok>
Status infer_two(ShapeContext& ctx, const char* supported, Ok dtypes_ok) {
  const auto& in = ctx.inputs;
  if (in.size() != 2 || !in[0].present() || !in[1].present())
    return make_error(ctx.label, ": expects 2 inputs");
  if (!dtypes_ok(in[0].dtype, in[1].dtype))
    return make_error(ctx.label, ": dtypes ", dtype_name(in[0].dtype), " and ", dtype_name(in[1].dtype),
                      " are not supported (", supported, ")");
  auto od = kern::broadcast_inputs(in, 0, 2, ctx.label);
  if (!od) return od.error();
  ctx.outputs[0].dtype = in[0].dtype;
  ctx.outputs[0].dims = *od;
  return {};
}

class PowKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    return infer_two(ctx, "numbers",
                     [](DType a, DType b) { return kern::in_set<kPowBase>(a) && kern::in_set<kPowBase>(b); });
  }

  void run(const RunContext& ctx) const override {
    kern::dispatch_dtype<kPowBase>(ctx.inputs[0].dtype, [&](auto a) {
      kern::dispatch_dtype<kPowBase>(ctx.inputs[1].dtype,
                                     [&](auto b) { run_typed<decltype(a)::value, decltype(b)::value>(ctx); });
    });
  }

 private:
  template <DType DA, DType DB>
  static void run_typed(const RunContext& ctx) {
    using A = kern::storage_t<DA>;
    using B = kern::storage_t<DB>;
    const auto& in = ctx.inputs;
    const TensorView& out = ctx.outputs[0];
    const kern::Plan p = kern::broadcast_plan(out.dims, {&in[0].dims, &in[1].dims});
    const A* x = in[0].as<A>();
    const B* y = in[1].as<B>();
    A* o = out.as<A>();
    auto value = [](auto v, auto tag) -> double {
      if constexpr (decltype(tag)::value == DType::float16)
        return kern::half_to_float(v);
      else
        return static_cast<double>(v);
    };
    auto f = [&](A a, B b) -> A {
      if constexpr (std::is_integral_v<A> && std::is_integral_v<B> && DA != DType::float16 &&
                    DB != DType::float16) {
        const int64_t e = static_cast<int64_t>(std::min<uint64_t>(
            std::is_signed_v<B> && b < 0 ? 0 : static_cast<uint64_t>(b), uint64_t{1} << 62));
        return int_pow(a, std::is_signed_v<B> && b < 0 ? int64_t{-1} : e);
      } else {
        const double r = std::pow(value(a, kern::dtype_tag<DA>{}), value(b, kern::dtype_tag<DB>{}));
        if constexpr (DA == DType::float16)
          return kern::float_to_half(static_cast<float>(r));
        else if constexpr (std::is_floating_point_v<A>)
          return static_cast<A>(r);
        else
          return saturate<A>(r);
      }
    };
    ctx.parallel.for_range(out.numel(), kern::kGrain, [&](int64_t begin, int64_t end) {
      kern::for_each_run<2>(p, begin, end, {0, 0},
                            [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t len) {
                              const int64_t sx = p.inner_stride(0), sy = p.inner_stride(1);
                              for (int64_t j = 0; j < len; ++j)
                                o[oo + j] = f(x[off[0] + j * sx], y[off[1] + j * sy]);
                            });
    });
  }
};

// ---------------------------------------------------------------- unary ops

struct UParams {
  float alpha = 0.f, beta = 0.f, gamma = 0.f;
};

template <class T>
using UFn = void (*)(const T*, T*, int64_t, const UParams&);

template <class Op, class T>
void map_unary(const T* x, T* y, int64_t n, const UParams& p) {
  for (int64_t i = 0; i < n; ++i) y[i] = Op::f(x[i], p);
}

struct Relu {
  template <class T>
  static T f(T x, const UParams&) {
    return x > T(0) ? x : T(0);
  }
};
struct LeakyRelu {
  static float f(float x, const UParams& p) { return x < 0.f ? x * p.alpha : x; }
};
struct Sigmoid {
  static float f(float x, const UParams&) { return 1.f / (1.f + std::exp(-x)); }
};
struct HardSigmoid {
  static float f(float x, const UParams& p) { return std::clamp(p.alpha * x + p.beta, 0.f, 1.f); }
};
struct HardSwish {
  static float f(float x, const UParams&) { return x * std::clamp(x / 6.f + 0.5f, 0.f, 1.f); }
};
struct Tanh {
  static float f(float x, const UParams&) { return std::tanh(x); }
};
struct Exp {
  static float f(float x, const UParams&) { return std::exp(x); }
};
struct Log {
  static float f(float x, const UParams&) { return std::log(x); }
};
struct Sqrt {
  static float f(float x, const UParams&) { return std::sqrt(x); }
};
struct Reciprocal {
  static float f(float x, const UParams&) { return 1.f / x; }
};
struct Floor {
  static float f(float x, const UParams&) { return std::floor(x); }
};
struct Ceil {
  static float f(float x, const UParams&) { return std::ceil(x); }
};
struct Round {
  static float f(float x, const UParams&) { return std::nearbyint(x); }
};  // half to even
struct Erf {
  static float f(float x, const UParams&) { return std::erf(x); }
};
struct Softplus {
  // log(1 + e^x) without overflow for large x.
  static float f(float x, const UParams&) { return x > 20.f ? x : std::log1p(std::exp(x)); }
};
struct Elu {
  static float f(float x, const UParams& p) { return x < 0.f ? p.alpha * (std::exp(x) - 1.f) : x; }
};
struct Selu {
  static float f(float x, const UParams& p) {
    return p.gamma * (x <= 0.f ? p.alpha * (std::exp(x) - 1.f) : x);
  }
};
struct Gelu {
  static float f(float x, const UParams& p) {
    if (p.gamma != 0.f) {                       // approximate="tanh"
      constexpr float k = 0.7978845608028654f;  // sqrt(2/pi)
      return 0.5f * x * (1.f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
    return 0.5f * x * (1.f + std::erf(x * 0.7071067811865476f));
  }
};
struct Sin {
  static float f(float x, const UParams&) { return std::sin(x); }
};
struct Cos {
  static float f(float x, const UParams&) { return std::cos(x); }
};
struct Tan {
  static float f(float x, const UParams&) { return std::tan(x); }
};
struct Asin {
  static float f(float x, const UParams&) { return std::asin(x); }
};
struct Acos {
  static float f(float x, const UParams&) { return std::acos(x); }
};
struct Atan {
  static float f(float x, const UParams&) { return std::atan(x); }
};
struct Sinh {
  static float f(float x, const UParams&) { return std::sinh(x); }
};
struct Cosh {
  static float f(float x, const UParams&) { return std::cosh(x); }
};
struct Asinh {
  static float f(float x, const UParams&) { return std::asinh(x); }
};
struct Acosh {
  static float f(float x, const UParams&) { return std::acosh(x); }
};
struct Atanh {
  static float f(float x, const UParams&) { return std::atanh(x); }
};
struct Softsign {
  static float f(float x, const UParams&) { return x / (1.f + std::fabs(x)); }
};
struct ThresholdedRelu {
  static float f(float x, const UParams& p) { return x > p.alpha ? x : 0.f; }
};
struct Shrink {  // alpha = lambd, beta = bias
  static float f(float x, const UParams& p) {
    return x < -p.alpha ? x + p.beta : x > p.alpha ? x - p.beta : 0.f;
  }
};
struct Celu {
  static float f(float x, const UParams& p) {
    return std::max(0.f, x) + std::min(0.f, p.alpha * (std::exp(x / p.alpha) - 1.f));
  }
};
struct Abs {
  template <class T>
  static T f(T x, const UParams&) {
    if constexpr (std::is_integral_v<T>)
      return x < 0 ? wrap(T(0), x, '-') : x;
    else
      return std::fabs(x);
  }
};
struct Neg {
  template <class T>
  static T f(T x, const UParams&) {
    if constexpr (std::is_integral_v<T>)
      return wrap(T(0), x, '-');
    else
      return -x;
  }
};
struct Sign {
  template <class T>
  static T f(T x, const UParams&) {
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};
struct Not {
  static uint8_t f(uint8_t x, const UParams&) { return x == 0 ? 1 : 0; }
};

struct UnaryFns {
  UFn<float> f32 = nullptr;
  UFn<int64_t> i64 = nullptr;
  UFn<int32_t> i32 = nullptr;
  UFn<uint8_t> b8 = nullptr;
};

class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(UnaryFns fns, UParams p) : fns_(fns), p_(p) {}

  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.empty() || !ctx.inputs[0].present()) return make_error(ctx.label, ": input 0 is missing");
    const DType t = ctx.inputs[0].dtype;
    const bool ok = (t == DType::float32 && fns_.f32) || (t == DType::int64 && fns_.i64) ||
                    (t == DType::int32 && fns_.i32) || (t == DType::boolean && fns_.b8);
    if (!ok) return make_error(ctx.label, ": dtype ", dtype_name(t), " is not supported");
    ctx.outputs[0].dtype = t;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }

  void run(const RunContext& ctx) const override {
    switch (ctx.inputs[0].dtype) {
      case DType::float32:
        apply(fns_.f32, ctx);
        break;
      case DType::int64:
        apply(fns_.i64, ctx);
        break;
      case DType::int32:
        apply(fns_.i32, ctx);
        break;
      case DType::boolean:
        apply(fns_.b8, ctx);
        break;
      default:
        break;
    }
  }

 private:
  template <class T>
  void apply(UFn<T> fn, const RunContext& ctx) const {
    const T* x = ctx.inputs[0].as<T>();
    T* y = ctx.outputs[0].as<T>();
    ctx.parallel.for_range(ctx.outputs[0].numel(), kern::kGrain,
                           [&](int64_t b, int64_t e) { fn(x + b, y + b, e - b, p_); });
  }

  UnaryFns fns_;
  UParams p_;
};

enum UTypes { kF = 1, kI = 2, kB = 4 };

template <class Op, int types>
Expected<std::unique_ptr<Kernel>> make_unary_with(UParams p) {
  UnaryFns fns;
  if constexpr ((types & kF) != 0) fns.f32 = &map_unary<Op, float>;
  if constexpr ((types & kI) != 0) {
    fns.i64 = &map_unary<Op, int64_t>;
    fns.i32 = &map_unary<Op, int32_t>;
  }
  if constexpr ((types & kB) != 0) fns.b8 = &map_unary<Op, uint8_t>;
  return make_kernel<UnaryKernel>(fns, p);
}

template <class Op, int types = kF>
Expected<std::unique_ptr<Kernel>> make_unary(const KernelSetup&) {
  return make_unary_with<Op, types>({});
}

Expected<std::unique_ptr<Kernel>> make_leaky_relu(const KernelSetup& s) {
  return make_unary_with<LeakyRelu, kF>({s.node.attrs.get_float("alpha", 0.01f)});
}
Expected<std::unique_ptr<Kernel>> make_hard_sigmoid(const KernelSetup& s) {
  return make_unary_with<HardSigmoid, kF>(
      {s.node.attrs.get_float("alpha", 0.2f), s.node.attrs.get_float("beta", 0.5f)});
}
Expected<std::unique_ptr<Kernel>> make_elu(const KernelSetup& s) {
  return make_unary_with<Elu, kF>({s.node.attrs.get_float("alpha", 1.f)});
}
Expected<std::unique_ptr<Kernel>> make_selu(const KernelSetup& s) {
  return make_unary_with<Selu, kF>({s.node.attrs.get_float("alpha", 1.67326319217681884765625f), 0.f,
                                    s.node.attrs.get_float("gamma", 1.05070102214813232421875f)});
}
Expected<std::unique_ptr<Kernel>> make_thresholded_relu(const KernelSetup& s) {
  return make_unary_with<ThresholdedRelu, kF>({s.node.attrs.get_float("alpha", 1.f)});
}
Expected<std::unique_ptr<Kernel>> make_shrink(const KernelSetup& s) {
  return make_unary_with<Shrink, kF>(
      {s.node.attrs.get_float("lambd", 0.5f), s.node.attrs.get_float("bias", 0.f)});
}
Expected<std::unique_ptr<Kernel>> make_celu(const KernelSetup& s) {
  const float alpha = s.node.attrs.get_float("alpha", 1.f);
  if (alpha == 0.f) return make_error("Celu alpha must not be 0");
  return make_unary_with<Celu, kF>({alpha});
}
Expected<std::unique_ptr<Kernel>> make_gelu(const KernelSetup& s) {
  const std::string approx = s.node.attrs.get_string("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return make_error("Gelu approximate='", approx, "' is not supported");
  return make_unary_with<Gelu, kF>({0.f, 0.f, approx == "tanh" ? 1.f : 0.f});
}

// ---------------------------------------------------------------- IsNaN, IsInf, BitShift

// IsNaN, or IsInf (with which signs count): float -> bool.
class ClassifyKernel final : public Kernel {
 public:
  ClassifyKernel(bool inf, bool neg, bool pos) : inf_(inf), neg_(neg), pos_(pos) {}
  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.empty() || !ctx.inputs[0].present()) return make_error(ctx.label, ": input 0 is missing");
    if (!kern::in_set<kern::kFloats | kern::kHalf>(ctx.inputs[0].dtype))
      return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
    ctx.outputs[0].dtype = DType::boolean;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    uint8_t* y = ctx.outputs[0].as<uint8_t>();
    kern::dispatch_dtype<kern::kFloats | kern::kHalf>(ctx.inputs[0].dtype, [&](auto tag) {
      constexpr DType D = decltype(tag)::value;
      const auto* x = ctx.inputs[0].as<kern::storage_t<D>>();
      for (int64_t i = 0; i < ctx.outputs[0].numel(); ++i) {
        double v = 0;
        if constexpr (D == DType::float16)
          v = kern::half_to_float(x[i]);
        else
          v = static_cast<double>(x[i]);
        y[i] = static_cast<uint8_t>(inf_ ? std::isinf(v) && (v < 0 ? neg_ : pos_) : std::isnan(v));
      }
    });
  }

 private:
  bool inf_, neg_, pos_;
};

// BitShift on unsigned integers; shifting by the bit width or more gives 0.
class BitShiftKernel final : public Kernel {
 public:
  explicit BitShiftKernel(bool left) : left_(left) {}
  Status infer(ShapeContext& ctx) const override {
    return infer_two(ctx, "one unsigned integer type",
                     [](DType a, DType b) { return a == b && kern::in_set<kern::kUnsigned>(a); });
  }
  void run(const RunContext& ctx) const override {
    kern::dispatch_dtype<kern::kUnsigned>(ctx.inputs[0].dtype, [&](auto tag) {
      using T = kern::storage_t<decltype(tag)::value>;
      const bool left = left_;
      auto f = [left](T a, T b) -> T {
        if (b >= sizeof(T) * 8) return T(0);
        using U = decltype(a + 0u);  // at least unsigned int: no signed promotion
        return static_cast<T>(left ? static_cast<U>(a) << b : static_cast<U>(a) >> b);
      };
      broadcast_binary(ctx.inputs[0].as<T>(), ctx.inputs[0].dims, ctx.inputs[1].as<T>(), ctx.inputs[1].dims,
                       ctx.outputs[0].as<T>(), ctx.outputs[0].dims, f, ctx.parallel);
    });
  }

 private:
  bool left_;
};

Expected<std::unique_ptr<Kernel>> make_bit_shift(const KernelSetup& s) {
  const std::string d = s.node.attrs.get_string("direction");
  if (d != "LEFT" && d != "RIGHT")
    return make_error("BitShift direction must be LEFT or RIGHT, got '", d, "'");
  return make_kernel<BitShiftKernel>(d == "LEFT");
}

// ---------------------------------------------------------------- Identity, Dropout

class CopyKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.empty() || !ctx.inputs[0].present()) return make_error(ctx.label, ": input 0 is missing");
    if (dtype_size(ctx.inputs[0].dtype) == 0)
      return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    kern::copy_bytes(ctx.outputs[0].data, ctx.inputs[0].data, ctx.outputs[0].bytes());
  }
};

Expected<std::unique_ptr<Kernel>> make_identity(const KernelSetup&) {
  return make_kernel<CopyKernel>();
}

// Dropout. Inference (training_mode absent or false, or ratio 0): y = x and the optional mask
// all true. Training mode with a ratio r in (0, 1) and a `seed` attribute drops deterministically
// like ONNX's reference: the mask is uniform(0, 1) >= r drawn from MT19937 seeded with `seed`
// (numpy's legacy generator, doubles of 53 bits), y = x * mask / (1 - r). Without a seed the
// dropping would be random: refused while planning. Ratio and mode are read while planning.
class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(std::optional<uint32_t> seed) : seed_(seed) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1 | 1u << 2; }
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.empty() || !in[0].present()) return make_error(ctx.label, ": input 0 is missing");
    const double r = ratio(in);
    if (r != 0.0) {
      if (!(r > 0.0 && r < 1.0)) return make_error(ctx.label, ": Dropout ratio ", r, " must be in [0, 1)");
      if (!seed_)
        return make_error(
            ctx.label, ": Dropout in training mode (ratio ", r,
            ") without a seed drops at random; give the seed attribute or run in inference mode");
      if (in[0].dtype != DType::float32 && in[0].dtype != DType::float64)
        return make_error(ctx.label, ": Dropout in training mode takes float32 or float64, got ",
                          dtype_name(in[0].dtype));
    }
    ctx.outputs[0].dtype = in[0].dtype;
    ctx.outputs[0].dims = in[0].dims;
    if (ctx.outputs.size() > 1) {
      ctx.outputs[1].dtype = DType::boolean;
      ctx.outputs[1].dims = in[0].dims;
    }
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView* mask = ctx.outputs.size() > 1 && ctx.outputs[1].present() ? &ctx.outputs[1] : nullptr;
    const double r = ratio(ctx.inputs);
    if (r == 0.0) {
      kern::copy_bytes(ctx.outputs[0].data, ctx.inputs[0].data, ctx.outputs[0].bytes());
      if (mask && mask->bytes() > 0) std::memset(mask->data, 1, mask->bytes());
      return;
    }
    std::mt19937 gen(*seed_);
    const double scale = 1.0 / (1.0 - r);
    const int64_t n = ctx.inputs[0].numel();
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t a = gen() >> 5, b = gen() >> 6;
      const bool keep = (a * 67108864.0 + b) / 9007199254740992.0 >= r;
      if (mask) mask->as<uint8_t>()[i] = keep ? 1 : 0;
      if (ctx.inputs[0].dtype == DType::float64)
        ctx.outputs[0].as<double>()[i] = keep ? ctx.inputs[0].as<double>()[i] * scale : 0.0;
      else
        ctx.outputs[0].as<float>()[i] = keep ? ctx.inputs[0].as<float>()[i] * static_cast<float>(scale) : 0.f;
    }
  }

 private:
  // The drop ratio in effect: 0 unless training_mode is true.
  static double ratio(std::span<const ConstTensorView> in) {
    if (!kern::has_input(in, 2) || in[2].data == nullptr || in[2].numel() != 1 || *in[2].as<uint8_t>() == 0)
      return 0.0;
    double r = 0.5;
    if (kern::has_input(in, 1) && in[1].data != nullptr && in[1].numel() == 1)
      (void)kern::dispatch_dtype<kern::kFloats | kern::kHalf>(in[1].dtype, [&](auto tag) {
        constexpr DType D = decltype(tag)::value;
        const auto v = *in[1].as<kern::storage_t<D>>();
        if constexpr (D == DType::float16)
          r = kern::half_to_float(v);
        else
          r = static_cast<double>(v);
      });
    return r;
  }

  std::optional<uint32_t> seed_;
};

Expected<std::unique_ptr<Kernel>> make_dropout(const KernelSetup& s) {
  if (s.node.outputs.size() > 2) return make_error("Dropout has at most 2 outputs");
  std::optional<uint32_t> seed;
  if (s.node.attrs.has("seed")) {
    const int64_t v = s.node.attrs.get_int("seed", 0);
    if (v < 0 || v > int64_t{0xffffffff}) return make_error("Dropout seed ", v, " is out of range [0, 2^32)");
    seed = static_cast<uint32_t>(v);
  }
  return make_kernel<DropoutKernel>(seed);
}

// ---------------------------------------------------------------- Clip

// Clip bounds come from optional scalar inputs 1 and 2, which may be params or runtime values
// (run() reads them), or from the opset < 11 attributes min/max when a kernel is made for such
// an opset directly (the importer turns those attributes into inputs).
constexpr unsigned kClipTypes = kern::kFloats | kern::kHalf | kern::kSigned | kern::kUnsigned;

class ClipKernel final : public Kernel {
 public:
  ClipKernel(bool from_attrs, float lo, float hi) : from_attrs_(from_attrs), lo_(lo), hi_(hi) {}

  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.empty() || !in[0].present()) return make_error(ctx.label, ": input 0 is missing");
    const DType t = in[0].dtype;
    if (from_attrs_ && t != DType::float32)
      return make_error(ctx.label, ": Clip with min/max attributes takes float32, got ", dtype_name(t));
    if (!kern::in_set<kClipTypes>(t))
      return make_error(ctx.label, ": dtype ", dtype_name(t), " is not supported");
    for (std::size_t i = 1; i < in.size() && i < 3; ++i) {
      if (!in[i].present()) continue;
      if (in[i].dtype != t)
        return make_error(ctx.label, ": ", i == 1 ? "min" : "max", " dtype ", dtype_name(in[i].dtype),
                          " differs from input dtype ", dtype_name(t));
      if (in[i].numel() != 1)
        return make_error(ctx.label, ": ", i == 1 ? "min" : "max", " must be a scalar, got shape ",
                          kern::dims_str(in[i].dims));
    }
    if (in.size() > 3) return make_error(ctx.label, ": expects at most 3 inputs");
    ctx.outputs[0].dtype = t;
    ctx.outputs[0].dims = in[0].dims;
    return {};
  }

  void run(const RunContext& ctx) const override {
    kern::dispatch_dtype<kClipTypes>(ctx.inputs[0].dtype,
                                     [&](auto tag) { run_typed<decltype(tag)::value>(ctx); });
  }

 private:
  template <DType D>
  void run_typed(const RunContext& ctx) const {
    using T = kern::storage_t<D>;
    using C = std::conditional_t<D == DType::float16, float, T>;  // compared as
    auto load = [](T v) -> C {
      if constexpr (D == DType::float16)
        return kern::half_to_float(v);
      else
        return v;
    };
    C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
    if (from_attrs_) {
      lo = static_cast<C>(lo_);
      hi = static_cast<C>(hi_);
    }
    if (kern::has_input(ctx.inputs, 1)) lo = load(*ctx.inputs[1].as<T>());
    if (kern::has_input(ctx.inputs, 2)) hi = load(*ctx.inputs[2].as<T>());
    const T* x = ctx.inputs[0].as<T>();
    T* y = ctx.outputs[0].as<T>();
    ctx.parallel.for_range(ctx.outputs[0].numel(), kern::kGrain, [&](int64_t b, int64_t e) {
      // ONNX: min is applied first, then max; a min above max yields max everywhere.
      for (int64_t i = b; i < e; ++i) {
        const C xv = load(x[i]);
        if (xv >= lo && xv <= hi) {
          y[i] = x[i];
          continue;
        }
        const C v = xv < lo ? lo : xv;
        const C r = v > hi ? hi : v;
        if constexpr (D == DType::float16)
          y[i] = kern::float_to_half(r);
        else
          y[i] = r;
      }
    });
  }

  bool from_attrs_;
  float lo_, hi_;
};

Expected<std::unique_ptr<Kernel>> make_clip(const KernelSetup& s) {
  if (s.opset < 11)
    return make_kernel<ClipKernel>(true, s.node.attrs.get_float("min", std::numeric_limits<float>::lowest()),
                                   s.node.attrs.get_float("max", std::numeric_limits<float>::max()));
  return make_kernel<ClipKernel>(false, 0.f, 0.f);
}

// ---------------------------------------------------------------- Cast

struct Half {
  uint16_t bits;
};
struct BHalf {
  uint16_t bits;
};
struct Bool {
  uint8_t v;
};

// Every source value is widened to double (floating types) or int64 (integers, bool) first.
template <class T>
auto widen(T x) {
  if constexpr (std::is_same_v<T, Half>)
    return static_cast<double>(kern::half_to_float(x.bits));
  else if constexpr (std::is_same_v<T, BHalf>)
    return static_cast<double>(kern::bf16_to_float(x.bits));
  else if constexpr (std::is_same_v<T, Bool>)
    return static_cast<int64_t>(x.v != 0);
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<double>(x);
  else
    return static_cast<int64_t>(x);
}

template <class To, class W>
To narrow(W w) {
  if constexpr (std::is_same_v<To, Half>)
    return Half{kern::float_to_half(static_cast<float>(w))};
  else if constexpr (std::is_same_v<To, BHalf>)
    return BHalf{kern::float_to_bf16(static_cast<float>(w))};
  else if constexpr (std::is_same_v<To, Bool>)
    return Bool{static_cast<uint8_t>(w != 0)};
  else if constexpr (std::is_floating_point_v<To>)
    return static_cast<To>(w);
  else if constexpr (std::is_floating_point_v<W>)
    return saturate<To>(w);
  else
    return static_cast<To>(w);  // integer narrowing wraps (two's complement)
}

template <class From, class To>
void cast_loop(const void* src, void* dst, int64_t b, int64_t e) {
  const From* x = static_cast<const From*>(src);
  To* y = static_cast<To*>(dst);
  for (int64_t i = b; i < e; ++i) y[i] = narrow<To>(widen(x[i]));
}

using CastFn = void (*)(const void*, void*, int64_t, int64_t);

template <class F>
bool with_cast_type(DType t, F&& f) {
  switch (t) {
    case DType::float32:
      f(float{});
      return true;
    case DType::float64:
      f(double{});
      return true;
    case DType::float16:
      f(Half{});
      return true;
    case DType::bfloat16:
      f(BHalf{});
      return true;
    case DType::uint64:
      f(uint64_t{});
      return true;
    case DType::uint32:
      f(uint32_t{});
      return true;
    case DType::uint16:
      f(uint16_t{});
      return true;
    case DType::int64:
      f(int64_t{});
      return true;
    case DType::int32:
      f(int32_t{});
      return true;
    case DType::int16:
      f(int16_t{});
      return true;
    case DType::int8:
      f(int8_t{});
      return true;
    case DType::uint8:
      f(uint8_t{});
      return true;
    case DType::boolean:
      f(Bool{});
      return true;
    default:
      return false;
  }
}

CastFn cast_fn(DType from, DType to) {
  CastFn fn = nullptr;
  with_cast_type(
      from, [&](auto a) { with_cast_type(to, [&](auto b) { fn = &cast_loop<decltype(a), decltype(b)>; }); });
  return fn;
}

// Cast to `to`, or with `to` undefined (CastLike) to the dtype of input 1.
class CastKernel final : public Kernel {
 public:
  explicit CastKernel(DType to) : to_(to) {}
  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.empty() || !ctx.inputs[0].present()) return make_error(ctx.label, ": input 0 is missing");
    DType to = to_;
    if (to == DType::undefined) {
      if (ctx.inputs.size() != 2 || !ctx.inputs[1].present())
        return make_error(ctx.label, ": CastLike needs the target_type input");
      to = ctx.inputs[1].dtype;
    }
    if (cast_fn(ctx.inputs[0].dtype, to) == nullptr)
      return make_error(ctx.label, ": Cast from ", dtype_name(ctx.inputs[0].dtype), " to ", dtype_name(to),
                        " is not supported");
    ctx.outputs[0].dtype = to;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    ctx.keep(cast_fn(ctx.inputs[0].dtype, to));
    return {};
  }
  void run(const RunContext& ctx) const override {
    const DType to = ctx.outputs[0].dtype;
    const CastFn fn = ctx.kept<CastFn>();
    if (ctx.inputs[0].dtype == to) {
      kern::copy_bytes(ctx.outputs[0].data, ctx.inputs[0].data, ctx.outputs[0].bytes());
      return;
    }
    const void* src = ctx.inputs[0].data;
    void* dst = ctx.outputs[0].data;
    ctx.parallel.for_range(ctx.outputs[0].numel(), kern::kGrain,
                           [&](int64_t b, int64_t e) { fn(src, dst, b, e); });
  }

 private:
  DType to_;
};

Expected<std::unique_ptr<Kernel>> make_cast(const KernelSetup& s) {
  const int64_t to = s.node.attrs.get_int("to", 0);
  if (!s.node.attrs.has("to")) return make_error("Cast needs the 'to' attribute");
  if (!dtype_valid(static_cast<int32_t>(to)) || to != static_cast<int32_t>(to))
    return make_error("Cast to unknown dtype ", to);
  const DType t = static_cast<DType>(to);
  if (!with_cast_type(t, [](auto) {})) return make_error("Cast to ", dtype_name(t), " is not supported");
  return make_kernel<CastKernel>(t);
}

}  // namespace

// Unary maps and Clip read x[i] and write y[i] in one pass; a two-input binary op reads a[j]
// and b[j] (or a broadcast scalar) for o[j]. Variadic Sum/Mean with more than two inputs
// accumulate into the output, so an input after the first two would be overwritten before it
// is read: the planner only aliases two-input nodes. Comparisons change the dtype (never equal).
uint32_t in_place_inputs(const Kernel& kernel) {
  const Kernel* k = &kernel;
  if (dynamic_cast<const UnaryKernel*>(k) || dynamic_cast<const ClipKernel*>(k)) return 1u;
  if (dynamic_cast<const BinaryKernel<Bin::add>*>(k) || dynamic_cast<const BinaryKernel<Bin::sub>*>(k) ||
      dynamic_cast<const BinaryKernel<Bin::mul>*>(k) || dynamic_cast<const BinaryKernel<Bin::div>*>(k) ||
      dynamic_cast<const BinaryKernel<Bin::max>*>(k) || dynamic_cast<const BinaryKernel<Bin::min>*>(k) ||
      dynamic_cast<const PowKernel*>(k))
    return 3u;
  return 0u;
}

void register_elementwise_kernels(KernelRegistry& r) {
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
  r.add("Equal", &make_binary<Bin::eq>);
  r.add("Less", &make_binary<Bin::lt>);
  r.add("Greater", &make_binary<Bin::gt>);
  r.add("LessOrEqual", &make_binary<Bin::le>);
  r.add("GreaterOrEqual", &make_binary<Bin::ge>);
  r.add("And", &make_binary<Bin::land>);
  r.add("Or", &make_binary<Bin::lor>);
  r.add("Xor", &make_binary<Bin::lxor>);
  r.add("Where", [](const KernelSetup&) { return make_kernel<WhereKernel>(); });
  r.add("PRelu", [](const KernelSetup&) { return make_kernel<PReluKernel>(); });

  r.add("Relu", &make_unary<Relu, kF | kI>);
  r.add("LeakyRelu", &make_leaky_relu);
  r.add("Sigmoid", &make_unary<Sigmoid>);
  r.add("HardSigmoid", &make_hard_sigmoid);
  r.add("HardSwish", &make_unary<HardSwish>);
  r.add("Tanh", &make_unary<Tanh>);
  r.add("Exp", &make_unary<Exp>);
  r.add("Log", &make_unary<Log>);
  r.add("Sqrt", &make_unary<Sqrt>);
  r.add("Abs", &make_unary<Abs, kF | kI>);
  r.add("Neg", &make_unary<Neg, kF | kI>);
  r.add("Reciprocal", &make_unary<Reciprocal>);
  r.add("Floor", &make_unary<Floor>);
  r.add("Ceil", &make_unary<Ceil>);
  r.add("Round", &make_unary<Round>);
  r.add("Erf", &make_unary<Erf>);
  r.add("Softplus", &make_unary<Softplus>);
  r.add("Elu", &make_elu);
  r.add("Selu", &make_selu);
  r.add("Gelu", &make_gelu);
  r.add("Sin", &make_unary<Sin>);
  r.add("Cos", &make_unary<Cos>);
  r.add("Tan", &make_unary<Tan>);
  r.add("Asin", &make_unary<Asin>);
  r.add("Acos", &make_unary<Acos>);
  r.add("Atan", &make_unary<Atan>);
  r.add("Sinh", &make_unary<Sinh>);
  r.add("Cosh", &make_unary<Cosh>);
  r.add("Asinh", &make_unary<Asinh>);
  r.add("Acosh", &make_unary<Acosh>);
  r.add("Atanh", &make_unary<Atanh>);
  r.add("Softsign", &make_unary<Softsign>);
  r.add("ThresholdedRelu", &make_thresholded_relu);
  r.add("Shrink", &make_shrink);
  r.add("Celu", &make_celu);
  r.add("IsNaN", [](const KernelSetup&) { return make_kernel<ClassifyKernel>(false, false, false); });
  r.add("IsInf", [](const KernelSetup& s) {
    return make_kernel<ClassifyKernel>(true, s.node.attrs.get_int("detect_negative", 1) != 0,
                                       s.node.attrs.get_int("detect_positive", 1) != 0);
  });
  r.add("BitShift", &make_bit_shift);
  r.add("Sign", &make_unary<Sign, kF | kI>);
  r.add("Not", &make_unary<Not, kB>);
  r.add("Clip", &make_clip);
  r.add("Identity", &make_identity);
  r.add("Dropout", &make_dropout);
  r.add("Cast", &make_cast);
  r.add("CastLike", [](const KernelSetup&) { return make_kernel<CastKernel>(DType::undefined); });
}

}  // namespace weave
