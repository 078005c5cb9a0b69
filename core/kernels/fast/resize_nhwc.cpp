// Fast Resize / Upsample of the two middle axes of a 4-D tensor whose innermost axis keeps its
// size: in NHWC (the layout pass's choice) that is height and width, and every output pixel is
// a copy (nearest) or a blend of four source pixels (linear) over a contiguous channel vector.
// Same index tables as the reference kernel (core/kernels/resize_map.h). Other forms decline.
#include <cstring>
#include <vector>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/kernel_util.h"
#include "core/kernels/resize_map.h"

namespace weave::fast {
namespace {

class FastResize final : public Kernel {
 public:
  explicit FastResize(ResizeSpec spec) : spec_(spec) {}

  Status infer(ShapeContext& ctx) const override {
    Dims out;
    float scale[kMaxRank];
    WEAVE_TRY(spec_.plan(ctx.inputs, ctx.label, out, scale));
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() != 4 || out[0] != x[0] || out[3] != x[3])
      return make_error(ctx.label, ": the fast Resize keeps the first and last axes of ",
                        kern::dims_bracketed(x), ", not ", kern::dims_bracketed(out));
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = out;
    auto m = spec_.maps(x, out, scale, 1, 3, ctx.label);  // rows and columns
    if (!m) return m.error();
    ctx.keep(std::move(*m));
    ctx.workspace = 0;
    return {};
  }

  void run(const RunContext& ctx) const override {
    const ResizeMaps& m = ctx.kept<ResizeMaps>();
    const Dims& out = m.out;
    const Dims& xd = ctx.inputs[0].dims;
    if (out.numel() == 0 || xd.numel() == 0) return;
    const int64_t OH = out[1], OW = out[2], IH = xd[1], IW = xd[2], C = xd[3];
    const ResizeMaps::Axis mh = m.axis(1), mw = m.axis(2);
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
    const std::size_t row_bytes = static_cast<std::size_t>(C) * sizeof(float);
    const double work = static_cast<double>(out.numel()) * kElementWork;
    ctx.parallel.for_range(xd[0] * OH, grain_for(ctx.parallel, xd[0] * OH, work, 4),
                           [&](int64_t r0, int64_t r1) {
                             for (int64_t row = r0; row < r1; ++row) {
                               const int64_t n = row / OH, oh = row % OH;
                               const float* a = x + (n * IH + mh.i0[oh]) * IW * C;
                               float* yr = y + row * OW * C;
                               if (!spec_.linear) {
                                 for (int64_t ow = 0; ow < OW; ++ow)
                                   std::memcpy(yr + ow * C, a + mw.i0[ow] * C, row_bytes);
                                 continue;
                               }
                               const float* b = x + (n * IH + mh.i1[oh]) * IW * C;
                               const float lh = mh.lam[oh];
                               for (int64_t ow = 0; ow < OW; ++ow) {
                                 const float* a0 = a + mw.i0[ow] * C;
                                 const float* a1 = a + mw.i1[ow] * C;
                                 const float* b0 = b + mw.i0[ow] * C;
                                 const float* b1 = b + mw.i1[ow] * C;
                                 const float lw = mw.lam[ow];
                                 float* yp = yr + ow * C;
                                 for (int64_t c = 0; c < C; ++c) {
                                   const float top = a0[c] + (a1[c] - a0[c]) * lw;
                                   const float bot = b0[c] + (b1[c] - b0[c]) * lw;
                                   yp[c] = top + (bot - top) * lh;
                                 }
                               }
                             }
                           });
  }

 private:
  ResizeSpec spec_;
};

}  // namespace

bool resize_nhwc_supported(const Graph& g, const Node& n) {
  if ((n.op != "Resize" && n.op != "Upsample") || n.inputs.empty() || n.outputs.size() != 1) return false;
  const Value& x = g.values[n.inputs[0]];
  if (x.dtype != DType::float32 || !x.rank_known || x.shape.size() != 4) return false;
  const std::string mode = n.attrs.get_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear") return false;
  // Scales (or sizes) must be constants that keep the first and last axes.
  for (std::size_t k = 1; k < n.inputs.size(); ++k) {
    const int32_t v = n.inputs[k];
    if (v == kNoValue) continue;
    if (g.values[v].kind != ValueKind::param) return false;
  }
  const bool old = n.op == "Upsample" || n.inputs.size() == 2;
  const std::size_t si = old ? 1 : 2, zi = 3;
  auto param = [&](std::size_t k) -> const Param* {
    if (k >= n.inputs.size() || n.inputs[k] == kNoValue) return nullptr;
    const Value& v = g.values[n.inputs[k]];
    if (shape_numel(v.shape) == 0) return nullptr;
    return &g.params[v.param];
  };
  if (const Param* sz = !old ? param(zi) : nullptr) {
    if (g.values[sz->value].dtype != DType::int64 || shape_numel(g.values[sz->value].shape) != 4)
      return false;
    const auto* s = reinterpret_cast<const int64_t*>(sz->data.data());
    return x.shape[0] >= 0 && x.shape[3] >= 0 && s[0] == x.shape[0] && s[3] == x.shape[3];
  }
  const Param* sc = param(si);
  if (sc == nullptr || g.values[sc->value].dtype != DType::float32 ||
      shape_numel(g.values[sc->value].shape) != 4)
    return false;
  const auto* s = reinterpret_cast<const float*>(sc->data.data());
  return s[0] == 1.f && s[3] == 1.f;
}

Expected<std::unique_ptr<Kernel>> make_fast_resize(const KernelSetup& s) {
  if (fast::ops() == nullptr || s.node.attrs.get_string("weave_layout") != "NHWC")
    return std::unique_ptr<Kernel>();
  auto spec = ResizeSpec::parse(s, s.node.op == "Upsample");
  if (!spec) return spec.error();
  return std::unique_ptr<Kernel>(std::make_unique<FastResize>(*spec));
}

}  // namespace weave::fast
