// Helpers shared by the kernels, reference (core/kernels/ref/) and fast (core/kernels/fast/):
// checks of a node at create (float32 inputs, input counts, layout), optional inputs and
// outputs, the fused activation epilogue, axis normalisation, reading small integer tensors
// known at infer time, numpy broadcasting, dtype dispatch, float16 conversion, and a strided
// "plan" that walks an output in contiguous runs. Header-only; not part of the kernel interface.
//
// The strided plan is the workhorse: an output of concrete dims is visited in row-major order
// and every operand (up to kMaxOperands) is addressed by its own element strides (0 on a
// broadcast axis, negative for a reversed Slice, permuted for Transpose). Axes of size 1 are
// dropped and adjacent axes that are contiguous for every operand are merged, so the common
// cases (same shape, scalar, per-channel) collapse to one or two axes and the inner loop runs
// over long contiguous or constant stretches.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/common/dims.h"
#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/kernels/kernel.h"

namespace weave::kern {

// Elements per parallel chunk for cheap elementwise work.
inline constexpr int64_t kGrain = 1 << 14;

template <class K, class... Args>
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_kernel(Args&&... args) {
  return std::unique_ptr<Kernel>(std::make_unique<K>(std::forward<Args>(args)...));
}

// "1x3x224x224" for messages (shape_str).
[[nodiscard]] inline std::string dims_str(const Dims& d) {
  return shape_str(d.span());
}
// The same in brackets, "[1x3x224x224]", as the messages of Conv, Gemm, the pools, the
// normalizations, LSTM and the fast kernels write shapes.
[[nodiscard]] inline std::string dims_bracketed(const Dims& d) {
  return '[' + dims_str(d) + ']';
}

// Maps a possibly negative axis into [0, rank); error names the label and the rank.
[[nodiscard]] inline Expected<int> normalize_axis(int64_t axis, int rank, const std::string& label,
                                                  const char* what = "axis") {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) return make_error(label, ": ", what, " ", axis, " is out of range for rank ", rank);
  return static_cast<int>(a);
}

// A tensor seen as [outer, dim, inner] around one axis (negative axis counts from the end;
// infer has validated it). `unit` scales inner, e.g. the element size for byte moves.
struct AxisView {
  int axis = 0;
  int64_t outer = 1, dim = 1, inner = 1;
};
[[nodiscard]] inline AxisView around_axis(const Dims& d, int64_t axis, int64_t unit = 1) {
  AxisView v;
  v.axis = static_cast<int>(axis < 0 ? axis + d.rank() : axis);
  v.inner = unit;
  v.dim = d[v.axis];
  // An empty tensor: no rows to walk. Its other dims may be anything (a hostile 0 x 2^61 x 8):
  // their product is not formed, it could overflow.
  for (int i = 0; i < d.rank(); ++i)
    if (d[i] == 0) {
      v.outer = 0, v.inner = 0;
      return v;
    }
  for (int i = 0; i < v.axis; ++i) v.outer *= d[i];
  for (int i = v.axis + 1; i < d.rank(); ++i) v.inner *= d[i];
  return v;
}

// True when the input was given (not an omitted optional input).
[[nodiscard]] inline bool has_input(std::span<const ConstTensorView> in, std::size_t i) {
  return i < in.size() && in[i].present();
}

// Reads a 0-D/1-D int64 or int32 tensor whose data is known (a param or a shape-derived value).
[[nodiscard]] inline Expected<std::vector<int64_t>> read_ints(const ConstTensorView& v,
                                                              const std::string& label, const char* what) {
  if (v.dtype != DType::int64 && v.dtype != DType::int32)
    return make_error(label, ": ", what, " must be int64 or int32, got ", dtype_name(v.dtype));
  if (v.dims.rank() > 1) return make_error(label, ": ", what, " must be 1-D, got ", dims_str(v.dims));
  if (v.data == nullptr && v.numel() > 0)
    return make_error(label, ": ", what, " is only known at run time; it must be a constant");
  std::vector<int64_t> out(static_cast<std::size_t>(v.numel()));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = v.dtype == DType::int64 ? v.as<int64_t>()[i] : v.as<int32_t>()[i];
  return out;
}

// Same as read_ints but without checks, for run(): infer already validated the input.
inline int64_t int_at(const ConstTensorView& v, int64_t i) {
  return v.dtype == DType::int64 ? v.as<int64_t>()[i] : v.as<int32_t>()[i];
}

// Outputs beyond this many elements are rejected: a hostile shape must not cause a huge allocation.
inline constexpr int64_t kMaxElements = int64_t{1} << 40;

// The product of `factors`, saturating at INT64_MAX: the steps of a kernel for
// ShapeContext::work. A negative factor (shape_numel's "too large") gives INT64_MAX.
[[nodiscard]] inline int64_t work_product(std::initializer_list<int64_t> factors) {
  int64_t w = 1;
  for (int64_t f : factors)
    if (f < 0 || __builtin_mul_overflow(w, f, &w)) return INT64_MAX;
  return w;
}

// True when every dim is >= 0 and the product stays within kMaxElements.
[[nodiscard]] inline bool size_ok(std::span<const int64_t> d) {
  for (int64_t x : d)
    if (x < 0) return false;
  for (int64_t x : d)
    if (x == 0) return true;
  int64_t n = 1;
  for (int64_t x : d) {
    if (n > kMaxElements / x) return false;
    n *= x;
  }
  return true;
}

[[nodiscard]] inline Status check_rank(const Dims& d, const std::string& label) {
  if (d.rank() > kMaxRank)
    return make_error(label, ": rank ", d.rank(), " exceeds the maximum of ", kMaxRank);
  return {};
}

// Builds Dims from a vector, failing on too high a rank or negative dims.
[[nodiscard]] inline Expected<Dims> to_dims(std::span<const int64_t> v, const std::string& label) {
  if (v.size() > static_cast<std::size_t>(kMaxRank))
    return make_error(label, ": output rank ", v.size(), " exceeds the maximum of ", kMaxRank);
  for (int64_t d : v)
    if (d < 0) return make_error(label, ": negative output dimension in ", shape_str(v));
  if (!size_ok(v)) return make_error(label, ": output shape ", shape_str(v), " is too large");
  return Dims(v);
}

// numpy multidirectional broadcasting of two shapes; false if incompatible.
[[nodiscard]] inline bool broadcast_dims(const Dims& a, const Dims& b, Dims& out) {
  const int r = std::max(a.rank(), b.rank());
  Dims o;
  o.resize(r);
  for (int i = 0; i < r; ++i) {
    const int ia = i - (r - a.rank()), ib = i - (r - b.rank());
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da == db || db == 1)
      o[i] = da;
    else if (da == 1)
      o[i] = db;
    else
      return false;
  }
  out = o;
  return true;
}

// Broadcasts all present inputs [first, last) into one shape, or an error naming both shapes.
[[nodiscard]] inline Expected<Dims> broadcast_inputs(std::span<const ConstTensorView> in, std::size_t first,
                                                     std::size_t last, const std::string& label) {
  Dims out = in[first].dims;
  for (std::size_t i = first + 1; i < last; ++i) {
    Dims next;
    if (!broadcast_dims(out, in[i].dims, next))
      return make_error(label, ": incompatible broadcast shapes ", dims_str(out), " and ",
                        dims_str(in[i].dims), " (input ", i, ")");
    out = next;
  }
  return out;
}

// ---- dtype dispatch ----

// Calls f(T{}) for the arithmetic dtypes float32, float64, int64, int32, and (when with_bool)
// bool as uint8_t. Unknown dtypes call nothing: infer has rejected them.
template <class F>
void dispatch_numeric(DType t, F&& f, bool with_bool = false) {
  switch (t) {
    case DType::float32:
      f(float{});
      break;
    case DType::float64:
      f(double{});
      break;
    case DType::int64:
      f(int64_t{});
      break;
    case DType::int32:
      f(int32_t{});
      break;
    case DType::boolean:
      if (with_bool) f(uint8_t{});
      break;
    default:
      break;
  }
}

// Every dtype with a C++ storage type, dispatched by value: f(dtype_tag<D>{}) with
// D = DType::float32 ... The storage of float16 is uint16_t (convert with half_to_float), and of
// bool uint8_t holding 0 or 1, so uint8 and bool differ by D, not by type.
template <DType D>
using dtype_tag = std::integral_constant<DType, D>;
template <DType D>
struct storage;
template <>
struct storage<DType::float32> {
  using type = float;
};
template <>
struct storage<DType::float64> {
  using type = double;
};
template <>
struct storage<DType::float16> {
  using type = uint16_t;
};
template <>
struct storage<DType::int64> {
  using type = int64_t;
};
template <>
struct storage<DType::int32> {
  using type = int32_t;
};
template <>
struct storage<DType::int16> {
  using type = int16_t;
};
template <>
struct storage<DType::int8> {
  using type = int8_t;
};
template <>
struct storage<DType::uint64> {
  using type = uint64_t;
};
template <>
struct storage<DType::uint32> {
  using type = uint32_t;
};
template <>
struct storage<DType::uint16> {
  using type = uint16_t;
};
template <>
struct storage<DType::uint8> {
  using type = uint8_t;
};
template <>
struct storage<DType::boolean> {
  using type = uint8_t;
};
template <DType D>
using storage_t = typename storage<D>::type;

// Which dtypes dispatch_dtype visits.
enum DTypeSet : unsigned {
  kFloats = 1,    // float32, float64
  kHalf = 2,      // float16
  kSigned = 4,    // int64, int32, int16, int8
  kUnsigned = 8,  // uint64, uint32, uint16, uint8
  kBool = 16,
  kAllNumeric = kFloats | kHalf | kSigned | kUnsigned,
};

// Calls f(dtype_tag<D>{}) when t is in `set`; false (calling nothing) otherwise.
template <unsigned set, class F>
bool dispatch_dtype(DType t, F&& f) {
#define WEAVE_DISPATCH_CASE(D, S)     \
  case D:                             \
    if constexpr ((set & (S)) != 0) { \
      f(dtype_tag<D>{});              \
      return true;                    \
    }                                 \
    return false;
  switch (t) {
    WEAVE_DISPATCH_CASE(DType::float32, kFloats)
    WEAVE_DISPATCH_CASE(DType::float64, kFloats)
    WEAVE_DISPATCH_CASE(DType::float16, kHalf)
    WEAVE_DISPATCH_CASE(DType::int64, kSigned)
    WEAVE_DISPATCH_CASE(DType::int32, kSigned)
    WEAVE_DISPATCH_CASE(DType::int16, kSigned)
    WEAVE_DISPATCH_CASE(DType::int8, kSigned)
    WEAVE_DISPATCH_CASE(DType::uint64, kUnsigned)
    WEAVE_DISPATCH_CASE(DType::uint32, kUnsigned)
    WEAVE_DISPATCH_CASE(DType::uint16, kUnsigned)
    WEAVE_DISPATCH_CASE(DType::uint8, kUnsigned)
    WEAVE_DISPATCH_CASE(DType::boolean, kBool)
    default:
      return false;
  }
#undef WEAVE_DISPATCH_CASE
}

// True when t is in `set`.
template <unsigned set>
[[nodiscard]] bool in_set(DType t) {
  return dispatch_dtype<set>(t, [](auto) {});
}

// Calls f(T{}) with the unsigned integer type of an element of `esize` bytes, for pure moves.
// Returns false (calling nothing) for other sizes.
template <class F>
bool dispatch_bytes(std::size_t esize, F&& f) {
  switch (esize) {
    case 1:
      f(uint8_t{});
      return true;
    case 2:
      f(uint16_t{});
      return true;
    case 4:
      f(uint32_t{});
      return true;
    case 8:
      f(uint64_t{});
      return true;
    default:
      return false;
  }
}

// ---- strided plan ----

inline constexpr int kMaxOperands = 3;
inline constexpr int kMaxPlanRank = 2 * kMaxRank;  // Tile doubles the rank

struct Plan {
  int rank = 1;
  int n = 0;  // operands
  std::array<int64_t, kMaxPlanRank> dims{};
  std::array<std::array<int64_t, kMaxPlanRank>, kMaxOperands> strides{};

  // Drops size-1 axes and merges axes contiguous for every operand. Output is row-major. A plan
  // with an axis of 0 becomes one empty axis: the others' products may not fit in int64.
  void coalesce() {
    for (int i = 0; i < rank; ++i)
      if (dims[i] == 0) {
        rank = 1;
        dims[0] = 0;
        for (int k = 0; k < n; ++k) strides[k][0] = 0;
        return;
      }
    int w = 0;
    for (int i = 0; i < rank; ++i) {
      if (dims[i] == 1) continue;
      if (w > 0) {
        bool merge = true;
        for (int k = 0; k < n; ++k)
          if (strides[k][w - 1] != strides[k][i] * dims[i]) merge = false;
        if (merge) {
          dims[w - 1] *= dims[i];
          for (int k = 0; k < n; ++k) strides[k][w - 1] = strides[k][i];
          continue;
        }
      }
      dims[w] = dims[i];
      for (int k = 0; k < n; ++k) strides[k][w] = strides[k][i];
      ++w;
    }
    if (w == 0) {
      dims[0] = 1;
      for (int k = 0; k < n; ++k) strides[k][0] = 0;
      w = 1;
    }
    rank = w;
  }
  [[nodiscard]] int64_t inner() const { return dims[rank - 1]; }
  [[nodiscard]] int64_t inner_stride(int k) const { return strides[k][rank - 1]; }
};

// Operand strides of `in` broadcast to `out` (0 on broadcast axes), aligned to out's rank.
inline void set_broadcast_strides(Plan& p, int k, const Dims& in, const Dims& out) {
  const int r = out.rank();
  int64_t acc = 1;
  for (int i = r - 1; i >= 0; --i) {
    const int ii = i - (r - in.rank());
    const int64_t d = ii >= 0 ? in[ii] : 1;
    p.strides[k][i] = (d == 1) ? 0 : acc;
    acc *= d;
  }
}

// A plan for `out` with each operand broadcast to it.
[[nodiscard]] inline Plan broadcast_plan(const Dims& out, std::initializer_list<const Dims*> ins) {
  Plan p;
  p.rank = out.rank();
  p.n = static_cast<int>(ins.size());
  for (int i = 0; i < out.rank(); ++i) p.dims[i] = out[i];
  int k = 0;
  for (const Dims* d : ins) set_broadcast_strides(p, k++, *d, out);
  p.coalesce();
  return p;
}

// Calls f(out_offset, offsets[N], len) for the contiguous runs of output elements [begin, end):
// output elements out_offset .. out_offset+len-1 read operand k at offsets[k] + j*inner_stride(k).
template <int N, class F>
void for_each_run(const Plan& p, int64_t begin, int64_t end, const std::array<int64_t, N>& base, F&& f) {
  if (begin >= end) return;
  std::array<int64_t, kMaxPlanRank> coord{};
  std::array<int64_t, N> off = base;
  int64_t rem = begin;
  for (int i = p.rank - 1; i >= 0; --i) {
    coord[i] = rem % p.dims[i];
    rem /= p.dims[i];
    for (int k = 0; k < N; ++k) off[k] += coord[i] * p.strides[k][i];
  }
  const int last = p.rank - 1;
  const int64_t inner = p.dims[last];
  int64_t pos = begin;
  while (pos < end) {
    const int64_t len = std::min(inner - coord[last], end - pos);
    f(pos, off, len);
    pos += len;
    coord[last] += len;
    for (int k = 0; k < N; ++k) off[k] += len * p.strides[k][last];
    if (coord[last] < inner) continue;
    coord[last] = 0;
    for (int k = 0; k < N; ++k) off[k] -= inner * p.strides[k][last];
    for (int i = last - 1; i >= 0; --i) {
      ++coord[i];
      for (int k = 0; k < N; ++k) off[k] += p.strides[k][i];
      if (coord[i] < p.dims[i]) break;
      for (int k = 0; k < N; ++k) off[k] -= p.dims[i] * p.strides[k][i];
      coord[i] = 0;
    }
  }
}

// Copies elements of `esize` bytes gathered through a one-operand plan into a contiguous output.
inline void strided_copy(const Plan& p, const std::byte* src, int64_t src_base, std::byte* dst,
                         std::size_t esize, int64_t total, const Parallel& par) {
  par.for_range(total, kGrain, [&](int64_t b, int64_t e) {
    for_each_run<1>(p, b, e, {src_base}, [&](int64_t o, const std::array<int64_t, 1>& off, int64_t len) {
      const int64_t s = p.inner_stride(0);
      std::byte* d = dst + o * static_cast<int64_t>(esize);
      const std::byte* x = src + off[0] * static_cast<int64_t>(esize);
      if (s == 1) {
        std::memcpy(d, x, static_cast<std::size_t>(len) * esize);
        return;
      }
      const bool done = dispatch_bytes(esize, [&](auto tag) {
        using T = decltype(tag);
        T* dt = reinterpret_cast<T*>(d);
        const T* xt = reinterpret_cast<const T*>(x);
        for (int64_t j = 0; j < len; ++j) dt[j] = xt[j * s];
      });
      if (!done)
        for (int64_t j = 0; j < len; ++j)
          std::memcpy(d + j * static_cast<int64_t>(esize), x + j * s * static_cast<int64_t>(esize), esize);
    });
  });
}

// Contiguous copy that tolerates aliasing (a future executor may run in place) and empty tensors.
inline void copy_bytes(void* dst, const void* src, std::size_t n) {
  if (n == 0 || dst == src) return;
  std::memmove(dst, src, n);
}

// Fills `count` elements of `esize` bytes at dst with the one at `value` (ConstantOfShape, Pad).
inline void fill_pattern(std::byte* dst, int64_t count, const std::byte* value, std::size_t esize) {
  if (count <= 0) return;
  bool zero = true;
  for (std::size_t i = 0; i < esize; ++i) zero = zero && value[i] == std::byte{0};
  if (zero) {
    std::memset(dst, 0, static_cast<std::size_t>(count) * esize);
    return;
  }
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * static_cast<int64_t>(esize), value, esize);
}

// ---- float16 ----

[[nodiscard]] inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

// Round to nearest even; overflow becomes infinity, NaN stays NaN.
[[nodiscard]] inline uint16_t float_to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (ax < 0x38800000u) {                                               // below 2^-14: subnormal
    const float scaled = std::bit_cast<float>(ax) * 16777216.f;         // exact: power-of-two scale
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
  }
  const uint32_t mant = ax & 0x7fffffu;
  uint32_t h = (((ax >> 23) - 112) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

// ---- bfloat16: the upper half of a float32 ----

[[nodiscard]] inline float bf16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}
// Keeps the upper 16 bits (truncation), as ONNX 1.12's reference Cast does; NaN stays NaN.
[[nodiscard]] inline uint16_t float_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>(x >> 16);
}

// ---- float32 or float64 data ----

inline bool floating(DType t) {
  return t == DType::float32 || t == DType::float64;
}

// Element i of a float32 or float64 tensor, as a double.
inline double load(const ConstTensorView& v, int64_t i) {
  return v.dtype == DType::float64 ? v.as<double>()[i] : static_cast<double>(v.as<float>()[i]);
}

// Element i of a float32 or float64 tensor, set from a double.
inline void store(const TensorView& v, int64_t i, double x) {
  if (v.dtype == DType::float64)
    v.as<double>()[i] = x;
  else
    v.as<float>()[i] = static_cast<float>(x);
}

// A one-element float or signed integer tensor, as a double.
inline double scalar_double(const ConstTensorView& v) {
  double out = 0;
  (void)kern::dispatch_dtype<kern::kFloats | kern::kSigned>(
      v.dtype, [&](auto tag) { out = static_cast<double>(*v.as<kern::storage_t<decltype(tag)::value>>()); });
  return out;
}

// ---- checks at create; optional inputs and outputs ----

// Static info of input i, or nullptr when omitted / out of range.
[[nodiscard]] inline const Value* input_info(const KernelSetup& s, std::size_t i) {
  return i < s.inputs.size() ? s.inputs[i] : nullptr;
}

// Constant bytes of input i (a param) or nullptr.
[[nodiscard]] inline const ConstTensorView* constant(const KernelSetup& s, std::size_t i) {
  if (i >= s.constants.size() || s.constants[i].data == nullptr) return nullptr;
  return &s.constants[i];
}

[[nodiscard]] inline bool has_output(const KernelSetup& s, std::size_t i) {
  return i < s.node.outputs.size() && s.node.outputs[i] != kNoValue;
}

// Every present input among `which` must be float32 (the reference kernels are float-only).
[[nodiscard]] inline Status require_float(const KernelSetup& s, std::initializer_list<std::size_t> which) {
  for (std::size_t i : which) {
    if (i < 32) s.float_inputs |= 1u << i;
    const Value* v = input_info(s, i);
    if (v && v->dtype != DType::float32 && v->dtype != DType::undefined)
      return make_error(s.label, ": input ", i, " has dtype ", dtype_name(v->dtype), "; the reference ",
                        s.node.op, " kernel supports float32 only");
  }
  return {};
}

[[nodiscard]] inline Status require_inputs(const KernelSetup& s, std::size_t min, std::size_t max) {
  if (s.node.inputs.size() < min || s.node.inputs.size() > max)
    return make_error(s.label, ": ", s.node.op, " takes ", min, "..", max, " inputs, got ",
                      s.node.inputs.size());
  for (std::size_t i = 0; i < min; ++i)
    if (s.node.inputs[i] == kNoValue) return make_error(s.label, ": required input ", i, " is missing");
  return {};
}

// The reference kernels are channels-first only; a node the layout pass marked NHWC
// (core/compiler/layout_nhwc.h) belongs to a fast kernel that declined it.
[[nodiscard]] inline Status require_nchw(const KernelSetup& s) {
  if (s.node.attrs.get_string("weave_layout", "NCHW") != "NCHW")
    return make_error(s.label, ": ", s.node.op, " in layout ", s.node.attrs.get_string("weave_layout"),
                      " needs the fast CPU path, which did not accept this node");
  return {};
}

[[nodiscard]] inline bool present(const ShapeContext& c, std::size_t i) {
  return has_input(c.inputs, i);
}
[[nodiscard]] inline bool present(const RunContext& c, std::size_t i) {
  return i < c.inputs.size() && c.inputs[i].present() && c.inputs[i].data != nullptr;
}
[[nodiscard]] inline float* out_f32(const RunContext& c, std::size_t i) {
  return i < c.outputs.size() ? static_cast<float*>(c.outputs[i].data) : nullptr;
}

// ---- checks at infer ----

// Input i is present and of a dtype with a size (the shape and data-movement ops: they move
// bytes, so most of them work for any dtype).
inline Status need_input(const ShapeContext& ctx, std::size_t i, const char* what) {
  if (!has_input(ctx.inputs, i)) return make_error(ctx.label, ": input ", i, " (", what, ") is missing");
  if (dtype_size(ctx.inputs[i].dtype) == 0)
    return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[i].dtype), " of ", what,
                      " is not supported");
  return {};
}

// Input i as a list of ints that must be known at infer time. Shape-like inputs (Reshape's
// shape, Slice's starts, Pad's pads...) are params or shape-derived values; run() reads them
// again from its bound inputs, which hold the same values.
inline Expected<std::vector<int64_t>> known_ints(const ShapeContext& ctx, std::size_t i, const char* what,
                                                 const char* op) {
  const ConstTensorView& v = ctx.inputs[i];
  if (v.data == nullptr && v.numel() > 0)
    return make_error(ctx.label, ": ", what, " of ", op, " is only known at run time; it must be a constant");
  return kern::read_ints(v, ctx.label, what);
}

// The first n inputs are present and input 0 has a dtype with a size (the indexing ops).
inline Status need(const ShapeContext& ctx, std::size_t n) {
  if (ctx.inputs.size() < n)
    return make_error(ctx.label, ": expects ", n, " inputs, got ", ctx.inputs.size());
  for (std::size_t i = 0; i < n; ++i)
    if (!ctx.inputs[i].present()) return make_error(ctx.label, ": input ", i, " is missing");
  if (dtype_size(ctx.inputs[0].dtype) == 0)
    return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[0].dtype), " is not supported");
  return {};
}

// Input i's values, which infer needs (value_inputs), must be there: an output shape that
// depends on them (Compress, NonZero, Unique) is planned once they are known
// (core/runtime/plan.h).
inline Status need_values(const ShapeContext& ctx, std::size_t i, const char* what) {
  if (ctx.inputs[i].data == nullptr && ctx.inputs[i].numel() > 0)
    return make_error(ctx.label, ": ", what, " is only known at run time");
  return {};
}

// Input i holds int32 or int64 values.
inline Status need_int(const ShapeContext& ctx, std::size_t i, const char* what) {
  if (ctx.inputs[i].dtype != DType::int64 && ctx.inputs[i].dtype != DType::int32)
    return make_error(ctx.label, ": ", what, " must be int32 or int64, got ",
                      dtype_name(ctx.inputs[i].dtype));
  return {};
}

// A scalar (or one-element) input as an integer; infer checks presence and values.
inline Expected<int64_t> scalar_int(const ShapeContext& ctx, std::size_t i, const char* what) {
  const ConstTensorView& v = ctx.inputs[i];
  if (v.numel() != 1) return make_error(ctx.label, ": ", what, " must be a scalar");
  if (v.data == nullptr) return make_error(ctx.label, ": ", what, " is only known at run time");
  if (v.dtype != DType::int64 && v.dtype != DType::int32)
    return make_error(ctx.label, ": ", what, " must be int32 or int64, got ", dtype_name(v.dtype));
  return kern::int_at(v, 0);
}

// The attribute output_datatype of the signal ops: float32 (the default) or float64.
inline Expected<DType> output_datatype(const KernelSetup& s) {
  const int64_t raw = s.node.attrs.get_int("output_datatype", 1);
  if (raw != static_cast<int64_t>(DType::float32) && raw != static_cast<int64_t>(DType::float64))
    return make_error("unsupported attribute output_datatype=", raw, " (float32 or float64)");
  return static_cast<DType>(raw);
}

// idx wrapped into [0, dim); -1 when outside. Indices are runtime data: every index is wrapped
// once (negative counts from the end) and then checked; an index still outside its axis is
// skipped (scatters), or gives zeros (gathers), so no input value reads or writes out of bounds.
inline int64_t wrap_index(int64_t idx, int64_t dim) {
  if (idx < 0) idx += dim;
  return idx >= 0 && idx < dim ? idx : -1;
}

// Wraps a negative index once, then clamps into [0, dim) (dim > 0): Gather's policy for indices
// that are data (a hostile index never reads out of bounds).
inline int64_t clamp_index(int64_t idx, int64_t dim) {
  if (idx < 0) idx += dim;
  return std::clamp<int64_t>(idx, 0, dim - 1);
}

// ---- sampling ----

// Cubic convolution weights of the 4 taps around a point at `t` in (0, 1] past tap 1 (Resize,
// GridSample).
inline std::array<double, 4> cubic_weights(double t, double A) {
  auto near = [A](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };       // |d| <= 1
  auto far = [A](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };  // 1 < |d| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

}  // namespace weave::kern
