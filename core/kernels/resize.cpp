// Reference Resize (opset 10-13 inputs) and Upsample (opset 7-9), float32.
//  nearest: any rank; each output index maps to one input index per axis.
//  linear:  bilinear over the last two axes (other axes must keep their size).
//  cubic and tf_crop_and_resize are rejected with a clear error.
// Per-axis index/weight tables are built in the workspace at run time, then one pass over the
// output rows reads them.
#include <cmath>

#include "core/kernels/ref_util.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

enum class Coord { half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nearest };
enum class Nearest { round_prefer_floor, round_prefer_ceil, floor, ceil };

struct AxisMap {
  int64_t* i0;
  int64_t* i1;
  float* lam;
};

class ResizeKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override {
    return (scales_in_ >= 0 ? 1u << scales_in_ : 0u) | (sizes_in_ >= 0 ? 1u << sizes_in_ : 0u);
  }
  ResizeKernel(bool linear, Coord coord, Nearest nearest, int scales_in, int sizes_in)
      : linear_(linear), coord_(coord), nearest_(nearest), scales_in_(scales_in), sizes_in_(sizes_in) {}

  // Output dims and per-axis scales from the (known) scales or sizes input.
  Status plan(std::span<const ConstTensorView> in, const std::string& label, Dims& out, float* scale) const {
    const Dims& x = in[0].dims;
    const int r = x.rank();
    auto known = [&](int i) {
      return i >= 0 && static_cast<std::size_t>(i) < in.size() && in[i].present() && in[i].numel() > 0;
    };
    out = x;
    if (known(sizes_in_)) {
      const ConstTensorView& s = in[sizes_in_];
      if (s.data == nullptr)
        return make_error(label, ": Resize sizes must be known before running (a constant)");
      if (s.dtype != DType::int64 || s.numel() != r)
        return make_error(label, ": sizes ", ref::dims_str(s.dims),
                          " must be int64 with one value per dim of input ", ref::dims_str(x));
      for (int i = 0; i < r; ++i) {
        const int64_t v = s.as<int64_t>()[i];
        if (v <= 0 || v > (int64_t{1} << 31))
          return make_error(label, ": bad sizes value ", v, " for input ", ref::dims_str(x));
        out[i] = v;
        scale[i] = x[i] > 0 ? static_cast<float>(v) / static_cast<float>(x[i]) : 1.f;
      }
    } else if (known(scales_in_)) {
      const ConstTensorView& s = in[scales_in_];
      if (s.data == nullptr)
        return make_error(label, ": Resize scales must be known before running (a constant)");
      if (s.dtype != DType::float32 || s.numel() != r)
        return make_error(label, ": scales ", ref::dims_str(s.dims),
                          " must be float32 with one value per dim of input ", ref::dims_str(x));
      for (int i = 0; i < r; ++i) {
        const float v = s.as<float>()[i];
        const double o = std::floor(static_cast<double>(x[i]) * v);
        if (!(v > 0.f) || o > static_cast<double>(int64_t{1} << 31))
          return make_error(label, ": bad scales value ", v, " for input ", ref::dims_str(x));
        out[i] = static_cast<int64_t>(o);
        scale[i] = v;
      }
    } else {
      return make_error(label, ": Resize needs a non-empty scales or sizes input");
    }
    if (linear_) {
      for (int i = 0; i + 2 < r; ++i)
        if (out[i] != x[i])
          return make_error(label, ": linear Resize of input ", ref::dims_str(x), " to ", ref::dims_str(out),
                            " changes a dim other than the last two (not supported)");
    }
    return {};
  }

  Status infer(ShapeContext& ctx) const override {
    Dims out;
    float scale[kMaxRank];
    WEAVE_TRY(plan(ctx.inputs, ctx.label, out, scale));
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = out;
    int64_t total = 0;
    for (int64_t d : out) total += d;
    ctx.workspace = static_cast<std::size_t>(total) * (2 * sizeof(int64_t) + sizeof(float)) + 64;
    return {};
  }

  // Input coordinate of output index o on one axis.
  [[nodiscard]] float source(int64_t o, int64_t in, int64_t out, float s) const {
    const float x = static_cast<float>(o);
    switch (coord_) {
      case Coord::half_pixel:
        return (x + 0.5f) / s - 0.5f;
      case Coord::pytorch_half_pixel:
        return out > 1 ? (x + 0.5f) / s - 0.5f : 0.f;
      case Coord::align_corners:
        return out == 1 ? 0.f : x * static_cast<float>(in - 1) / static_cast<float>(out - 1);
      case Coord::asymmetric:
        return x / s;
      case Coord::tf_half_pixel_for_nearest:
        return (x + 0.5f) / s;
    }
    return x;
  }

  void build_axis(int64_t in, int64_t out, float s, AxisMap m) const {
    for (int64_t o = 0; o < out; ++o) {
      const float c = source(o, in, out, s);
      if (linear_) {
        const float cc = std::clamp(c, 0.f, static_cast<float>(in - 1));
        const auto f = static_cast<int64_t>(std::floor(cc));
        m.i0[o] = f;
        m.i1[o] = std::min(f + 1, in - 1);
        m.lam[o] = cc - static_cast<float>(f);
      } else {
        float r = 0;
        switch (nearest_) {
          case Nearest::round_prefer_floor:
            r = c == std::floor(c) + 0.5f ? std::floor(c) : std::round(c);
            break;
          case Nearest::round_prefer_ceil:
            r = std::round(c);
            break;  // std::round rounds halves away from 0
          case Nearest::floor:
            r = std::floor(c);
            break;
          case Nearest::ceil:
            r = std::ceil(c);
            break;
        }
        if (nearest_ == Nearest::round_prefer_ceil && c < 0 && c == std::floor(c) + 0.5f) r = std::ceil(c);
        m.i0[o] = std::clamp(static_cast<int64_t>(r), int64_t{0}, in - 1);
        m.i1[o] = m.i0[o];
        m.lam[o] = 0.f;
      }
    }
  }

  void run(const RunContext& ctx) const override {
    Dims out;
    float scale[kMaxRank];
    const std::string label;
    if (!plan(ctx.inputs, label, out, scale).ok()) return;
    const Dims& xd = ctx.inputs[0].dims;
    const int r = xd.rank();
    if (out.numel() == 0 || xd.numel() == 0) return;
    int64_t total = 0;
    for (int64_t d : out) total += d;
    auto* i0 = reinterpret_cast<int64_t*>(ctx.workspace.data());
    int64_t* i1 = i0 + total;
    auto* lam = reinterpret_cast<float*>(i1 + total);
    AxisMap maps[kMaxRank];
    for (int a = 0, base = 0; a < r; base += static_cast<int>(out[a]), ++a) {
      maps[a] = {i0 + base, i1 + base, lam + base};
      build_axis(xd[a], out[a], scale[a], maps[a]);
    }
    const float* x = ctx.inputs[0].as<float>();
    float* y = ref::out_f32(ctx, 0);
    const Dims xs = strides_of(xd);
    if (r == 0) {
      y[0] = x[0];
      return;
    }
    const int64_t W = out[r - 1];
    const int64_t rows = out.numel() / W;
    if (!linear_ || r < 2) {
      ctx.parallel.for_range(rows, 16, [&](int64_t r0, int64_t r1) {
        for (int64_t row = r0; row < r1; ++row) {
          int64_t off = 0, rem = row;
          for (int a = r - 2; a >= 0; --a) {
            off += maps[a].i0[rem % out[a]] * xs[a];
            rem /= out[a];
          }
          const float* xr = x + off;
          float* yr = y + row * W;
          if (linear_) {  // rank-1 linear
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
    const AxisMap& mh = maps[r - 2];
    const AxisMap& mw = maps[r - 1];
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
  bool linear_;
  Coord coord_;
  Nearest nearest_;
  int scales_in_, sizes_in_;
};

Expected<std::unique_ptr<Kernel>> make_resize_impl(const KernelSetup& s, bool upsample) {
  const auto& at = s.node.attrs;
  const bool old = upsample || s.opset < 11;
  if (old)
    WEAVE_TRY(ref::require_inputs(s, 2, 2));
  else
    WEAVE_TRY(ref::require_inputs(s, 1, 4));
  WEAVE_TRY(ref::require_float(s, {0}));
  const std::string mode = at.get_string("mode", "nearest");
  bool linear = false;
  if (mode == "linear" || mode == "bilinear")
    linear = true;
  else if (mode == "cubic")
    return make_error(s.label, ": Resize mode 'cubic' is not supported by the reference kernel");
  else if (mode != "nearest")
    return make_error(s.label, ": unknown Resize mode '", mode, "'");
  Coord coord = Coord::asymmetric;
  Nearest nearest = Nearest::floor;
  if (!old) {
    const std::string c = at.get_string("coordinate_transformation_mode", "half_pixel");
    if (c == "half_pixel")
      coord = Coord::half_pixel;
    else if (c == "pytorch_half_pixel")
      coord = Coord::pytorch_half_pixel;
    else if (c == "align_corners")
      coord = Coord::align_corners;
    else if (c == "asymmetric")
      coord = Coord::asymmetric;
    else if (c == "tf_half_pixel_for_nearest")
      coord = Coord::tf_half_pixel_for_nearest;
    else
      return make_error(s.label, ": coordinate_transformation_mode '", c, "' is not supported");
    const std::string n = at.get_string("nearest_mode", "round_prefer_floor");
    if (n == "round_prefer_floor")
      nearest = Nearest::round_prefer_floor;
    else if (n == "round_prefer_ceil")
      nearest = Nearest::round_prefer_ceil;
    else if (n == "floor")
      nearest = Nearest::floor;
    else if (n == "ceil")
      nearest = Nearest::ceil;
    else
      return make_error(s.label, ": unknown nearest_mode '", n, "'");
    if (at.has("axes") || at.get_string("keep_aspect_ratio_policy", "stretch") != "stretch")
      return make_error(s.label, ": Resize axes / keep_aspect_ratio_policy are not supported");
    if (at.get_int("antialias", 0) != 0) return make_error(s.label, ": Resize antialias is not supported");
  }
  const int scales_in = old ? 1 : 2, sizes_in = old ? -1 : 3;
  return std::unique_ptr<Kernel>(std::make_unique<ResizeKernel>(linear, coord, nearest, scales_in, sizes_in));
}

Expected<std::unique_ptr<Kernel>> make_resize(const KernelSetup& s) {
  return make_resize_impl(s, false);
}
Expected<std::unique_ptr<Kernel>> make_upsample(const KernelSetup& s) {
  return make_resize_impl(s, true);
}

}  // namespace

void register_resize_kernels(KernelRegistry& r) {
  r.add("Resize", make_resize);
  r.add("Upsample", make_upsample);
}

}  // namespace weave
