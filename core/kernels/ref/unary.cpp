// The unary math ops, one kernel (UnaryKernel, elementwise.h): Relu, Sigmoid, HardSwish, Tanh,
// Exp, Log, Sqrt, Abs, Neg, Reciprocal, Floor, Ceil, Round, Erf, Softplus, Mish, Sin, Cos, Tan, Asin,
// Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Softsign and Sign. The activations with attributes
// are in activation.cpp, Not in logical.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/kernels/ref/elementwise.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::kF;
using kern::kI;
using kern::make_unary;
using kern::UParams;
using kern::wrap;

struct Relu {
  template <class T>
  static T f(T x, const UParams&) {
    return x > T(0) ? x : T(0);
  }
};
struct Sigmoid {
  static float f(float x, const UParams&) { return 1.f / (1.f + std::exp(-x)); }
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
struct Mish {  // x * tanh(softplus(x))
  static float f(float x, const UParams& p) { return x * std::tanh(Softplus::f(x, p)); }
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

}  // namespace

void register_unary(KernelRegistry& r) {
  r.add("Relu", &make_unary<Relu, kF | kI>);
  r.add("Sigmoid", &make_unary<Sigmoid>);
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
  r.add("Mish", &make_unary<Mish>);
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
  r.add("Sign", &make_unary<Sign, kF | kI>);
}

}  // namespace weave
