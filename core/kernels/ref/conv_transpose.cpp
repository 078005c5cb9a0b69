// ConvTranspose (float32, 1-D..3-D); what it shares with Conv is in conv.h.
//  sgemm (W^T * x) into the workspace, then col2im scatter-add per channel.
// Spatial ranks below 3 are lifted to 3-D with leading unit axes so one loop nest serves all.
#include <algorithm>
#include <vector>

#include "core/kernels/fused_activation.h"
#include "core/kernels/ref/conv.h"
#include "core/kernels/ref/gemm_ref.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"
#include "core/kernels/spatial.h"

namespace weave {
namespace {

using kern::check_conv_ranks;
using kern::kMaxWorkspace;
using kern::valid_range;

class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(WindowAttrs a, int64_t group, std::vector<int64_t> output_padding,
                      std::vector<int64_t> output_shape, kern::Activation act)
      : a_(std::move(a)),
        group_(group),
        output_padding_(std::move(output_padding)),
        output_shape_(std::move(output_shape)),
        act_(act) {}

  // Geometry seen from the output side: `out` is the (larger) ConvTranspose output; in[] the
  // input. Reuses Geo3 with in/out meaning the ConvTranspose input/output.
  Expected<Geo3> geometry(const Dims& x, const Dims& w, const std::string& label) const {
    const int nd = x.rank() - 2;
    const auto n = static_cast<std::size_t>(nd);
    std::span<const int64_t> k(w.begin() + 2, w.end());
    if (!a_.kernel.empty() && !std::equal(a_.kernel.begin(), a_.kernel.end(), k.begin(), k.end()))
      return make_error(label, ": kernel_shape ", ints_str(a_.kernel), " does not match weights ",
                        kern::dims_bracketed(w));
    auto bad_len = [&](const std::vector<int64_t>& v, std::size_t want) {
      return !v.empty() && v.size() != want;
    };
    if (bad_len(a_.strides, n) || bad_len(a_.dilations, n) || bad_len(a_.pads, 2 * n) ||
        bad_len(output_padding_, n))
      return make_error(label, ": strides/dilations/pads/output_padding lengths do not match input ",
                        kern::dims_bracketed(x));
    if (!output_shape_.empty() && output_shape_.size() != n && output_shape_.size() != n + 2)
      return make_error(label, ": output_shape ", ints_str(output_shape_), " does not match input ",
                        kern::dims_bracketed(x));
    Geo3 g;
    const int off = 3 - nd;
    for (std::size_t i = 0; i < n; ++i) {
      const int64_t in = x[2 + static_cast<int>(i)], kv = k[i];
      const int64_t s = a_.strides.empty() ? 1 : a_.strides[i];
      const int64_t d = a_.dilations.empty() ? 1 : a_.dilations[i];
      const int64_t op = output_padding_.empty() ? 0 : output_padding_[i];
      const int64_t eff = (kv - 1) * d + 1;
      const int64_t full = s * (in - 1) + op + eff;  // output size with no padding
      int64_t pb = 0, out = 0;
      if (!output_shape_.empty() || a_.auto_pad == AutoPad::same_upper ||
          a_.auto_pad == AutoPad::same_lower) {
        out = !output_shape_.empty() ? output_shape_[output_shape_.size() - n + i] : in * s;
        // An output_shape beyond what the input reaches pads at the end (ONNX Runtime's
        // reading): those cells hold the bias alone.
        const int64_t total = std::max<int64_t>(full - out, 0);
        pb = a_.auto_pad == AutoPad::same_upper ? total / 2 : total - total / 2;
      } else {
        int64_t pe = 0;
        if (a_.auto_pad == AutoPad::notset && !a_.pads.empty()) pb = a_.pads[i], pe = a_.pads[i + n];
        out = full - pb - pe;
      }
      if (in <= 0 || out < 0)
        return make_error(label, ": input ", kern::dims_bracketed(x), " and weights ",
                          kern::dims_bracketed(w), " give a negative output size");
      g.in[off + i] = in;
      g.out[off + i] = out;
      g.k[off + i] = kv;
      g.s[off + i] = s;
      g.d[off + i] = d;
      g.pb[off + i] = pb;
    }
    return g;
  }

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    const Dims& w = ctx.inputs[1].dims;
    WEAVE_TRY(check_conv_ranks(ctx, x, w));
    if (x[1] != w[0] || w[0] % group_ != 0)
      return make_error(ctx.label, ": input ", kern::dims_bracketed(x), " has ", x[1],
                        " channels but weights ", kern::dims_bracketed(w), " expect ", w[0], " (group ",
                        group_, ")");
    int64_t M = 0;  // output channels, w[1] * group without overflow
    if (__builtin_mul_overflow(w[1], group_, &M))
      return make_error(ctx.label, ": weights ", kern::dims_bracketed(w), " with group ", group_,
                        " have more output channels than int64 holds");
    if (kern::present(ctx, 2)) {
      const Dims& b = ctx.inputs[2].dims;
      if (b.rank() != 1 || b[0] != M)
        return make_error(ctx.label, ": bias ", kern::dims_bracketed(b), " does not match ", M,
                          " output channels of weights ", kern::dims_bracketed(w));
    }
    auto g = geometry(x, w, ctx.label);
    if (!g) return g.error();
    Dims out{x[0], M};
    for (int i = 3 - (x.rank() - 2); i < 3; ++i) out.push_back(g->out[i]);
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = out;
    const int64_t col[] = {w[1], g->k[0], g->k[1], g->k[2], g->in[0], g->in[1], g->in[2]};
    const int64_t bytes = checked_bytes(col, sizeof(float));  // checked, as the Conv's
    if (bytes < 0 || bytes > kMaxWorkspace)
      return make_error(ctx.label, ": column buffer of ",
                        bytes < 0 ? std::string("more than 2^63") : std::to_string(bytes),
                        " bytes is too large for input ", kern::dims_bracketed(x), " and weights ",
                        kern::dims_bracketed(w));
    ctx.workspace = static_cast<std::size_t>(bytes);
    ctx.work = kern::work_product({shape_numel(x.span()), w[1], g->k[0], g->k[1], g->k[2]});
    ctx.keep(*g);
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const Dims& wd = ctx.inputs[1].dims;
    const Geo3& g = ctx.kept<Geo3>();
    const float* x = ctx.inputs[0].as<float>();
    const float* w = ctx.inputs[1].as<float>();
    const float* bias = kern::present(ctx, 2) ? ctx.inputs[2].as<float>() : nullptr;
    float* y = kern::out_f32(ctx, 0);
    float* col = reinterpret_cast<float*>(ctx.workspace.data());
    const int64_t N = xd[0], C = xd[1], Cg = C / group_, Mg = wd[1], M = Mg * group_;
    const int64_t kk = g.k_size(), Pin = g.in_size(), Pout = g.out_size();
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t gi = 0; gi < group_; ++gi) {
        // col[Mg*kk, Pin] = W_g^T (W_g stored Cg x Mg*kk) * x_g [Cg, Pin]
        sgemm_parallel(ctx.parallel, true, false, Mg * kk, Pin, Cg, 1.f, w + gi * Cg * Mg * kk, Mg * kk,
                       x + (n * C + gi * Cg) * Pin, Pin, 0.f, col, Pin);
        ctx.parallel.for_range(Mg, 1, [&](int64_t m0, int64_t m1) {
          for (int64_t m = m0; m < m1; ++m) {
            float* yp = y + (n * M + gi * Mg + m) * Pout;
            std::fill(yp, yp + Pout, bias ? bias[gi * Mg + m] : 0.f);
            for (int64_t t = 0; t < kk; ++t) {
              const int64_t kd = t / (g.k[1] * g.k[2]), kh = (t / g.k[2]) % g.k[1], kw = t % g.k[2];
              const float* src = col + (m * kk + t) * Pin;
              // input position i maps to output i*s - pb + k*d
              const int64_t offw = kw * g.d[2] - g.pb[2];
              for (int64_t id = 0; id < g.in[0]; ++id) {
                const int64_t od = id * g.s[0] - g.pb[0] + kd * g.d[0];
                if (od < 0 || od >= g.out[0]) continue;
                for (int64_t ih = 0; ih < g.in[1]; ++ih) {
                  const int64_t oh = ih * g.s[1] - g.pb[1] + kh * g.d[1];
                  if (oh < 0 || oh >= g.out[1]) continue;
                  const float* s = src + (id * g.in[1] + ih) * g.in[2];
                  float* d = yp + (od * g.out[1] + oh) * g.out[2] + offw;
                  int64_t lo, hi;
                  valid_range(g.in[2], g.out[2], g.s[2], offw, lo, hi);
                  for (int64_t iw = lo; iw < hi; ++iw) d[iw * g.s[2]] += s[iw];
                }
              }
            }
            act_.apply(yp, Pout);
          }
        });
      }
    }
  }

 private:
  WindowAttrs a_;
  int64_t group_;
  std::vector<int64_t> output_padding_, output_shape_;
  kern::Activation act_;
};

Expected<std::unique_ptr<Kernel>> make_conv_transpose(const KernelSetup& s) {
  WEAVE_TRY(kern::require_nchw(s));
  WEAVE_TRY(kern::require_inputs(s, 2, 3));
  WEAVE_TRY(kern::require_float(s, {0, 1, 2}));
  auto a = parse_window_attrs(s.node.attrs, s.label);
  if (!a) return a.error();
  const int64_t group = s.node.attrs.get_int("group", 1);
  if (group <= 0) return make_error(s.label, ": bad group ", group);
  auto op = s.node.attrs.get_ints("output_padding");
  for (std::size_t i = 0; i < op.size(); ++i) {
    const int64_t st = i < a->strides.size() ? a->strides[i] : 1;
    const int64_t dl = i < a->dilations.size() ? a->dilations[i] : 1;
    if (op[i] < 0 || (op[i] >= st && op[i] >= dl))
      return make_error(s.label, ": output_padding ", ints_str(op),
                        " must be smaller than strides or dilations");
  }
  auto os = s.node.attrs.get_ints("output_shape");
  for (int64_t v : os)
    if (v < 0 || v > (int64_t{1} << 24)) return make_error(s.label, ": bad output_shape ", ints_str(os));
  auto act = kern::parse_activation(s);
  if (!act) return act.error();
  return std::unique_ptr<Kernel>(
      std::make_unique<ConvTransposeKernel>(std::move(*a), group, std::move(op), std::move(os), *act));
}

}  // namespace

void register_conv_transpose(KernelRegistry& r) {
  r.add("ConvTranspose", make_conv_transpose);
}

}  // namespace weave
