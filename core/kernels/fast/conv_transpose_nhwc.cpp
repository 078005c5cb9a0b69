// Fast ConvTranspose over NHWC data for the upsampling form detectors use: kernel == stride,
// no padding, dilation 1, one group. Every input pixel then owns its own kh x kw block of
// outputs, so for each kernel tap (a, b) the op is a GEMM of the input pixels by W[:, :, a, b]
// whose output rows land at (i*sh + a, j*sw + b): one micro-kernel pass per tap, each input row
// an "image" of the pass with its own output stride. When all taps' outputs fit one panel
// (few output channels: the detector's final 1-channel map), one pass computes every tap into
// the workspace and a scatter places them. Other forms decline to the reference.
#include <cstring>
#include <vector>

#include "core/kernels/fast/epilogue.h"
#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/gemm_rows.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/fast/pack.h"
#include "core/kernels/kernel_util.h"

namespace weave::fast {
namespace {

class FastConvTranspose final : public Kernel {
 public:
  FastConvTranspose(const Ops& ops, const Dims& w, Activation act)
      : ops_(ops), C_(w[0]), M_(w[1]), KH_(w[2]), KW_(w[3]), act_(act) {}

  void pack(const float* w, const float* bias) {
    const int64_t taps = KH_ * KW_;
    if (bias != nullptr) {
      bias_ = AlignedBuffer(static_cast<std::size_t>(M_) * sizeof(float));
      std::memcpy(bias_.data(), bias, static_cast<std::size_t>(M_) * sizeof(float));
    }
    one_pass_ = taps * M_ <= ops_.nr;
    if (one_pass_) {
      // B[c][t * M + m] = W[c][m][t]: every tap's columns side by side.
      layout_ = gemm_b_layout(C_, taps * M_, ops_.nr, ops_.vec);
      std::vector<float> b(static_cast<std::size_t>(C_ * taps * M_));
      for (int64_t c = 0; c < C_; ++c)
        for (int64_t t = 0; t < taps; ++t)
          for (int64_t m = 0; m < M_; ++m) b[(c * taps + t) * M_ + m] = w[(c * M_ + m) * taps + t];
      AlignedBuffer buf(static_cast<std::size_t>(layout_.group_floats) * sizeof(float), false);
      pack_gemm_b_into(b.data(), C_, taps * M_, taps * M_, false, layout_, ops_.vec,
                       reinterpret_cast<float*>(buf.data()));
      packed_ = SharedBytes::from(std::move(buf));
      return;
    }
    layout_ = gemm_b_layout(C_, M_, ops_.nr, ops_.vec);
    AlignedBuffer buf(static_cast<std::size_t>(taps * layout_.group_floats) * sizeof(float), false);
    std::vector<float> b(static_cast<std::size_t>(C_ * M_));
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t c = 0; c < C_; ++c)
        for (int64_t m = 0; m < M_; ++m) b[c * M_ + m] = w[(c * M_ + m) * taps + t];
      pack_gemm_b_into(b.data(), C_, M_, M_, false, layout_, ops_.vec,
                       reinterpret_cast<float*>(buf.data()) + t * layout_.group_floats);
    }
    packed_ = SharedBytes::from(std::move(buf));
  }
  void visit_packed(FunctionRef<void(SharedBytes&)> fn) override { fn(packed_); }
  [[nodiscard]] bool packs_input(std::size_t k) const override { return k == 1 || k == 2; }

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() != 4 || x[3] != C_)
      return make_error(ctx.label, ": NHWC input ", kern::dims_bracketed(x), " does not have the weights' ",
                        C_, " channels");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = Dims{x[0], x[1] * KH_, x[2] * KW_, M_};
    ctx.workspace =
        one_pass_ ? static_cast<std::size_t>(x[0] * x[1] * x[2] * KH_ * KW_ * M_) * sizeof(float) : 0;
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    const int64_t OW = x[2] * KW_;
    const auto* w = reinterpret_cast<const float*>(packed_.data());
    const auto* bias = bias_.size() > 0 ? reinterpret_cast<const float*>(bias_.data()) : nullptr;
    if (one_pass_) {
      run_one_pass(ctx, w, bias);
      return;
    }
    for (int64_t a = 0; a < KH_; ++a)
      for (int64_t b = 0; b < KW_; ++b) {
        ConvGemmArgs g;
        g.x = ctx.inputs[0].as<float>();
        g.N = x[0] * x[1];  // every input row is an "image"
        g.IW = x[2];
        g.ldx = C_;
        g.x_image = x[2] * C_;
        g.y = kern::out_f32(ctx, 0) + (a * OW + b) * M_;
        g.OW = x[2];
        g.ldy = KW_ * M_;
        g.y_image = KH_ * OW * M_;
        g.Cg = C_;
        g.Mg = M_;
        g.w = w + (a * KW_ + b) * layout_.group_floats;
        g.layout = layout_;
        g.bias = bias;
        g.act = act_;
        ops_.conv_gemm(g, ctx.parallel);
      }
  }

  void run_one_pass(const RunContext& ctx, const float* w, const float* bias) const {
    const Dims& x = ctx.inputs[0].dims;
    const int64_t taps = KH_ * KW_, P = x[0] * x[1] * x[2], OW = x[2] * KW_, cols = taps * M_;
    auto* t = reinterpret_cast<float*>(ctx.workspace.data());  // [P][taps * M]
    gemm_rows(ops_, ctx.inputs[0].as<float>(), P, C_, layout_, w, cols, t, nullptr, nullptr, ctx.parallel);
    float* y = kern::out_f32(ctx, 0);
    const double work = static_cast<double>(P * cols) * kElementWork;  // scatter of the products
    ctx.parallel.for_range(
        x[0] * x[1], grain_for(ctx.parallel, x[0] * x[1], work, 4), [&](int64_t r0, int64_t r1) {
          for (int64_t row = r0; row < r1; ++row) {  // (n, i): input row; its outputs are KH rows
            const int64_t n = row / x[1], i = row % x[1];
            for (int64_t j = 0; j < x[2]; ++j) {
              const float* src = t + (row * x[2] + j) * cols;
              for (int64_t a = 0; a < KH_; ++a) {
                float* dst = y + ((n * x[1] + i) * KH_ + a) * OW * M_ + j * KW_ * M_;
                for (int64_t b = 0; b < KW_; ++b)
                  for (int64_t m = 0; m < M_; ++m)
                    dst[b * M_ + m] = src[(a * KW_ + b) * M_ + m] + (bias != nullptr ? bias[m] : 0.f);
              }
            }
            float* out_rows = y + row * KH_ * OW * M_;
            ops_.activate(out_rows, out_rows, KH_ * OW * M_, act_);
          }
        });
  }

 private:
  const Ops& ops_;
  int64_t C_, M_, KH_, KW_;
  Activation act_;
  bool one_pass_ = false;
  PackedLayout layout_;
  SharedBytes packed_;
  AlignedBuffer bias_;
};

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v)
    if (e != x) return false;
  return true;
}

}  // namespace

bool conv_transpose_nhwc_supported(const Node& n, const Value* x, const Value* w, bool w_const,
                                   const Value* b, bool b_const) {
  if (n.op != "ConvTranspose" || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1)
    return false;
  if (x == nullptr || x->dtype != DType::float32 || !x->rank_known || x->shape.size() != 4) return false;
  if (w == nullptr || w->dtype != DType::float32 || !w_const || w->shape.size() != 4) return false;
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue &&
      (b == nullptr || b->dtype != DType::float32 || !b_const))
    return false;
  const Attributes& at = n.attrs;
  const std::string pad = at.get_string("auto_pad", "NOTSET");
  if (at.get_int("group", 1) != 1 || (pad != "NOTSET" && pad != "VALID") || at.has("output_shape"))
    return false;
  if (!all_equal(at.get_ints("pads"), 0) || !all_equal(at.get_ints("output_padding"), 0) ||
      !all_equal(at.get_ints("dilations"), 1))
    return false;
  const std::vector<int64_t> k{w->shape[2], w->shape[3]};
  const auto ks = at.get_ints("kernel_shape");
  return (ks.empty() || ks == k) && at.get_ints("strides") == k;
}

Expected<std::unique_ptr<Kernel>> make_fast_conv_transpose(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  const ConstTensorView* wc = kern::constant(s, 1);
  const ConstTensorView* bc = kern::constant(s, 2);
  if (ops == nullptr || s.node.attrs.get_string("weave_layout") != "NHWC" ||
      !conv_transpose_nhwc_supported(s.node, kern::input_info(s, 0), kern::input_info(s, 1), wc != nullptr,
                                     kern::input_info(s, 2), bc != nullptr))
    return std::unique_ptr<Kernel>();
  auto act = parse_epilogue(s);
  if (!act) return act.error();
  auto k = std::make_unique<FastConvTranspose>(*ops, wc->dims, *act);
  k->pack(wc->as<float>(), bc != nullptr ? bc->as<float>() : nullptr);
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace weave::fast
