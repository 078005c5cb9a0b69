// Reference signal-processing kernels (opset 17): DFT, STFT, HannWindow, HammingWindow,
// BlackmanWindow, MelWeightMatrix. Transforms are direct O(n^2) sums accumulated in double, so
// exact zeros of the spectrum come out as (nearly) zero; float32 or float64 in and out.
// Sizes (window size, DFT length, frame step and length, mel bins) are input values that decide
// output shapes: the kernels list them in value_inputs.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/kernels/kernel_util.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::make_kernel;

using Made = Expected<std::unique_ptr<Kernel>>;

// A scalar (or one-element) input as an integer / a double; infer checks presence and values.
Expected<int64_t> scalar_int(const ShapeContext& ctx, std::size_t i, const char* what) {
  const ConstTensorView& v = ctx.inputs[i];
  if (v.numel() != 1) return make_error(ctx.label, ": ", what, " must be a scalar");
  if (v.data == nullptr) return make_error(ctx.label, ": ", what, " is only known at run time");
  if (v.dtype != DType::int64 && v.dtype != DType::int32)
    return make_error(ctx.label, ": ", what, " must be int32 or int64, got ", dtype_name(v.dtype));
  return kern::int_at(v, 0);
}

double scalar_double(const ConstTensorView& v) {
  double out = 0;
  (void)kern::dispatch_dtype<kern::kFloats | kern::kSigned>(
      v.dtype, [&](auto tag) { out = static_cast<double>(*v.as<kern::storage_t<decltype(tag)::value>>()); });
  return out;
}

Expected<DType> output_datatype(const KernelSetup& s) {
  const int64_t raw = s.node.attrs.get_int("output_datatype", 1);
  if (raw != static_cast<int64_t>(DType::float32) && raw != static_cast<int64_t>(DType::float64))
    return make_error("unsupported attribute output_datatype=", raw, " (float32 or float64)");
  return static_cast<DType>(raw);
}

void put(const TensorView& out, int64_t i, double v) {
  if (out.dtype == DType::float64)
    out.as<double>()[i] = v;
  else
    out.as<float>()[i] = static_cast<float>(v);
}

double get(const ConstTensorView& in, int64_t i) {
  return in.dtype == DType::float64 ? in.as<double>()[i] : static_cast<double>(in.as<float>()[i]);
}

// ---------------------------------------------------------------- windows

// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1.
class WindowKernel final : public Kernel {
 public:
  WindowKernel(double a0, double a1, double a2, bool periodic, DType out)
      : a0_(a0), a1_(a1), a2_(a2), periodic_(periodic), out_(out) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 0; }
  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0)) return make_error(ctx.label, ": needs the size input");
    auto n = scalar_int(ctx, 0, "size");
    if (!n) return n.error();
    if (*n < 0 || *n > kern::kMaxElements) return make_error(ctx.label, ": size ", *n, " is out of range");
    ctx.outputs[0].dtype = out_;
    ctx.outputs[0].dims = Dims{*n};
    return {};
  }
  void run(const RunContext& ctx) const override {
    const int64_t size = ctx.outputs[0].dims[0];
    const double N = static_cast<double>(periodic_ ? size : size - 1);
    for (int64_t n = 0; n < size; ++n) {
      const double x = N > 0 ? 2 * std::numbers::pi * static_cast<double>(n) / N : 0.0;
      put(ctx.outputs[0], n, a0_ - a1_ * std::cos(x) + a2_ * std::cos(2 * x));
    }
  }

 private:
  double a0_, a1_, a2_;
  bool periodic_;
  DType out_;
};

Made make_window(const KernelSetup& s, double a0, double a1, double a2) {
  auto t = output_datatype(s);
  if (!t) return t.error();
  return make_kernel<WindowKernel>(a0, a1, a2, s.node.attrs.get_int("periodic", 1) != 0, *t);
}

// ---------------------------------------------------------------- MelWeightMatrix

// [dft_length / 2 + 1, num_mel_bins] triangular filters between lower and upper edge (Hz),
// spaced evenly on the mel scale, as ONNX's reference computes them.
class MelWeightMatrixKernel final : public Kernel {
 public:
  explicit MelWeightMatrixKernel(DType out) : out_(out) {}
  [[nodiscard]] uint32_t value_inputs() const override { return input_bits(0, 4); }
  Status infer(ShapeContext& ctx) const override {
    for (std::size_t i = 0; i < 5; ++i)
      if (!has_input(ctx.inputs, i)) return make_error(ctx.label, ": needs 5 inputs");
    auto bins = scalar_int(ctx, 0, "num_mel_bins");
    if (!bins) return bins.error();
    auto len = scalar_int(ctx, 1, "dft_length");
    if (!len) return len.error();
    auto rate = scalar_int(ctx, 2, "sample_rate");
    if (!rate) return rate.error();
    if (*bins < 1 || *len < 1 || *rate < 1 || *bins > (1 << 20) || *len > (int64_t{1} << 30))
      return make_error(ctx.label, ": num_mel_bins, dft_length and sample_rate must be positive");
    for (std::size_t i = 3; i < 5; ++i)
      if (ctx.inputs[i].numel() != 1 || ctx.inputs[i].data == nullptr)
        return make_error(ctx.label, ": the edge frequencies must be known scalars");
    ctx.outputs[0].dtype = out_;
    ctx.outputs[0].dims = Dims{*len / 2 + 1, *bins};
    ctx.workspace = static_cast<std::size_t>(*bins + 2) * sizeof(int64_t);  // the filter edges
    return {};
  }
  void run(const RunContext& ctx) const override {
    const int64_t bins = kern::int_at(ctx.inputs[0], 0), len = kern::int_at(ctx.inputs[1], 0);
    const int64_t rate = kern::int_at(ctx.inputs[2], 0);
    const double lo = scalar_double(ctx.inputs[3]), hi = scalar_double(ctx.inputs[4]);
    const int64_t rows = len / 2 + 1;
    const TensorView& out = ctx.outputs[0];
    for (int64_t i = 0; i < out.numel(); ++i) put(out, i, 0.0);
    auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double lo_mel = mel(lo), step = (mel(hi) - lo_mel) / static_cast<double>(bins + 2);
    const std::span<int64_t> f(reinterpret_cast<int64_t*>(ctx.workspace.data()),
                               static_cast<std::size_t>(bins + 2));
    for (int64_t k = 0; k < bins + 2; ++k) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(k) * step + lo_mel) / 2595.0) - 1.0);
      // Clamped to [-1, rows] before converting: hostile edge frequencies (NaN, huge) only
      // move filters off the matrix.
      const double bin = std::floor(static_cast<double>(len + 1) * hz / static_cast<double>(rate));
      f[static_cast<std::size_t>(k)] =
          std::isnan(bin) ? -1 : static_cast<int64_t>(std::clamp(bin, -1.0, static_cast<double>(rows)));
    }
    auto set = [&](int64_t j, int64_t i, double v) {
      if (j >= 0 && j < rows) put(out, j * bins + i, v);
    };
    for (int64_t i = 0; i < bins; ++i) {
      const int64_t left = f[static_cast<std::size_t>(i)], center = f[static_cast<std::size_t>(i + 1)],
                    right = f[static_cast<std::size_t>(i + 2)];
      if (center - left == 0)
        set(center, i, 1.0);
      else
        for (int64_t j = std::max<int64_t>(left, 0); j <= std::min(center, rows - 1); ++j)
          set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
      if (right - center > 0)
        for (int64_t j = std::max<int64_t>(center, 0); j < std::min(right, rows); ++j)
          set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
    }
  }

 private:
  DType out_;
};

// ---------------------------------------------------------------- DFT, STFT

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

bool floating(DType t) {
  return t == DType::float32 || t == DType::float64;
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
              return {get(in, at), comps == 2 ? get(in, at + 1) : 0.0};
            },
            [&](int64_t f, double re, double im) {
              const int64_t at = ((o * bins + f) * inner + i) * 2;
              put(ctx.outputs[0], at, re);
              put(ctx.outputs[0], at + 1, im);
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
              const double w = has_input(in, 2) ? get(in[2], k) : 1.0;
              const int64_t at = (b * x[1] + t * step + k) * comps;
              return {get(in[0], at) * w, comps == 2 ? get(in[0], at + 1) * w : 0.0};
            },
            [&](int64_t f, double re, double im) {
              const int64_t at = ((b * od[1] + t) * od[2] + f) * 2;
              put(ctx.outputs[0], at, re);
              put(ctx.outputs[0], at + 1, im);
            });
  }

 private:
  bool onesided_;
};

}  // namespace

void register_signal_kernels(KernelRegistry& r) {
  r.add("HannWindow", [](const KernelSetup& s) { return make_window(s, 0.5, 0.5, 0.0); });
  r.add("HammingWindow", [](const KernelSetup& s) { return make_window(s, 25.0 / 46.0, 21.0 / 46.0, 0.0); });
  r.add("BlackmanWindow", [](const KernelSetup& s) { return make_window(s, 0.42, 0.5, 0.08); });
  r.add("MelWeightMatrix", [](const KernelSetup& s) -> Made {
    auto t = output_datatype(s);
    if (!t) return t.error();
    return make_kernel<MelWeightMatrixKernel>(*t);
  });
  r.add("DFT", [](const KernelSetup& s) -> Made {
    return make_kernel<DftKernel>(s.node.attrs.get_int("axis", 1), s.node.attrs.get_int("inverse", 0) != 0,
                                  s.node.attrs.get_int("onesided", 0) != 0);
  });
  r.add("STFT", [](const KernelSetup& s) -> Made {
    return make_kernel<StftKernel>(s.node.attrs.get_int("onesided", 1) != 0);
  });
}

}  // namespace weave
