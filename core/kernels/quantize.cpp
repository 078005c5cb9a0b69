// Reference quantized kernels: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv.
//
// Quantized values are uint8 or int8 (int32 for dequantizing accumulators); scales are float32,
// per tensor (a scalar) or per channel along `axis` (1-D). Integer products accumulate exactly in
// int32 (int64 while summing, then saturated), requantization rounds half to even and saturates,
// as ONNX defines. Zero points are optional inputs defaulting to 0.
#include <cmath>
#include <limits>

#include "core/kernels/kernel_util.h"
#include "core/kernels/registry.h"
#include "core/kernels/spatial.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::make_kernel;

using Made = Expected<std::unique_ptr<Kernel>>;

bool quantized(DType t) {
  return t == DType::uint8 || t == DType::int8;
}

// Element i of an int8/uint8/int32 tensor.
int32_t qget(const ConstTensorView& v, int64_t i) {
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
int32_t zero_point(std::span<const ConstTensorView> in, std::size_t i, int64_t c) {
  if (!has_input(in, i) || in[i].numel() == 0) return 0;
  return qget(in[i], in[i].numel() == 1 ? 0 : c);
}

float scale_at(const ConstTensorView& s, int64_t c) {
  return s.as<float>()[s.numel() == 1 ? 0 : c];
}

// round half to even, then saturate into the range of `t` (uint8 or int8), stored at out[i].
// NaN (a NaN input, or an infinite range in DynamicQuantizeLinear) becomes 0: converting it to an
// integer type would be undefined.
void qput(const TensorView& out, int64_t i, double v) {
  const double r = std::isnan(v) ? 0.0 : std::nearbyint(v);
  if (out.dtype == DType::uint8)
    out.as<uint8_t>()[i] = static_cast<uint8_t>(std::clamp(r, 0.0, 255.0));
  else
    out.as<int8_t>()[i] = static_cast<int8_t>(std::clamp(r, -128.0, 127.0));
}

// Checks a scale (float32) and zero point (uint8/int8/int32 when given) against `channels`
// channels: a scalar/one element, or a 1-D tensor of that many.
Status check_qparams(const ShapeContext& ctx, std::size_t scale, std::size_t zp, int64_t channels,
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

// ---------------------------------------------------------------- QuantizeLinear, DequantizeLinear

class QuantizeKernel final : public Kernel {
 public:
  QuantizeKernel(bool quantize, int64_t axis) : quantize_(quantize), axis_(axis) {}
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() < 2 || !in[0].present()) return make_error(ctx.label, ": expects x and a scale");
    const Dims& x = in[0].dims;
    int64_t channels = 1;
    if (has_input(in, 1) && in[1].numel() > 1) {
      auto a = kern::normalize_axis(axis_, x.rank(), ctx.label);
      if (!a) return a.error();
      channels = x[*a];
    }
    WEAVE_TRY(check_qparams(ctx, 1, 2, channels, quantize_ ? "y" : "x"));
    DType out = DType::float32;
    if (quantize_) {
      if (in[0].dtype != DType::float32 && in[0].dtype != DType::int32)
        return make_error(ctx.label, ": x must be float32 or int32, got ", dtype_name(in[0].dtype));
      out = has_input(in, 2) ? in[2].dtype : DType::uint8;
      if (!quantized(out))
        return make_error(ctx.label, ": zero point dtype ", dtype_name(out), " is not supported");
    } else {
      if (!quantized(in[0].dtype) && in[0].dtype != DType::int32)
        return make_error(ctx.label, ": x dtype ", dtype_name(in[0].dtype), " is not supported");
      if (has_input(in, 2) && in[2].dtype != in[0].dtype)
        return make_error(ctx.label, ": zero point dtype differs from x");
    }
    ctx.outputs[0].dtype = out;
    ctx.outputs[0].dims = x;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const Dims& x = in[0].dims;
    const bool per_channel = in[1].numel() > 1;
    const auto v = per_channel ? kern::around_axis(x, axis_) : kern::AxisView{0, 1, 1, x.numel()};
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t c = 0; c < v.dim; ++c) {
        const float s = scale_at(in[1], c);
        const int32_t zp = zero_point(in, 2, c);
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t at = (o * v.dim + c) * v.inner + i;
          if (quantize_) {
            // Divided in float32, as ONNX's reference does (x / scale can land on .5 only there).
            const float xv = in[0].dtype == DType::float32 ? in[0].as<float>()[at]
                                                           : static_cast<float>(in[0].as<int32_t>()[at]);
            qput(ctx.outputs[0], at, std::nearbyint(xv / s) + zp);
          } else {
            ctx.outputs[0].as<float>()[at] =
                static_cast<float>(static_cast<double>(qget(in[0], at) - zp) * s);
          }
        }
      }
  }

 private:
  bool quantize_;
  int64_t axis_;
};

// y = quantize(x) with scale and zero point chosen from x's range (extended to include 0).
class DynamicQuantizeKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.empty() || !ctx.inputs[0].present() || ctx.inputs[0].dtype != DType::float32)
      return make_error(ctx.label, ": x must be float32");
    ctx.outputs[0].dtype = DType::uint8;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    if (ctx.outputs.size() > 1) {
      ctx.outputs[1].dtype = DType::float32;
      ctx.outputs[1].dims = Dims{};
    }
    if (ctx.outputs.size() > 2) {
      ctx.outputs[2].dtype = DType::uint8;
      ctx.outputs[2].dims = Dims{};
    }
    return {};
  }
  void run(const RunContext& ctx) const override {
    const float* x = ctx.inputs[0].as<float>();
    const int64_t n = ctx.inputs[0].numel();
    float lo = 0.f, hi = 0.f;
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(x[i])) continue;
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    const float scale = (hi - lo) / 255.f;
    const double z = scale > 0 ? std::nearbyint(0.0 - lo / scale) : 0.0;
    const double zp = std::isnan(z) ? 0.0 : std::clamp(z, 0.0, 255.0);
    for (int64_t i = 0; i < n; ++i)
      qput(ctx.outputs[0], i, scale > 0 ? std::nearbyint(x[i] / scale) + zp : zp);
    if (ctx.outputs.size() > 1 && ctx.outputs[1].present()) *ctx.outputs[1].as<float>() = scale;
    if (ctx.outputs.size() > 2 && ctx.outputs[2].present())
      *ctx.outputs[2].as<uint8_t>() = static_cast<uint8_t>(zp);
  }
};

// ---------------------------------------------------------------- MatMulInteger, QLinearMatMul

// Batched integer matmul with numpy broadcasting of the batch dims: acc = (a - za) @ (b - zb).
// A 1-D a or b is promoted as MatMul does. Zero points: per tensor, or per row of a / column of b.
struct IntMatMul {
  Dims out;
  int64_t m = 0, k = 0, n = 0;
  Dims a_batch, b_batch, batch;

  Status plan(const Dims& a, const Dims& b, const std::string& label) {
    if (a.rank() < 1 || b.rank() < 1) return make_error(label, ": inputs must have rank >= 1");
    m = a.rank() >= 2 ? a[a.rank() - 2] : 1;
    k = a[a.rank() - 1];
    const int64_t kb = b.rank() >= 2 ? b[b.rank() - 2] : b[0];
    n = b.rank() >= 2 ? b[b.rank() - 1] : 1;
    if (k != kb) return make_error(label, ": cannot multiply ", dims_str(a), " by ", dims_str(b));
    a_batch = Dims(a.span().subspan(0, a.rank() >= 2 ? a.size() - 2 : 0));
    b_batch = Dims(b.span().subspan(0, b.rank() >= 2 ? b.size() - 2 : 0));
    if (!kern::broadcast_dims(a_batch, b_batch, batch))
      return make_error(label, ": batch dims of ", dims_str(a), " and ", dims_str(b), " do not broadcast");
    out = batch;
    if (a.rank() >= 2) out.push_back(m);
    if (b.rank() >= 2) out.push_back(n);
    return {};
  }

  // acc[batch, i, j] for every output element, calling put(flat index, acc, i, j).
  template <class Put>
  void run(const ConstTensorView& a, int32_t za_default, const ConstTensorView* za, const ConstTensorView& b,
           const ConstTensorView* zb, Put&& put) const {
    const kern::Plan pa = kern::broadcast_plan(batch, {&a_batch});
    const kern::Plan pb = kern::broadcast_plan(batch, {&b_batch});
    const int64_t batches = batch.numel();
    for (int64_t t = 0; t < batches; ++t) {
      int64_t oa = 0, ob = 0;
      kern::for_each_run<1>(pa, t, t + 1, {0},
                            [&](int64_t, const std::array<int64_t, 1>& off, int64_t) { oa = off[0]; });
      kern::for_each_run<1>(pb, t, t + 1, {0},
                            [&](int64_t, const std::array<int64_t, 1>& off, int64_t) { ob = off[0]; });
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const int32_t zai = za ? qget(*za, za->numel() == 1 ? 0 : i) : za_default;
          const int32_t zbj = zb ? qget(*zb, zb->numel() == 1 ? 0 : j) : 0;
          int64_t acc = 0;
          for (int64_t p = 0; p < k; ++p)
            acc += static_cast<int64_t>(qget(a, (oa * m + i) * k + p) - zai) *
                   (qget(b, (ob * k + p) * n + j) - zbj);
          put((t * m + i) * n + j, acc, i, j);
        }
    }
  }
};

const ConstTensorView* optional(std::span<const ConstTensorView> in, std::size_t i) {
  return has_input(in, i) && in[i].numel() > 0 ? &in[i] : nullptr;
}

class MatMulIntegerKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() < 2 || !in[0].present() || !in[1].present())
      return make_error(ctx.label, ": expects A and B");
    if (!quantized(in[0].dtype) || !quantized(in[1].dtype))
      return make_error(ctx.label, ": A and B must be uint8 or int8, got ", dtype_name(in[0].dtype), " and ",
                        dtype_name(in[1].dtype));
    IntMatMul mm;
    WEAVE_TRY(mm.plan(in[0].dims, in[1].dims, ctx.label));
    ctx.outputs[0].dtype = DType::int32;
    ctx.outputs[0].dims = mm.out;
    ctx.keep(std::move(mm));
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const IntMatMul& mm = ctx.kept<IntMatMul>();
    int32_t* y = ctx.outputs[0].as<int32_t>();
    mm.run(in[0], 0, optional(in, 2), in[1], optional(in, 3), [&](int64_t at, int64_t acc, int64_t, int64_t) {
      y[at] = static_cast<int32_t>(std::clamp<int64_t>(acc, INT32_MIN, INT32_MAX));
    });
  }
};

class QLinearMatMulKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() != 8) return make_error(ctx.label, ": expects 8 inputs");
    for (std::size_t i = 0; i < 8; ++i)
      if (!in[i].present()) return make_error(ctx.label, ": input ", i, " is missing");
    if (!quantized(in[0].dtype) || !quantized(in[3].dtype) || !quantized(in[7].dtype))
      return make_error(ctx.label, ": a, b and y must be uint8 or int8");
    IntMatMul mm;
    WEAVE_TRY(mm.plan(in[0].dims, in[3].dims, ctx.label));
    WEAVE_TRY(check_qparams(ctx, 1, 2, mm.m, "a"));
    WEAVE_TRY(check_qparams(ctx, 4, 5, mm.n, "b"));
    WEAVE_TRY(check_qparams(ctx, 6, 7, 1, "y"));
    ctx.outputs[0].dtype = in[7].dtype;
    ctx.outputs[0].dims = mm.out;
    ctx.keep(std::move(mm));
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const IntMatMul& mm = ctx.kept<IntMatMul>();
    const float ys = scale_at(in[6], 0);
    const int32_t yz = zero_point(in, 7, 0);
    mm.run(in[0], 0, &in[2], in[3], &in[5], [&](int64_t at, int64_t acc, int64_t i, int64_t j) {
      const double real = static_cast<double>(acc) * scale_at(in[1], i) * scale_at(in[4], j);
      qput(ctx.outputs[0], at, std::nearbyint(real / ys) + yz);
    });
  }
};

// ---------------------------------------------------------------- ConvInteger, QLinearConv

// Direct convolution of integer x [N, C, spatial] and w [M, C/group, kernel] with zero points,
// into int64 accumulators handed to put(flat output index, acc, output channel).
class IntConv {
 public:
  explicit IntConv(WindowAttrs a, int64_t group) : a_(std::move(a)), group_(group) {}

  Status infer(const Dims& x, const Dims& w, const std::string& label, Dims& out, WindowGeometry& g) const {
    if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank())
      return make_error(label, ": x ", dims_str(x), " and w ", dims_str(w),
                        " must be 3-D to 5-D of one rank");
    if (group_ < 1 || x[1] != w[1] * group_ || w[0] % group_ != 0)
      return make_error(label, ": x ", dims_str(x), " and w ", dims_str(w), " do not fit group ", group_);
    const auto nd = static_cast<std::size_t>(x.rank() - 2);
    auto geo = forward_geometry(a_, x.span().subspan(2, nd), w.span().subspan(2, nd), label);
    if (!geo) return geo.error();
    g = *geo;
    out = Dims{x[0], w[0]};
    for (int i = 0; i < g.nd; ++i) out.push_back(g.out[i]);
    return {};
  }

  template <class Put>
  void run(const ConstTensorView& x, const ConstTensorView* xz, const ConstTensorView& w,
           const ConstTensorView* wz, const WindowGeometry& geo, Put&& put) const {
    const Geo3 g = lift(geo);
    const int64_t N = x.dims[0], C = x.dims[1], M = w.dims[0];
    const int64_t cg = C / group_, mg = M / group_;
    const int32_t zx = xz ? qget(*xz, 0) : 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) {
        const int32_t zw = wz ? qget(*wz, wz->numel() == 1 ? 0 : m) : 0;
        const int64_t gi = m / mg;
        for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
          for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
            for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
              int64_t acc = 0;
              for (int64_t c = 0; c < cg; ++c)
                for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
                  for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
                    for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                      const int64_t i0 = o0 * g.s[0] + k0 * g.d[0] - g.pb[0];
                      const int64_t i1 = o1 * g.s[1] + k1 * g.d[1] - g.pb[1];
                      const int64_t i2 = o2 * g.s[2] + k2 * g.d[2] - g.pb[2];
                      // Padding holds the zero point: it contributes (zx - zx) = 0.
                      if (i0 < 0 || i1 < 0 || i2 < 0 || i0 >= g.in[0] || i1 >= g.in[1] || i2 >= g.in[2])
                        continue;
                      const int64_t xi =
                          (((n * C + gi * cg + c) * g.in[0] + i0) * g.in[1] + i1) * g.in[2] + i2;
                      const int64_t wi = (((m * cg + c) * g.k[0] + k0) * g.k[1] + k1) * g.k[2] + k2;
                      acc += static_cast<int64_t>(qget(x, xi) - zx) * (qget(w, wi) - zw);
                    }
              put(((n * M + m) * g.out[0] + o0) * g.out[1] * g.out[2] + o1 * g.out[2] + o2, acc, m);
            }
      }
  }

 private:
  WindowAttrs a_;
  int64_t group_;
};

class ConvIntegerKernel final : public Kernel {
 public:
  explicit ConvIntegerKernel(IntConv conv) : conv_(std::move(conv)) {}
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() < 2 || !in[0].present() || !in[1].present())
      return make_error(ctx.label, ": expects x and w");
    if (!quantized(in[0].dtype) || !quantized(in[1].dtype))
      return make_error(ctx.label, ": x and w must be uint8 or int8");
    WindowGeometry g;
    Dims out;
    WEAVE_TRY(conv_.infer(in[0].dims, in[1].dims, ctx.label, out, g));
    ctx.outputs[0].dtype = DType::int32;
    ctx.outputs[0].dims = out;
    ctx.keep(std::move(g));
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const WindowGeometry& g = ctx.kept<WindowGeometry>();
    int32_t* y = ctx.outputs[0].as<int32_t>();
    conv_.run(in[0], optional(in, 2), in[1], optional(in, 3), g, [&](int64_t at, int64_t acc, int64_t) {
      y[at] = static_cast<int32_t>(std::clamp<int64_t>(acc, INT32_MIN, INT32_MAX));
    });
  }

 private:
  IntConv conv_;
};

// x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp [, B int32]
class QLinearConvKernel final : public Kernel {
 public:
  explicit QLinearConvKernel(IntConv conv) : conv_(std::move(conv)) {}
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() < 8) return make_error(ctx.label, ": expects at least 8 inputs");
    for (std::size_t i = 0; i < 8; ++i)
      if (!in[i].present()) return make_error(ctx.label, ": input ", i, " is missing");
    if (!quantized(in[0].dtype) || !quantized(in[3].dtype) || !quantized(in[7].dtype))
      return make_error(ctx.label, ": x, w and y must be uint8 or int8");
    WindowGeometry g;
    Dims out;
    WEAVE_TRY(conv_.infer(in[0].dims, in[3].dims, ctx.label, out, g));
    WEAVE_TRY(check_qparams(ctx, 1, 2, 1, "x"));
    WEAVE_TRY(check_qparams(ctx, 4, 5, in[3].dims[0], "w"));
    WEAVE_TRY(check_qparams(ctx, 6, 7, 1, "y"));
    if (has_input(in, 8) && (in[8].dtype != DType::int32 || in[8].numel() != in[3].dims[0]))
      return make_error(ctx.label, ": B must be int32 with one value per output channel");
    ctx.outputs[0].dtype = in[7].dtype;
    ctx.outputs[0].dims = out;
    ctx.keep(std::move(g));
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const WindowGeometry& g = ctx.kept<WindowGeometry>();
    const float xs = scale_at(in[1], 0), ys = scale_at(in[6], 0);
    const int32_t yz = zero_point(in, 7, 0);
    conv_.run(in[0], &in[2], in[3], &in[5], g, [&](int64_t at, int64_t acc, int64_t m) {
      if (has_input(in, 8)) acc += in[8].as<int32_t>()[m];
      const double real = static_cast<double>(acc) * xs * scale_at(in[4], m);
      qput(ctx.outputs[0], at, std::nearbyint(real / ys) + yz);
    });
  }

 private:
  IntConv conv_;
};

template <class K>
Made make_int_conv(const KernelSetup& s) {
  auto a = parse_window_attrs(s.node.attrs, s.label);
  if (!a) return a.error();
  return make_kernel<K>(IntConv(std::move(*a), s.node.attrs.get_int("group", 1)));
}

}  // namespace

void register_quantize_kernels(KernelRegistry& r) {
  r.add("QuantizeLinear", [](const KernelSetup& s) -> Made {
    return make_kernel<QuantizeKernel>(true, s.node.attrs.get_int("axis", 1));
  });
  r.add("DequantizeLinear", [](const KernelSetup& s) -> Made {
    return make_kernel<QuantizeKernel>(false, s.node.attrs.get_int("axis", 1));
  });
  r.add("DynamicQuantizeLinear",
        [](const KernelSetup&) -> Made { return make_kernel<DynamicQuantizeKernel>(); });
  r.add("MatMulInteger", [](const KernelSetup&) -> Made { return make_kernel<MatMulIntegerKernel>(); });
  r.add("QLinearMatMul", [](const KernelSetup&) -> Made { return make_kernel<QLinearMatMulKernel>(); });
  r.add("ConvInteger", &make_int_conv<ConvIntegerKernel>);
  r.add("QLinearConv", &make_int_conv<QLinearConvKernel>);
}

}  // namespace weave
