// What the reference quantized kernels share (quantize_linear.cpp, dynamic_quantize_linear.cpp,
// matmul_integer.cpp, conv_integer.cpp): reading and writing quantized values, their scales and
// zero points.
//
// Quantized values are uint8 or int8 (int32 for dequantizing accumulators); scales are float32,
// per tensor (a scalar) or per channel along `axis` (1-D). Integer products accumulate exactly in
// int32 (int64 while summing, then saturated), requantization rounds half to even and saturates,
// as ONNX defines. Zero points are optional inputs defaulting to 0.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "core/kernels/kernel_util.h"

namespace weave::kern {

inline bool quantized(DType t) {
  return t == DType::uint8 || t == DType::int8;
}

// Element i of an int8/uint8/int32 tensor.
inline int32_t qget(const ConstTensorView& v, int64_t i) {
  switch (v.dtype) {
    case DType::uint8:
      return v.as<uint8_t>()[i];
    case DType::int8:
      return v.as<int8_t>()[i];
    case DType::int32:
      return v.as<int32_t>()[i];
    default:
      return 0;
  }
}

// Zero point of input i at channel c (0 when omitted; per tensor when it has one element).
inline int32_t zero_point(std::span<const ConstTensorView> in, std::size_t i, int64_t c) {
  if (!has_input(in, i) || in[i].numel() == 0) return 0;
  return qget(in[i], in[i].numel() == 1 ? 0 : c);
}

inline float scale_at(const ConstTensorView& s, int64_t c) {
  return s.as<float>()[s.numel() == 1 ? 0 : c];
}

// round half to even, then saturate into the range of `t` (uint8 or int8), stored at out[i].
// NaN (a NaN input, or an infinite range in DynamicQuantizeLinear) becomes 0: converting it to an
// integer type would be undefined.
inline void qput(const TensorView& out, int64_t i, double v) {
  const double r = std::isnan(v) ? 0.0 : std::nearbyint(v);
  if (out.dtype == DType::uint8)
    out.as<uint8_t>()[i] = static_cast<uint8_t>(std::clamp(r, 0.0, 255.0));
  else
    out.as<int8_t>()[i] = static_cast<int8_t>(std::clamp(r, -128.0, 127.0));
}

// Checks a scale (float32) and zero point (uint8/int8/int32 when given) against `channels`
// channels: a scalar/one element, or a 1-D tensor of that many.
inline Status check_qparams(const ShapeContext& ctx, std::size_t scale, std::size_t zp, int64_t channels,
                            const char* what) {
  const auto& in = ctx.inputs;
  if (!has_input(in, scale) || in[scale].dtype != DType::float32)
    return make_error(ctx.label, ": ", what, " scale must be float32");
  auto fits = [&](const ConstTensorView& v) {
    return v.numel() == 1 || (v.dims.rank() == 1 && v.dims[0] == channels);
  };
  if (!fits(in[scale]))
    return make_error(ctx.label, ": ", what, " scale ", dims_str(in[scale].dims),
                      " must be a scalar or hold ", channels, " values");
  if (has_input(in, zp) && (!fits(in[zp]) && in[zp].numel() != 0))
    return make_error(ctx.label, ": ", what, " zero point ", dims_str(in[zp].dims),
                      " does not match its scale");
  return {};
}

// Input i when it is given and not empty (an optional zero point), else nullptr.
inline const ConstTensorView* optional(std::span<const ConstTensorView> in, std::size_t i) {
  return has_input(in, i) && in[i].numel() > 0 ? &in[i] : nullptr;
}

}  // namespace weave::kern
