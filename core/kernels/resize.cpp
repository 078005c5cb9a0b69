// Reference Resize (opset 10-13 inputs) and Upsample (opset 7-9), float32.
//  nearest: any rank; each output index maps to one input index per axis.
//  linear:  bilinear over the last two axes (other axes must keep their size).
//  cubic and tf_crop_and_resize are rejected with a clear error.
// Per-axis index/weight tables are built in the workspace at run time, then one pass over the
// output rows reads them.
#include <cmath>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/registry.h"
#include "core/kernels/resize_map.h"

namespace weave {
namespace {

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

}  // namespace

void register_resize_kernels(KernelRegistry& r) {
  r.add("Resize", make_resize);
  r.add("Upsample", make_upsample);
}

}  // namespace weave
