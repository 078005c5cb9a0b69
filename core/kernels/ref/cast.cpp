// Cast and CastLike (one kernel): every pair of dtypes with a C++ storage type, float16 and
// bfloat16 included; float -> integer truncates toward zero and saturates (NaN -> 0).
#include <cstdint>
#include <type_traits>

#include "core/kernels/ref/elementwise.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;
using kern::saturate;

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
    const CastFn fn = cast_fn(ctx.inputs[0].dtype, to);
    if (fn == nullptr)
      return make_error(ctx.label, ": Cast from ", dtype_name(ctx.inputs[0].dtype), " to ", dtype_name(to),
                        " is not supported");
    ctx.outputs[0].dtype = to;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    ctx.keep(fn);
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

void register_cast(KernelRegistry& r) {
  r.add("Cast", &make_cast);
  r.add("CastLike", [](const KernelSetup&) { return make_kernel<CastKernel>(DType::undefined); });
}

}  // namespace weave
