// Conv (float32, 1-D..3-D); what it shares with ConvTranspose is in conv.h.
//  im2col into the workspace + sgemm per (image, group); 1x1/stride-1/no-pad convolutions skip
//  im2col; depthwise convolutions (1 input channel per group) run a direct loop. Optional fused
//  epilogue: a 4th input added after the bias (the residual) and the "activation" attributes
//  (see kernel_util.h).
// Spatial ranks below 3 are lifted to 3-D with leading unit axes so one loop nest serves all.
#include "core/kernels/ref/conv.h"

#include <algorithm>
#include <cstring>

#include "core/kernels/fused_activation.h"
#include "core/kernels/ref/gemm_ref.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"
#include "core/kernels/spatial.h"

namespace weave {
namespace {

using kern::check_conv_ranks;
using kern::kMaxWorkspace;
using kern::valid_range;

// col[(c*kk + kidx), p] = x[c, p-th window's tap kidx] (zero in the padding).
void im2col(const float* x, int64_t channels, const Geo3& g, float* col, const Parallel& par) {
  const int64_t kk = g.k_size(), P = g.out_size(), in_sz = g.in_size();
  par.for_range(channels * kk, 8, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t c = r / kk, t = r % kk;
      const int64_t kd = t / (g.k[1] * g.k[2]), kh = (t / g.k[2]) % g.k[1], kw = t % g.k[2];
      const float* xc = x + c * in_sz;
      float* dst = col + r * P;
      int64_t lo, hi;
      const int64_t offw = kw * g.d[2] - g.pb[2];
      valid_range(g.out[2], g.in[2], g.s[2], offw, lo, hi);
      for (int64_t od = 0; od < g.out[0]; ++od) {
        const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
        for (int64_t oh = 0; oh < g.out[1]; ++oh, dst += g.out[2]) {
          const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
          if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
            std::fill(dst, dst + g.out[2], 0.f);
            continue;
          }
          const float* src = xc + (id * g.in[1] + ih) * g.in[2] + offw;
          std::fill(dst, dst + lo, 0.f);
          if (g.s[2] == 1) {
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow];
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * g.s[2]];
          }
          std::fill(dst + hi, dst + g.out[2], 0.f);
        }
      }
    }
  });
}

// y[p_out] += w * x[window tap] over one plane, for every tap of the kernel (direct conv of one
// input channel into one output channel).
void direct_plane(const float* x, const float* w, const Geo3& g, float* y) {
  for (int64_t kd = 0; kd < g.k[0]; ++kd)
    for (int64_t kh = 0; kh < g.k[1]; ++kh)
      for (int64_t kw = 0; kw < g.k[2]; ++kw) {
        const float wv = w[(kd * g.k[1] + kh) * g.k[2] + kw];
        const int64_t offw = kw * g.d[2] - g.pb[2];
        int64_t lo, hi;
        valid_range(g.out[2], g.in[2], g.s[2], offw, lo, hi);
        for (int64_t od = 0; od < g.out[0]; ++od) {
          const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
          if (id < 0 || id >= g.in[0]) continue;
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
            if (ih < 0 || ih >= g.in[1]) continue;
            const float* src = x + (id * g.in[1] + ih) * g.in[2] + offw;
            float* dst = y + (od * g.out[1] + oh) * g.out[2];
            if (g.s[2] == 1) {
              for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += wv * src[ow];
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += wv * src[ow * g.s[2]];
            }
          }
        }
      }
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(WindowAttrs a, int64_t group, kern::Activation act)
      : a_(std::move(a)), group_(group), act_(act) {}

  Expected<WindowGeometry> geometry(const Dims& x, const Dims& w, const std::string& label) const {
    const int nd = x.rank() - 2;
    std::span<const int64_t> k(w.begin() + 2, w.end());
    if (!a_.kernel.empty() && !std::equal(a_.kernel.begin(), a_.kernel.end(), k.begin(), k.end()))
      return make_error(label, ": kernel_shape ", ints_str(a_.kernel), " does not match weights ",
                        kern::dims_bracketed(w));
    return forward_geometry(a_, std::span<const int64_t>(x.begin() + 2, nd), k, label);
  }

  [[nodiscard]] bool depthwise(const Dims& x) const { return group_ > 1 && x[1] == group_; }

  static bool pointwise(const Geo3& g) {
    for (int i = 0; i < 3; ++i)
      if (g.k[i] != 1 || g.s[i] != 1 || g.pb[i] != 0) return false;
    return true;
  }

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    const Dims& w = ctx.inputs[1].dims;
    WEAVE_TRY(check_conv_ranks(ctx, x, w));
    // w[1] * group without overflow (weights with a zero dim may claim any other dims).
    int64_t channels = 0;
    if (__builtin_mul_overflow(w[1], group_, &channels) || x[1] != channels)
      return make_error(ctx.label, ": input ", kern::dims_bracketed(x), " has ", x[1],
                        " channels but weights ", kern::dims_bracketed(w), " with group ", group_, " expect ",
                        w[1], " x ", group_);
    if (w[0] % group_ != 0)
      return make_error(ctx.label, ": weights ", kern::dims_bracketed(w),
                        " output channels are not divisible by group ", group_);
    if (kern::present(ctx, 2)) {
      const Dims& b = ctx.inputs[2].dims;
      if (b.rank() != 1 || b[0] != w[0])
        return make_error(ctx.label, ": bias ", kern::dims_bracketed(b), " does not match weights ",
                          kern::dims_bracketed(w));
    }
    auto geo = geometry(x, w, ctx.label);
    if (!geo) return geo.error();
    Dims out{x[0], w[0]};
    for (int i = 0; i < geo->nd; ++i) out.push_back(geo->out[i]);
    if (kern::present(ctx, 3) && !(ctx.inputs[3].dims == out))
      return make_error(ctx.label, ": residual ", kern::dims_bracketed(ctx.inputs[3].dims),
                        " does not match output ", kern::dims_bracketed(out));
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = out;
    const Geo3 g = lift(*geo);
    ctx.keep(g);
    ctx.workspace = 0;
    ctx.work = window_work(*geo, shape_numel(out.span()), w[1]);
    if (!depthwise(x) && !pointwise(g)) {
      // Checked: every dim may be up to the plan's bound (2^40), and so their product not fit.
      const int64_t col[] = {w[1], g.k[0], g.k[1], g.k[2], g.out[0], g.out[1], g.out[2]};
      const int64_t bytes = checked_bytes(col, sizeof(float));
      if (bytes < 0 || bytes > kMaxWorkspace)
        return make_error(ctx.label, ": im2col buffer of ",
                          bytes < 0 ? std::string("more than 2^63") : std::to_string(bytes),
                          " bytes is too large for input ", kern::dims_bracketed(x), " and weights ",
                          kern::dims_bracketed(w));
      ctx.workspace = static_cast<std::size_t>(bytes);
    }
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const Dims& wd = ctx.inputs[1].dims;
    const float* x = ctx.inputs[0].as<float>();
    const float* w = ctx.inputs[1].as<float>();
    const float* bias = kern::present(ctx, 2) ? ctx.inputs[2].as<float>() : nullptr;
    const float* res = kern::present(ctx, 3) ? ctx.inputs[3].as<float>() : nullptr;
    float* y = kern::out_f32(ctx, 0);
    const Geo3& g = ctx.kept<Geo3>();
    const int64_t N = xd[0], C = xd[1], M = wd[0], Cg = wd[1], Mg = M / group_;
    const int64_t in_sz = g.in_size(), P = g.out_size(), kk = g.k_size(), K = Cg * kk;

    if (depthwise(xd)) {
      ctx.parallel.for_range(N * M, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t n = b / M, m = b % M, c = m / Mg;
          float* yp = y + b * P;
          std::fill(yp, yp + P, bias ? bias[m] : 0.f);
          direct_plane(x + (n * C + c) * in_sz, w + m * kk, g, yp);
          if (res)
            for (int64_t p = 0; p < P; ++p) yp[p] += res[b * P + p];
          act_.apply(yp, P);
        }
      });
      return;
    }
    const bool pw = pointwise(g);
    float* col = reinterpret_cast<float*>(ctx.workspace.data());
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t gi = 0; gi < group_; ++gi) {
        const float* xg = x + (n * C + gi * Cg) * in_sz;
        const float* b = xg;
        if (!pw) {
          im2col(xg, Cg, g, col, ctx.parallel);
          b = col;
        }
        float* yg = y + (n * M + gi * Mg) * P;
        sgemm_parallel(ctx.parallel, false, false, Mg, P, K, 1.f, w + gi * Mg * K, K, b, P, 0.f, yg, P);
      }
    }
    if (bias || res || act_.kind != kern::Activation::none || act_.post_mul != 1.f || act_.post_add != 0.f) {
      ctx.parallel.for_range(N * M, 4, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          float* yp = y + b * P;
          if (bias) {
            const float bv = bias[b % M];
            for (int64_t p = 0; p < P; ++p) yp[p] += bv;
          }
          if (res)
            for (int64_t p = 0; p < P; ++p) yp[p] += res[b * P + p];
          act_.apply(yp, P);
        }
      });
    }
  }

 private:
  WindowAttrs a_;
  int64_t group_;
  kern::Activation act_;
};

Expected<std::unique_ptr<Kernel>> make_conv(const KernelSetup& s) {
  WEAVE_TRY(kern::require_nchw(s));
  WEAVE_TRY(kern::require_inputs(s, 2, 4));
  WEAVE_TRY(kern::require_float(s, {0, 1, 2, 3}));
  auto a = parse_window_attrs(s.node.attrs, s.label);
  if (!a) return a.error();
  if (a->ceil_mode) return make_error(s.label, ": Conv has no ceil_mode");
  const int64_t group = s.node.attrs.get_int("group", 1);
  if (group <= 0) return make_error(s.label, ": bad group ", group);
  auto act = kern::parse_activation(s);
  if (!act) return act.error();
  return std::unique_ptr<Kernel>(std::make_unique<ConvKernel>(std::move(*a), group, *act));
}

}  // namespace

void register_conv(KernelRegistry& r) {
  r.add("Conv", make_conv);
}

}  // namespace weave
