// Resize and Upsample in all of their modes, float32: the main kernel and, registered above it,
// the general kernel for the modes the main one leaves out.
//
// The main kernel: Resize (opset 10-13 inputs) and Upsample (opset 7-9).
//  nearest: any rank; each output index maps to one input index per axis.
//  linear:  bilinear over the last two axes (other axes must keep their size).
//  cubic and tf_crop_and_resize are rejected with a clear error.
// Per-axis index/weight tables are built once per input shape by infer() (ResizeSpec::maps,
// kept by the plan), then each run is one pass over the output rows reading them.
//
// The general kernel takes the Resize modes the main kernel leaves out: cubic,
// tf_crop_and_resize and tf_half_pixel_for_nn.
// It is registered above the main one and takes only these modes (declining the
// rest). It is N-dimensional and separable per axis like ONNX's reference: each axis maps an
// output index to a source coordinate, then to 1 (nearest), 2 (linear) or 4 (cubic) taps with
// weights; the output sums the product of the axes' weights over their taps. Taps beyond the
// edge read the edge, or get weight 0 with exclude_outside (the others renormalized).
// tf_crop_and_resize gives extrapolation_value where the source lies outside the input.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"
#include "core/kernels/resize_map.h"

namespace weave {
namespace {

using kern::cubic_weights;
using kern::dims_str;
using kern::has_input;
using kern::make_kernel;

using Made = Expected<std::unique_ptr<Kernel>>;

// Output rows up to this many floats go through the cached-row bilinear pass (two rows on the
// stack of each task).
constexpr int64_t kCachedRow = 2048;

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(ResizeSpec spec) : spec_(spec) {}
  [[nodiscard]] uint32_t value_inputs() const override {
    return (spec_.scales_in >= 0 ? 1u << spec_.scales_in : 0u) |
           (spec_.sizes_in >= 0 ? 1u << spec_.sizes_in : 0u);
  }

  Status infer(ShapeContext& ctx) const override {
    Dims out;
    float scale[kMaxRank];
    WEAVE_TRY(spec_.plan(ctx.inputs, ctx.label, out, scale));
    const Dims& x = ctx.inputs[0].dims;
    if (spec_.linear)
      for (int i = 0; i + 2 < x.rank(); ++i)
        if (out[i] != x[i])
          return make_error(ctx.label, ": linear Resize of input ", kern::dims_bracketed(x), " to ",
                            kern::dims_bracketed(out),
                            " changes a dim other than the last two (not supported)");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = out;
    auto m = spec_.maps(x, out, scale, 0, x.rank(), ctx.label);
    if (!m) return m.error();
    ctx.keep(std::move(*m));
    ctx.workspace = 0;
    return {};
  }

  void run(const RunContext& ctx) const override {
    const ResizeMaps& m = ctx.kept<ResizeMaps>();
    const Dims& out = m.out;
    const Dims& xd = ctx.inputs[0].dims;
    const int r = xd.rank();
    if (out.numel() == 0 || xd.numel() == 0) return;
    ResizeMaps::Axis maps[kMaxRank];
    for (int a = 0; a < r; ++a) maps[a] = m.axis(a);
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
    const Dims xs = strides_of(xd);
    if (r == 0) {
      y[0] = x[0];
      return;
    }
    const int64_t W = out[r - 1];
    const int64_t rows = out.numel() / W;
    if (!spec_.linear || r < 2) {
      ctx.parallel.for_range(rows, 16, [&](int64_t r0, int64_t r1) {
        for (int64_t row = r0; row < r1; ++row) {
          int64_t off = 0, rem = row;
          for (int a = r - 2; a >= 0; --a) {
            off += maps[a].i0[rem % out[a]] * xs[a];
            rem /= out[a];
          }
          const float* xr = x + off;
          float* yr = y + row * W;
          if (spec_.linear) {  // rank-1 linear
            for (int64_t j = 0; j < W; ++j) {
              const float l = maps[r - 1].lam[j];
              yr[j] = xr[maps[r - 1].i0[j]] * (1.f - l) + xr[maps[r - 1].i1[j]] * l;
            }
          } else {
            for (int64_t j = 0; j < W; ++j) yr[j] = xr[maps[r - 1].i0[j]];
          }
        }
      });
      return;
    }
    // Bilinear: rows are (plane, output row) pairs.
    const int64_t H = out[r - 2], inH = xd[r - 2], inW = xd[r - 1];
    const auto& mh = maps[r - 2];
    const auto& mw = maps[r - 1];
    if (W <= kCachedRow) {
      // Each input row is interpolated across once into one of two cached rows, and an output
      // row blends the two it lies between: an upscale (a segmentation head's 20x20 -> 320x320)
      // reads each cached row for many output rows, a contiguous pass the compiler vectorizes,
      // instead of four gathered reads per output. The same arithmetic as the loop below.
      ctx.parallel.for_range(rows, 16, [&](int64_t r0, int64_t r1) {
        float cache[2][kCachedRow];
        int64_t key[2] = {-1, -1};  // plane * inH + input row held by each slot
        auto across = [&](int64_t k, int64_t other) -> const float* {
          for (int s = 0; s < 2; ++s)
            if (key[s] == k) return cache[s];
          const int s = key[0] == other ? 1 : 0;
          const float* a = x + k * inW;
          for (int64_t j = 0; j < W; ++j) cache[s][j] = a[mw.i0[j]] + (a[mw.i1[j]] - a[mw.i0[j]]) * mw.lam[j];
          key[s] = k;
          return cache[s];
        };
        for (int64_t row = r0; row < r1; ++row) {
          const int64_t plane = row / H, oh = row % H;
          const int64_t ka = plane * inH + mh.i0[oh], kb = plane * inH + mh.i1[oh];
          const float* top = across(ka, -1);
          const float* bot = across(kb, ka);
          const float lh = mh.lam[oh];
          float* yr = y + row * W;
          for (int64_t j = 0; j < W; ++j) yr[j] = top[j] + (bot[j] - top[j]) * lh;
        }
      });
      return;
    }
    ctx.parallel.for_range(rows, 16, [&](int64_t r0, int64_t r1) {
      for (int64_t row = r0; row < r1; ++row) {
        const int64_t plane = row / H, oh = row % H;
        const float* xp = x + plane * inH * inW;
        const float* a = xp + mh.i0[oh] * inW;
        const float* b = xp + mh.i1[oh] * inW;
        const float lh = mh.lam[oh];
        float* yr = y + row * W;
        for (int64_t j = 0; j < W; ++j) {
          const int64_t w0 = mw.i0[j], w1 = mw.i1[j];
          const float lw = mw.lam[j];
          const float top = a[w0] + (a[w1] - a[w0]) * lw;
          const float bot = b[w0] + (b[w1] - b[w0]) * lw;
          yr[j] = top + (bot - top) * lh;
        }
      }
    });
  }

 private:
  ResizeSpec spec_;
};

Expected<std::unique_ptr<Kernel>> make_resize_impl(const KernelSetup& s, bool upsample) {
  auto spec = ResizeSpec::parse(s, upsample);
  if (!spec) return spec.error();
  return std::unique_ptr<Kernel>(std::make_unique<ResizeKernel>(*spec));
}

Expected<std::unique_ptr<Kernel>> make_resize(const KernelSetup& s) {
  return make_resize_impl(s, false);
}
Expected<std::unique_ptr<Kernel>> make_upsample(const KernelSetup& s) {
  return make_resize_impl(s, true);
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

void register_resize(KernelRegistry& r) {
  r.add("Resize", make_resize);
  r.add("Upsample", make_upsample);
  // Above the main kernel, which it leaves every mode it does not take.
  r.add("Resize", &make_resize_general, 1);
}

}  // namespace weave
