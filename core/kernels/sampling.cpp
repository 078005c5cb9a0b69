// Reference sampling kernels: GridSample, and the Resize modes the main Resize kernel
// (resize.cpp) leaves out: cubic, tf_crop_and_resize and tf_half_pixel_for_nn.
//
// GridSample follows PyTorch's grid_sampler (which ONNX specifies): bilinear, nearest (round
// half to even) or bicubic (A = -0.75) sampling of [N, C, H, W] at the normalized coordinates
// of grid [N, Ho, Wo, 2], with zeros, border or reflection padding.
//
// This Resize is registered above the main one and takes only the modes above (declining the
// rest). It is N-dimensional and separable per axis like ONNX's reference: each axis maps an
// output index to a source coordinate, then to 1 (nearest), 2 (linear) or 4 (cubic) taps with
// weights; the output sums the product of the axes' weights over their taps. Taps beyond the
// edge read the edge, or get weight 0 with exclude_outside (the others renormalized).
// tf_crop_and_resize gives extrapolation_value where the source lies outside the input.
#include <algorithm>
#include <array>
#include <cmath>

#include "core/kernels/kernel_util.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::make_kernel;

using Made = Expected<std::unique_ptr<Kernel>>;

// Cubic convolution weights of the 4 taps around a point at `t` in (0, 1] past tap 1.
std::array<double, 4> cubic_weights(double t, double A) {
  auto near = [A](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };       // |d| <= 1
  auto far = [A](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };  // 1 < |d| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// ---------------------------------------------------------------- GridSample

enum class GridMode { bilinear, nearest, bicubic };
enum class GridPad { zeros, border, reflection };

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(GridMode mode, GridPad pad, bool align) : mode_(mode), pad_(pad), align_(align) {}

  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (!has_input(in, 0) || !has_input(in, 1)) return make_error(ctx.label, ": needs X and grid");
    if (in[0].dtype != DType::float32 || in[1].dtype != DType::float32)
      return make_error(ctx.label, ": X and grid must be float32");
    const Dims& x = in[0].dims;
    const Dims& g = in[1].dims;
    if (x.rank() != 4 || g.rank() != 4 || g[0] != x[0] || g[3] != 2)
      return make_error(ctx.label, ": X ", dims_str(x), " and grid ", dims_str(g),
                        " must be [N, C, H, W] and [N, Ho, Wo, 2]");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = Dims{x[0], x[1], g[1], g[2]};
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const Dims& od = ctx.outputs[0].dims;
    const int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3], Ho = od[2], Wo = od[3];
    const float* x = ctx.inputs[0].as<float>();
    const float* grid = ctx.inputs[1].as<float>();
    float* y = ctx.outputs[0].as<float>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < Ho; ++i)
        for (int64_t j = 0; j < Wo; ++j) {
          const float* g = grid + ((n * Ho + i) * Wo + j) * 2;
          const double gx = unnormalize(g[0], W), gy = unnormalize(g[1], H);
          for (int64_t c = 0; c < C; ++c) {
            const float* p = x + (n * C + c) * H * W;
            y[((n * C + c) * Ho + i) * Wo + j] = static_cast<float>(sample(p, H, W, gx, gy));
          }
        }
  }

 private:
  [[nodiscard]] double unnormalize(double v, int64_t size) const {
    const auto s = static_cast<double>(size);
    return align_ ? (v + 1) / 2 * (s - 1) : ((v + 1) * s - 1) / 2;
  }

  // Reflects v into [lo, hi] (given doubled, as PyTorch does).
  static double reflect(double v, double twice_lo, double twice_hi) {
    if (twice_lo == twice_hi) return 0;
    const double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
    v = std::fabs(v - lo);
    const double extra = std::fmod(v, span);
    // The parity of the flips in floating point: a huge coordinate must not overflow an integer.
    const bool even = std::fmod(std::floor(v / span), 2.0) == 0.0;
    return even ? extra + lo : span - extra + lo;
  }

  // A source coordinate with border or reflection padding applied.
  [[nodiscard]] double pad(double v, int64_t size) const {
    const auto s = static_cast<double>(size);
    if (!std::isfinite(v)) return -1;  // reads padding
    if (pad_ == GridPad::border) return std::clamp(v, 0.0, s - 1);
    if (pad_ == GridPad::reflection) {
      v = align_ ? reflect(v, 0, 2 * (s - 1)) : reflect(v, -1, 2 * s - 1);
      return std::clamp(v, 0.0, s - 1);
    }
    return v;
  }

  // Pixel (yi, xi), 0 outside.
  static double at(const float* p, int64_t H, int64_t W, int64_t yi, int64_t xi) {
    return yi >= 0 && yi < H && xi >= 0 && xi < W ? p[yi * W + xi] : 0.0;
  }

  [[nodiscard]] double sample(const float* p, int64_t H, int64_t W, double gx, double gy) const {
    if (mode_ == GridMode::bicubic) {
      // Taps around the unpadded coordinate, each tap's index padded on its own.
      if (!std::isfinite(gx) || !std::isfinite(gy)) return 0;
      const double fx = std::floor(gx), fy = std::floor(gy);
      const auto wx = cubic_weights(gx - fx, -0.75), wy = cubic_weights(gy - fy, -0.75);
      double acc = 0;
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) {
          const double ty = pad(fy - 1 + a, H), tx = pad(fx - 1 + b, W);
          acc += wy[a] * wx[b] * tap(p, H, W, ty, tx);
        }
      return acc;
    }
    const double x = pad(gx, W), y = pad(gy, H);
    if (mode_ == GridMode::nearest) return tap(p, H, W, std::nearbyint(y), std::nearbyint(x));
    const double x0 = std::floor(x), y0 = std::floor(y), lx = x - x0, ly = y - y0;
    return (1 - ly) * ((1 - lx) * tap(p, H, W, y0, x0) + lx * tap(p, H, W, y0, x0 + 1)) +
           ly * ((1 - lx) * tap(p, H, W, y0 + 1, x0) + lx * tap(p, H, W, y0 + 1, x0 + 1));
  }

  // Pixel at integral coordinates held as doubles (bounded before converting).
  static double tap(const float* p, int64_t H, int64_t W, double yi, double xi) {
    if (!(yi >= 0 && yi < static_cast<double>(H) && xi >= 0 && xi < static_cast<double>(W))) return 0;
    return at(p, H, W, static_cast<int64_t>(yi), static_cast<int64_t>(xi));
  }

  GridMode mode_;
  GridPad pad_;
  bool align_;
};

Made make_grid_sample(const KernelSetup& s) {
  const auto& a = s.node.attrs;
  const std::string mode = a.get_string("mode", "bilinear"), pad = a.get_string("padding_mode", "zeros");
  GridMode m = GridMode::bilinear;
  if (mode == "nearest")
    m = GridMode::nearest;
  else if (mode == "bicubic")
    m = GridMode::bicubic;
  else if (mode != "bilinear")
    return make_error("unsupported attribute mode='", mode, "'");
  GridPad p = GridPad::zeros;
  if (pad == "border")
    p = GridPad::border;
  else if (pad == "reflection")
    p = GridPad::reflection;
  else if (pad != "zeros")
    return make_error("unsupported attribute padding_mode='", pad, "'");
  return make_kernel<GridSampleKernel>(m, p, a.get_int("align_corners", 0) != 0);
}

// ---------------------------------------------------------------- Resize (other modes)

enum class Mode { nearest, linear, cubic };
enum class Coord {
  half_pixel,
  pytorch_half_pixel,
  align_corners,
  asymmetric,
  tf_half_pixel_for_nn,
  tf_crop_and_resize
};
enum class Round { prefer_floor, prefer_ceil, floor, ceil };

struct AxisTaps {
  int n = 0;
  std::array<int64_t, 4> idx{};
  std::array<double, 4> w{};
  bool outside = false;  // tf_crop_and_resize: extrapolate
};

class ResizeGeneralKernel final : public Kernel {
 public:
  ResizeGeneralKernel(Mode mode, Coord coord, Round round, double a, bool exclude, float extrapolation)
      : mode_(mode), coord_(coord), round_(round), a_(a), exclude_(exclude), extrapolation_(extrapolation) {}
  [[nodiscard]] uint32_t value_inputs() const override { return input_bits(1, 3); }

  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (!has_input(in, 0) || in[0].dtype != DType::float32)
      return make_error(ctx.label, ": X must be float32");
    Planned p;
    WEAVE_TRY(plan(in, ctx.label, p.out, p.scale));
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = p.out;
    ctx.keep(p);
    return {};
  }

  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const Dims& out = ctx.kept<Planned>().out;
    const std::array<double, kMaxRank>& scale = ctx.kept<Planned>().scale;
    const Dims& xd = in[0].dims;
    const int r = xd.rank();
    const Dims xs = strides_of(xd);
    const float* x = in[0].as<float>();
    float* y = ctx.outputs[0].as<float>();
    std::array<AxisTaps, kMaxRank> taps;
    for (int64_t o = 0; o < out.numel(); ++o) {
      int64_t rem = o;
      bool outside = false;
      for (int a = r - 1; a >= 0; --a) {
        taps[a] = axis_taps(rem % out[a], xd[a], out[a], scale[a], roi(in, a, r));
        outside = outside || taps[a].outside;
        rem /= out[a];
      }
      if (outside) {
        y[o] = extrapolation_;
        continue;
      }
      // Sum over every combination of the axes' taps.
      double acc = 0;
      std::array<int, kMaxRank> k{};
      for (;;) {
        double w = 1;
        int64_t off = 0;
        for (int a = 0; a < r; ++a) {
          w *= taps[a].w[k[a]];
          off += taps[a].idx[k[a]] * xs[a];
        }
        if (w != 0) acc += w * x[off];
        int a = r - 1;
        while (a >= 0 && ++k[a] == taps[a].n) k[a--] = 0;
        if (a < 0) break;
      }
      y[o] = static_cast<float>(acc);
    }
  }

 private:
  // What infer() works out for one set of input shapes.
  struct Planned {
    Dims out;
    std::array<double, kMaxRank> scale{};
  };

  // roi start/end of axis a (tf_crop_and_resize), default [0, 1].
  static std::pair<double, double> roi(std::span<const ConstTensorView> in, int a, int r) {
    if (!has_input(in, 1) || in[1].numel() != 2 * r || in[1].data == nullptr) return {0.0, 1.0};
    auto get = [&](int i) {
      return in[1].dtype == DType::float64 ? in[1].as<double>()[i]
                                           : static_cast<double>(in[1].as<float>()[i]);
    };
    return {get(a), get(a + r)};
  }

  // Output dims and per-axis scales (ONNX's reference uses in * scale as the output length in
  // its coordinate formulas when scales are given).
  Status plan(std::span<const ConstTensorView> in, const std::string& label, Dims& out,
              std::array<double, kMaxRank>& scale) const {
    const Dims& x = in[0].dims;
    const int r = x.rank();
    out = x;
    if (has_input(in, 3) && in[3].numel() > 0) {
      const ConstTensorView& s = in[3];
      if (s.data == nullptr || s.dtype != DType::int64 || s.numel() != r)
        return make_error(label, ": sizes must be known int64 with one value per dim of ", dims_str(x));
      for (int i = 0; i < r; ++i) {
        const int64_t v = s.as<int64_t>()[i];
        if (v < 1 || v > (int64_t{1} << 31)) return make_error(label, ": bad sizes value ", v);
        out[i] = v;
        scale[static_cast<std::size_t>(i)] =
            x[i] > 0 ? static_cast<double>(v) / static_cast<double>(x[i]) : 1.0;
      }
    } else if (has_input(in, 2) && in[2].numel() > 0) {
      const ConstTensorView& s = in[2];
      if (s.data == nullptr || s.dtype != DType::float32 || s.numel() != r)
        return make_error(label, ": scales must be known float32 with one value per dim of ", dims_str(x));
      for (int i = 0; i < r; ++i) {
        const double v = s.as<float>()[i];
        const double o = std::floor(static_cast<double>(x[i]) * v);
        if (!(v > 0) || o > static_cast<double>(int64_t{1} << 31))
          return make_error(label, ": bad scales value ", v);
        out[i] = static_cast<int64_t>(o);
        scale[static_cast<std::size_t>(i)] = v;
      }
    } else {
      return make_error(label, ": Resize needs a non-empty scales or sizes input");
    }
    if (!kern::size_ok(out.span())) return make_error(label, ": output ", dims_str(out), " is too large");
    return {};
  }

  [[nodiscard]] AxisTaps axis_taps(int64_t o, int64_t in, int64_t out_len, double s,
                                   std::pair<double, double> roi) const {
    const double xo = static_cast<double>(o), length = static_cast<double>(in) * s,
                 n_in = static_cast<double>(in);
    double src = 0;
    AxisTaps t;
    switch (coord_) {
      case Coord::half_pixel:
        src = (xo + 0.5) / s - 0.5;
        break;
      case Coord::pytorch_half_pixel:
        src = length > 1 ? (xo + 0.5) / s - 0.5 : -0.5;
        break;
      case Coord::align_corners:
        src = length == 1 ? 0 : xo * (n_in - 1) / (length - 1);
        break;
      case Coord::asymmetric:
        src = xo / s;
        break;
      case Coord::tf_half_pixel_for_nn:
        src = (xo + 0.5) / s;
        break;
      case Coord::tf_crop_and_resize:
        src = out_len == 1 ? (roi.second - roi.first) * (n_in - 1) / 2
                           : xo * (roi.second - roi.first) * (n_in - 1) / (static_cast<double>(out_len) - 1);
        src += roi.first * (n_in - 1);
        t.outside = src < 0 || src > n_in - 1;
        break;
    }
    if (t.outside || !std::isfinite(src)) {
      t.outside = true;
      return t;
    }
    // The left neighbour with the fraction in (0, 1], as ONNX's reference picks it.
    const double base = std::ceil(src) - 1;
    const double frac = src - base;
    auto clamp = [in](double i) {
      return std::isnan(i) ? int64_t{0}
                           : static_cast<int64_t>(std::clamp(i, 0.0, static_cast<double>(in - 1)));
    };
    if (mode_ == Mode::nearest) {
      bool right = true;
      if (frac < 1) {
        switch (round_) {
          case Round::prefer_floor:
            right = frac > 0.5;
            break;
          case Round::prefer_ceil:
            right = frac >= 0.5;
            break;
          case Round::floor:
            right = false;
            break;
          case Round::ceil:
            right = true;
            break;
        }
      }
      t.n = 1;
      t.idx[0] = clamp(right ? base + 1 : base);
      t.w[0] = 1;
      return t;
    }
    if (mode_ == Mode::linear) {
      t.n = 2;
      t.idx = {clamp(base), clamp(base + 1), 0, 0};
      t.w = {1 - frac, frac, 0, 0};
    } else {
      t.n = 4;
      t.w = cubic_weights(frac, a_);
      for (int k = 0; k < 4; ++k) t.idx[static_cast<std::size_t>(k)] = clamp(base - 1 + k);
    }
    if (exclude_) {
      double sum = 0;
      for (int k = 0; k < t.n; ++k) {
        const double i = base - (t.n == 4 ? 1 : 0) + k;
        if (i < 0 || i > n_in - 1) t.w[static_cast<std::size_t>(k)] = 0;
        sum += t.w[static_cast<std::size_t>(k)];
      }
      if (sum != 0)
        for (int k = 0; k < t.n; ++k) t.w[static_cast<std::size_t>(k)] /= sum;
    }
    return t;
  }

  Mode mode_;
  Coord coord_;
  Round round_;
  double a_;
  bool exclude_;
  float extrapolation_;
};

// Takes Resize (opset >= 11 form: X, roi, scales, sizes) only in the modes resize.cpp leaves out.
Made make_resize_general(const KernelSetup& s) {
  const auto& a = s.node.attrs;
  const std::string mode = a.get_string("mode", "nearest");
  const std::string coord = a.get_string("coordinate_transformation_mode", "half_pixel");
  const bool ours = mode == "cubic" || coord == "tf_crop_and_resize" || coord == "tf_half_pixel_for_nn";
  if (!ours || s.node.inputs.size() < 3) return std::unique_ptr<Kernel>();  // resize.cpp's kernel
  Mode m = mode == "cubic" ? Mode::cubic : mode == "linear" ? Mode::linear : Mode::nearest;
  if (mode != "cubic" && mode != "linear" && mode != "nearest")
    return make_error("unsupported attribute mode='", mode, "'");
  Coord c = Coord::half_pixel;
  if (coord == "pytorch_half_pixel")
    c = Coord::pytorch_half_pixel;
  else if (coord == "align_corners")
    c = Coord::align_corners;
  else if (coord == "asymmetric")
    c = Coord::asymmetric;
  else if (coord == "tf_half_pixel_for_nn")
    c = Coord::tf_half_pixel_for_nn;
  else if (coord == "tf_crop_and_resize")
    c = Coord::tf_crop_and_resize;
  else if (coord != "half_pixel")
    return make_error("unsupported attribute coordinate_transformation_mode='", coord, "'");
  const std::string nm = a.get_string("nearest_mode", "round_prefer_floor");
  Round rd = Round::prefer_floor;
  if (nm == "round_prefer_ceil")
    rd = Round::prefer_ceil;
  else if (nm == "floor")
    rd = Round::floor;
  else if (nm == "ceil")
    rd = Round::ceil;
  else if (nm != "round_prefer_floor")
    return make_error("unsupported attribute nearest_mode='", nm, "'");
  return make_kernel<ResizeGeneralKernel>(m, c, rd, a.get_float("cubic_coeff_a", -0.75f),
                                          a.get_int("exclude_outside", 0) != 0,
                                          a.get_float("extrapolation_value", 0.f));
}

}  // namespace

void register_sampling_kernels(KernelRegistry& r) {
  r.add("GridSample", &make_grid_sample);
  // Above resize.cpp's kernel, which it leaves every mode it does not take.
  r.add("Resize", &make_resize_general, 1);
}

}  // namespace weave
