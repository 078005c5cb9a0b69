// ConvInteger and QLinearConv: one direct integer convolution with zero points.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/kernels/ref/quantize.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"
#include "core/kernels/spatial.h"

namespace weave {
namespace {

using kern::check_qparams;
using kern::dims_str;
using kern::has_input;
using kern::make_kernel;
using kern::optional;
using kern::qget;
using kern::qput;
using kern::quantized;
using kern::scale_at;
using kern::zero_point;

using Made = Expected<std::unique_ptr<Kernel>>;

// Direct convolution of integer x [N, C, spatial] and w [M, C/group, kernel] with zero points,
// into int64 accumulators handed to put(flat output index, acc, output channel).
class IntConv {
 public:
  explicit IntConv(WindowAttrs a, int64_t group) : a_(std::move(a)), group_(group) {}

  Status infer(const Dims& x, const Dims& w, const std::string& label, Dims& out, WindowGeometry& g) const {
    if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank())
      return make_error(label, ": x ", dims_str(x), " and w ", dims_str(w),
                        " must be 3-D to 5-D of one rank");
    int64_t channels = 0;  // w[1] * group without overflow (a zero-size weight may claim any dims)
    if (group_ < 1 || __builtin_mul_overflow(w[1], group_, &channels) || x[1] != channels ||
        w[0] % group_ != 0)
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
    ctx.work = window_work(g, shape_numel(out.span()), in[1].dims[1]);
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
    ctx.work = window_work(g, shape_numel(out.span()), in[3].dims[1]);
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

void register_conv_integer(KernelRegistry& r) {
  r.add("ConvInteger", &make_int_conv<ConvIntegerKernel>);
  r.add("QLinearConv", &make_int_conv<QLinearConvKernel>);
}

}  // namespace weave
