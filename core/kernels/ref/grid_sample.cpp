// GridSample.
// GridSample follows PyTorch's grid_sampler (which ONNX specifies): bilinear, nearest (round
// half to even) or bicubic (A = -0.75) sampling of [N, C, H, W] at the normalized coordinates
// of grid [N, Ho, Wo, 2], with zeros, border or reflection padding.
#include <algorithm>
#include <array>
#include <cmath>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::cubic_weights;
using kern::dims_str;
using kern::has_input;
using kern::make_kernel;

using Made = Expected<std::unique_ptr<Kernel>>;

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

}  // namespace

void register_grid_sample(KernelRegistry& r) {
  r.add("GridSample", &make_grid_sample);
}

}  // namespace weave
