// What the reference elementwise kernels share: the broadcasting binary kernel of the arithmetic
// (binary.cpp), comparison (comparison.cpp) and logical (logical.cpp) ops, with the loops PRelu
// and BitShift use too; the unary kernel of the math maps (unary.cpp), the activations with
// attributes (activation.cpp) and Not (logical.cpp); integer wrapping and saturation; and what
// in_place.cpp asks of Clip and Pow.
//
// Integer arithmetic wraps (computed in the unsigned type) and integer division or modulo by
// zero yields 0, so that no input value can cause undefined behaviour. Float->integer Cast
// truncates toward zero and saturates (NaN -> 0) for the same reason.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include "core/kernels/kernel_util.h"

namespace weave::kern {

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

inline bool bin_supports(Bin op, DType t) {
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

// ---------------------------------------------------------------- Pow, Cast, BitShift

// v as the integer I: truncated toward zero and saturated, NaN -> 0 (Pow, Cast).
template <class I>
I saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (v <= static_cast<double>(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
  return static_cast<I>(v);  // truncates toward zero
}

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

// ---------------------------------------------------------------- in place

// Whether `k` is a Clip kernel (clip.cpp) or a Pow kernel (binary.cpp), for in_place_inputs
// (in_place.cpp); their kernel classes are their files' own.
[[nodiscard]] bool is_clip_kernel(const Kernel& k);
[[nodiscard]] bool is_pow_kernel(const Kernel& k);

}  // namespace weave::kern
