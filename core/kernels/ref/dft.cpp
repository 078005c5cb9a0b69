// DFT and STFT (opset 17; one direct transform). Transforms are direct O(n^2) sums accumulated
// in double, so exact zeros of the spectrum come out as (nearly) zero; float32 or float64 in and
// out. Sizes (DFT length, frame step and length) are input values that decide output shapes: the
// kernels list them in value_inputs.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::floating;
using kern::has_input;
using kern::load;
using kern::make_kernel;
using kern::scalar_int;
using kern::store;

using Made = Expected<std::unique_ptr<Kernel>>;

// One (inverse) DFT of n points read through `in(k) -> (re, im)` (zero beyond the signal),
// writing bins [0, bins) through `out(f, re, im)`.
template <class In, class Out>
void dft(int64_t n, int64_t bins, bool inverse, In&& in, Out&& out) {
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t f = 0; f < bins; ++f) {
    double re = 0, im = 0;
    for (int64_t k = 0; k < n; ++k) {
      const auto [xr, xi] = in(k);
      const double a =
          sign * 2 * std::numbers::pi * static_cast<double>((f * k) % n) / static_cast<double>(n);
      const double c = std::cos(a), s = std::sin(a);
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    if (inverse) {
      re /= static_cast<double>(n);
      im /= static_cast<double>(n);
    }
    out(f, re, im);
  }
}

// The direct transform costs bins x points multiply-adds: refused beyond ~2^32 (seconds of work)
// so that a hostile length cannot stall a run.
Status check_work(int64_t bins, int64_t points, const std::string& label) {
  constexpr int64_t kMaxWork = int64_t{1} << 32;
  if (bins > 0 && points > kMaxWork / bins)
    return make_error(label, ": a direct transform of ", bins, " bins over ", points,
                      " points is too much work for the reference kernel (O(n^2))");
  return {};
}

class DftKernel final : public Kernel {
 public:
  DftKernel(int64_t axis, bool inverse, bool onesided)
      : axis_(axis), inverse_(inverse), onesided_(onesided) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // dft_length
  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0) || !floating(ctx.inputs[0].dtype))
      return make_error(ctx.label, ": input must be float32 or float64");
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() < 3 || (x[x.rank() - 1] != 1 && x[x.rank() - 1] != 2))
      return make_error(ctx.label, ": input ", dims_str(x), " must be [batch, ..., 1 or 2]");
    auto a = axis(x, ctx.label);
    if (!a) return a.error();
    int64_t n = x[*a];
    if (has_input(ctx.inputs, 1)) {
      auto l = scalar_int(ctx, 1, "dft_length");
      if (!l) return l.error();
      if (*l < 1 || *l > (int64_t{1} << 24))
        return make_error(ctx.label, ": dft_length ", *l, " is out of range");
      n = *l;
    }
    Dims out = x;
    out[*a] = onesided_ ? n / 2 + 1 : n;
    out[x.rank() - 1] = 2;
    WEAVE_TRY(check_work(out.numel() / 2, n, ctx.label));
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const ConstTensorView& in = ctx.inputs[0];
    const Dims& x = in.dims;
    const int a = *axis(x, {});
    const int64_t n = has_input(ctx.inputs, 1) ? kern::int_at(ctx.inputs[1], 0) : x[a];
    const int64_t comps = x[x.rank() - 1];
    const int64_t bins = ctx.outputs[0].dims[a];
    // Outer: dims before the axis; inner: dims after it, without the complex dim.
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < a; ++i) outer *= x[i];
    for (int i = a + 1; i < x.rank() - 1; ++i) inner *= x[i];
    const int64_t len = x[a];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        dft(
            n, bins, inverse_,
            [&](int64_t k) -> std::pair<double, double> {
              if (k >= len) return {0.0, 0.0};
              const int64_t at = ((o * len + k) * inner + i) * comps;
              return {load(in, at), comps == 2 ? load(in, at + 1) : 0.0};
            },
            [&](int64_t f, double re, double im) {
              const int64_t at = ((o * bins + f) * inner + i) * 2;
              store(ctx.outputs[0], at, re);
              store(ctx.outputs[0], at + 1, im);
            });
  }

 private:
  [[nodiscard]] Expected<int> axis(const Dims& x, const std::string& label) const {
    // The last dim holds the complex components: the axis is one of the signal dims.
    auto a = kern::normalize_axis(axis_, x.rank(), label);
    if (!a) return a.error();
    if (*a == 0 || *a == x.rank() - 1)
      return make_error(label, ": axis ", axis_, " must be a signal dim of ", dims_str(x));
    return *a;
  }
  int64_t axis_;
  bool inverse_, onesided_;
};

// signal [batch, length, 1 or 2], frame_step, window [frame_length]?, frame_length?
//   -> [batch, frames, bins, 2], frames = (length - frame_length) / frame_step + 1.
class StftKernel final : public Kernel {
 public:
  explicit StftKernel(bool onesided) : onesided_(onesided) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1 | 1u << 3; }
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (!has_input(in, 0) || !floating(in[0].dtype))
      return make_error(ctx.label, ": signal must be float32 or float64");
    const Dims& x = in[0].dims;
    if (x.rank() != 3 || (x[2] != 1 && x[2] != 2))
      return make_error(ctx.label, ": signal ", dims_str(x), " must be [batch, length, 1 or 2]");
    if (!has_input(in, 1)) return make_error(ctx.label, ": needs frame_step");
    auto step = scalar_int(ctx, 1, "frame_step");
    if (!step) return step.error();
    int64_t frame = -1;
    if (has_input(in, 2)) {
      if (in[2].dims.rank() != 1 || in[2].dtype != in[0].dtype)
        return make_error(ctx.label, ": window must be 1-D of the signal's dtype");
      frame = in[2].dims[0];
    }
    if (has_input(in, 3)) {
      auto l = scalar_int(ctx, 3, "frame_length");
      if (!l) return l.error();
      if (frame >= 0 && *l != frame)
        return make_error(ctx.label, ": frame_length differs from the window's length");
      frame = *l;
    }
    if (frame < 1 || frame > x[1] || *step < 1)
      return make_error(ctx.label, ": frame length ", frame, " and step ", *step, " do not fit signal ",
                        dims_str(x));
    const int64_t frames = (x[1] - frame) / *step + 1;
    ctx.outputs[0].dtype = in[0].dtype;
    ctx.outputs[0].dims = Dims{x[0], frames, onesided_ ? frame / 2 + 1 : frame, 2};
    WEAVE_TRY(check_work(ctx.outputs[0].dims.numel() / 2, frame, ctx.label));
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const Dims& x = in[0].dims;
    const Dims& od = ctx.outputs[0].dims;
    const int64_t step = kern::int_at(in[1], 0);
    const int64_t frame = has_input(in, 2) ? in[2].dims[0] : kern::int_at(in[3], 0);
    const int64_t comps = x[2];
    for (int64_t b = 0; b < od[0]; ++b)
      for (int64_t t = 0; t < od[1]; ++t)
        dft(
            frame, od[2], false,
            [&](int64_t k) -> std::pair<double, double> {
              const double w = has_input(in, 2) ? load(in[2], k) : 1.0;
              const int64_t at = (b * x[1] + t * step + k) * comps;
              return {load(in[0], at) * w, comps == 2 ? load(in[0], at + 1) * w : 0.0};
            },
            [&](int64_t f, double re, double im) {
              const int64_t at = ((b * od[1] + t) * od[2] + f) * 2;
              store(ctx.outputs[0], at, re);
              store(ctx.outputs[0], at + 1, im);
            });
  }

 private:
  bool onesided_;
};

}  // namespace

void register_dft(KernelRegistry& r) {
  r.add("DFT", [](const KernelSetup& s) -> Made {
    return make_kernel<DftKernel>(s.node.attrs.get_int("axis", 1), s.node.attrs.get_int("inverse", 0) != 0,
                                  s.node.attrs.get_int("onesided", 0) != 0);
  });
  r.add("STFT", [](const KernelSetup& s) -> Made {
    return make_kernel<StftKernel>(s.node.attrs.get_int("onesided", 1) != 0);
  });
}

}  // namespace weave
