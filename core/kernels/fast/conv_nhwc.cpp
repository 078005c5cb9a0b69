// Fast Conv over NHWC data (nodes the layout pass marked weave_layout = "NHWC"): depthwise
// convolutions, and grouped ones of narrow groups, run the channel-vectorized direct kernel,
// 3x3 stride-1 ones with enough channels Winograd F(4x4, 3x3), everything else (1x1, strided,
// dilated, wider groups) the implicit-GEMM micro-kernel, each over weights packed at create.
// Also ScaledConv (core/kernels/fused_ops.h): a 1x1 convolution of x * s, s a per-image scale of
// the input channels, as the GEMM of x by the packed weights scaled by s, per image.
#include <algorithm>
#include <cstring>

#include "core/kernels/fast/epilogue.h"
#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/fast/pack.h"
#include "core/kernels/fused_ops.h"
#include "core/kernels/kernel_util.h"
#include "core/kernels/registry.h"
#include "core/kernels/spatial.h"

namespace weave::fast {
namespace {

// Winograd pays when both channel counts are large enough for the GEMMs to dominate the
// transforms, and its weights (4x the direct ones) stay within this many bytes per layer.
constexpr int64_t kWinogradMinChannels = 16;
constexpr int64_t kWinogradMaxBytes = int64_t{16} << 20;
// Groups of up to this many channels (in and out) run the direct grouped kernel: the GEMM's
// register tile would hold mostly other groups' zeros (ResNeXt's 3x3 of 4 channels per group at
// 56x56 took 2.5 ms there, 0.32 ms direct; of 8 at 28x28, 0.73 and 0.32 ms). At 16 per group
// the GEMM wins again (0.23 against 0.35 ms on AVX-512: a permutation per multiply-add costs more
// than the tile's waste).
constexpr int64_t kMaxNarrowGroup = 8;
// Threads that may each take whole Winograd blocks (each needs a scratch lane in the workspace).
constexpr int64_t kMaxWinogradLanes = 8;

bool unit(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
}

class FastConv final : public NhwcConvKernel {
 public:
  // scaled: a ScaledConv (1x1, ungrouped; checked by make_fast_conv), its scale input 4.
  FastConv(const Ops& ops, WindowAttrs a, int64_t group, Activation act, const Dims& w, bool scaled)
      : ops_(ops),
        a_(std::move(a)),
        group_(group),
        act_(act),
        M_(w[0]),
        Cg_(w[1]),
        KH_(w[2]),
        KW_(w[3]),
        scaled_(scaled) {}

  Status pack(const float* w, const float* bias) {
    const int64_t taps = KH_ * KW_;
    depthwise_ = !scaled_ && Cg_ == 1 && group_ == M_;
    // Cg_ even: the kernel keeps two sums per pixel, of the even and the odd input channels.
    narrow_ = !depthwise_ && !scaled_ && group_ > 1 && Cg_ * group_ == M_ && Cg_ <= kMaxNarrowGroup &&
              Cg_ % 2 == 0 && ops_.vec % Cg_ == 0 && ops_.grouped != nullptr;
    winograd_ = !depthwise_ && !scaled_ && group_ == 1 && KH_ == 3 && KW_ == 3 && unit(a_.strides) &&
                unit(a_.dilations) && Cg_ >= kWinogradMinChannels && M_ >= kWinogradMinChannels &&
                36 * Cg_ * M_ * int64_t{4} <= kWinogradMaxBytes && ops_.winograd != nullptr;
    if (act_.residual_last && (depthwise_ || narrow_))
      return make_error("a residual after the activation needs the GEMM or Winograd kernel, not the ",
                        depthwise_ ? "depthwise" : "grouped", " one");
    if (winograd_) {
      packed_ = pack_winograd_f43(w, M_, Cg_, ops_.nr, ops_.vec);
    } else if (depthwise_) {
      dw_ = pack_depthwise(w, M_, taps, ops_.vec, c_pad_);
    } else if (narrow_) {
      dw_ = pack_grouped_narrow(w, M_, Cg_, taps, ops_.vec, c_pad_);
    } else {
      packed_ = pack_conv(w, group_, M_ / group_, Cg_, taps, ops_.nr, ops_.vec);
      zeros_ = AlignedBuffer(static_cast<std::size_t>(Cg_ * KW_) * sizeof(float));
    }
    if (bias != nullptr) {
      bias_ = AlignedBuffer(static_cast<std::size_t>(M_) * sizeof(float));
      std::memcpy(bias_.data(), bias, static_cast<std::size_t>(M_) * sizeof(float));
    }
    return {};
  }

  void visit_packed(FunctionRef<void(SharedBytes&)> fn) override {
    fn(depthwise_ || narrow_ ? dw_ : packed_.data);
  }
  [[nodiscard]] bool packs_input(std::size_t k) const override { return k == 1 || k == 2; }

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() != 4)
      return make_error(ctx.label, ": NHWC input ", kern::dims_bracketed(x), " must have rank 4");
    if (x[3] != Cg_ * group_)
      return make_error(ctx.label, ": input ", kern::dims_bracketed(x), " (NHWC) has ", x[3],
                        " channels; weights with group ", group_, " expect ", Cg_ * group_);
    auto geo = geometry(x, ctx.label);
    if (!geo) return geo.error();
    Dims out{x[0], geo->out[0], geo->out[1], M_};
    if (kern::present(ctx, 3) && !(ctx.inputs[3].dims == out))
      return make_error(ctx.label, ": residual ", kern::dims_bracketed(ctx.inputs[3].dims),
                        " does not match output ", kern::dims_bracketed(out), " (NHWC)");
    if (scaled_) {
      const Dims& s = ctx.inputs[4].dims;
      if (s.rank() != 4 || (s[0] != 1 && s[0] != x[0]) || s[1] != 1 || s[2] != 1 || s[3] != Cg_)
        return make_error(ctx.label, ": scale ", kern::dims_bracketed(s), " is not [1 or ", x[0], ", 1, 1, ",
                          Cg_, "] (NHWC) for input ", kern::dims_bracketed(x));
    }
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = out;
    ctx.workspace = winograd_ ? ops_.winograd_workspace(winograd_args(x, *geo))
                    : scaled_ ? static_cast<std::size_t>(packed_.layout.group_floats) * sizeof(float)
                              : 0;
    ctx.keep(std::move(*geo));
    return {};
  }

  void run(const RunContext& ctx) const override { run_into(ctx, kern::out_f32(ctx, 0), M_); }

  [[nodiscard]] bool can_run_into() const override { return !depthwise_ && !scaled_; }
  [[nodiscard]] int64_t out_channels() const override { return M_; }

  void run_into(const RunContext& ctx, float* y, int64_t ldy) const override {
    const Dims& xd = ctx.inputs[0].dims;
    const WindowGeometry* geo = &ctx.kept<WindowGeometry>();
    const float* res = kern::present(ctx, 3) ? ctx.inputs[3].as<float>() : nullptr;
    const auto* bias = bias_.size() > 0 ? reinterpret_cast<const float*>(bias_.data()) : nullptr;
    if (winograd_) {
      WinogradArgs a = winograd_args(xd, *geo);
      a.x = ctx.inputs[0].as<float>();
      a.y = y;
      a.ldy = ldy;
      a.bias = bias;
      a.residual = res;
      a.workspace = reinterpret_cast<float*>(ctx.workspace.data());
      ops_.winograd(a, ctx.parallel);
      return;
    }
    if (depthwise_ || narrow_) {
      DepthwiseArgs a;
      a.x = ctx.inputs[0].as<float>();
      a.N = xd[0], a.IH = xd[1], a.IW = xd[2], a.C = xd[3];
      a.y = y;  // depthwise: ldy == M_ (can_run_into() is false for it)
      a.ldy = ldy;
      a.OH = geo->out[0], a.OW = geo->out[1];
      set_window(*geo, a.KH, a.KW, a.SH, a.SW, a.DH, a.DW, a.PT, a.PL);
      a.w = reinterpret_cast<const float*>(dw_.data());
      a.c_pad = c_pad_;
      a.bias = bias;
      a.residual = res;
      a.act = act_;
      a.gw = Cg_;
      if (narrow_)
        ops_.grouped(a, ctx.parallel);
      else
        ops_.depthwise(a, ctx.parallel);
      return;
    }
    ConvGemmArgs a;
    a.x = ctx.inputs[0].as<float>();
    a.N = xd[0], a.IH = xd[1], a.IW = xd[2];
    a.ldx = xd[3];
    a.x_image = xd[1] * xd[2] * xd[3];
    a.y = y;
    a.OH = geo->out[0], a.OW = geo->out[1];
    a.ldy = ldy;
    a.y_image = a.OH * a.OW * ldy;
    set_window(*geo, a.KH, a.KW, a.SH, a.SW, a.DH, a.DW, a.PT, a.PL);
    a.groups = group_, a.Cg = Cg_, a.Mg = M_ / group_;
    a.w = packed_.floats();
    a.layout = packed_.layout;
    a.bias = bias;
    a.residual = res;
    a.ldr = M_, a.r_image = a.OH * a.OW * M_;
    a.act = act_;
    a.zeros = reinterpret_cast<const float*>(zeros_.data());
    if (!scaled_) {
      ops_.conv_gemm(a, ctx.parallel);
      return;
    }
    // W (s * x) = (W diag(s)) x: each image's GEMM over the weights scaled by its own s.
    const float* s = ctx.inputs[4].as<float>();
    const int64_t s_image = ctx.inputs[4].dims[0] == 1 ? 0 : Cg_;
    auto* scaled = reinterpret_cast<float*>(ctx.workspace.data());
    const float* x = a.x;
    a.N = 1;
    a.w = scaled;
    for (int64_t n = 0; n < xd[0]; ++n) {
      scale_packed_rows(packed_.floats(), Cg_, M_, packed_.layout, ops_.vec, s + n * s_image, scaled);
      a.x = x + n * a.x_image;
      a.y = y + n * a.y_image;
      a.residual = res != nullptr ? res + n * a.r_image : nullptr;
      ops_.conv_gemm(a, ctx.parallel);
    }
  }

 private:
  Expected<WindowGeometry> geometry(const Dims& x, const std::string& label) const {
    const int64_t in[2] = {x[1], x[2]}, k[2] = {KH_, KW_};
    return forward_geometry(a_, in, k, label);
  }
  // Everything of the Winograd arguments but the tensors: infer() sizes the scratch from it and
  // run() uses the same lanes.
  WinogradArgs winograd_args(const Dims& x, const WindowGeometry& geo) const {
    WinogradArgs a;
    a.N = x[0], a.IH = x[1], a.IW = x[2], a.C = x[3];
    a.OH = geo.out[0], a.OW = geo.out[1], a.M = M_;
    a.PT = geo.pad_begin[0], a.PL = geo.pad_begin[1];
    a.u = packed_.floats();
    a.layout = packed_.layout;
    a.act = act_;
    a.lanes = lanes_;
    return a;
  }
  static void set_window(const WindowGeometry& g, int64_t& KH, int64_t& KW, int64_t& SH, int64_t& SW,
                         int64_t& DH, int64_t& DW, int64_t& PT, int64_t& PL) {
    KH = g.kernel[0], KW = g.kernel[1], SH = g.stride[0], SW = g.stride[1];
    DH = g.dilation[0], DW = g.dilation[1], PT = g.pad_begin[0], PL = g.pad_begin[1];
  }

  const Ops& ops_;
  WindowAttrs a_;
  int64_t group_;
  Activation act_;
  int64_t M_, Cg_, KH_, KW_;
  bool scaled_ = false;
  bool depthwise_ = false, narrow_ = false, winograd_ = false;
  PackedWeights packed_;
  SharedBytes dw_;
  AlignedBuffer bias_, zeros_;
  int64_t c_pad_ = 0;
  // Winograd scratch lanes: one per hardware thread, up to kMaxWinogradLanes.
  int64_t lanes_ = scratch_lanes(kMaxWinogradLanes);
};

bool is_float(const Value* v) {
  return v != nullptr && v->dtype == DType::float32;
}

}  // namespace

bool conv_nhwc_supported(const Node& n, const Value* x, const Value* w, bool w_const, const Value* b,
                         bool b_const) {
  if (n.op != "Conv" || n.inputs.size() < 2 || n.inputs.size() > 4 || n.outputs.size() != 1) return false;
  if (!is_float(x) || !x->rank_known || x->shape.size() != 4) return false;
  if (!is_float(w) || !w_const || w->shape.size() != 4 || shape_numel(w->shape) <= 0) return false;
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue && (!is_float(b) || !b_const)) return false;
  const int64_t group = n.attrs.get_int("group", 1);
  if (group < 1 || w->shape[0] % group != 0) return false;
  const bool depthwise = w->shape[1] == 1 && group == w->shape[0];
  if (!depthwise && w->shape[2] * w->shape[3] > kMaxGemmTaps) return false;
  return true;
}

Expected<std::unique_ptr<Kernel>> make_fast_conv(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  if (ops == nullptr || s.node.attrs.get_string("weave_layout") != "NHWC") return std::unique_ptr<Kernel>();
  const Value* x = kern::input_info(s, 0);
  const Value* w = kern::input_info(s, 1);
  const Value* b = kern::input_info(s, 2);
  const ConstTensorView* wc = kern::constant(s, 1);
  const ConstTensorView* bc = kern::constant(s, 2);
  // A ScaledConv is a Conv with a scale input: the Conv's checks, on its first four inputs.
  const bool scaled = s.node.op == fused::kScaledConv;
  Node conv;
  if (scaled) {
    if (s.node.inputs.size() != 5 || !is_float(kern::input_info(s, 4)))
      return make_error(s.label, ": ScaledConv takes x, weights, bias, residual and a float scale");
    conv.op = "Conv";
    conv.inputs.assign(s.node.inputs.begin(), s.node.inputs.begin() + 4);
    conv.outputs = s.node.outputs;
  }
  if (!conv_nhwc_supported(scaled ? conv : s.node, x, w, wc != nullptr, b, bc != nullptr)) {
    if (scaled) return make_error(s.label, ": ScaledConv needs constant float weights and an NHWC input");
    return std::unique_ptr<Kernel>();
  }
  if (s.node.inputs.size() > 3 && s.node.inputs[3] != kNoValue && !is_float(kern::input_info(s, 3)))
    return std::unique_ptr<Kernel>();
  auto a = parse_window_attrs(s.node.attrs, s.label);
  if (!a) return a.error();
  if (a->ceil_mode) return make_error(s.label, ": Conv has no ceil_mode");
  if (!a->kernel.empty() &&
      (a->kernel.size() != 2 || a->kernel[0] != w->shape[2] || a->kernel[1] != w->shape[3]))
    return make_error(s.label, ": kernel_shape ", ints_str(a->kernel), " does not match weights ",
                      shape_str(w->shape));
  auto act = parse_epilogue(s);
  if (!act) return act.error();
  const int64_t group = s.node.attrs.get_int("group", 1);
  if (scaled &&
      (group != 1 || w->shape[2] != 1 || w->shape[3] != 1 || !unit(a->strides) || !unit(a->dilations) ||
       std::any_of(a->pads.begin(), a->pads.end(), [](int64_t p) { return p != 0; })))
    return make_error(s.label, ": ScaledConv must be a 1x1, stride-1, unpadded, ungrouped convolution");
  auto k = std::make_unique<FastConv>(*ops, std::move(*a), group, *act, Dims(w->shape), scaled);
  WEAVE_TRY(k->pack(wc->as<float>(), bc != nullptr ? bc->as<float>() : nullptr));
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace weave::fast
