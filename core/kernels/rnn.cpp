// Reference LSTM (ONNX semantics, float32): forward / reverse / bidirectional, layout 0 and 1,
// optional bias, sequence_lens, initial states, peepholes, clip and input_forget. Only the
// default activations (Sigmoid, Tanh, Tanh) are supported.
// Per direction: one sgemm computes X * W^T + biases for all time steps into the workspace;
// each step then adds H_{t-1} * R^T and applies the gate equations (gate order i, o, f, c).
// The fast path supplies its own two products (core/kernels/lstm_gemm.h).
#include <cmath>

#include "core/kernels/gemm_ref.h"
#include "core/kernels/lstm_gemm.h"
#include "core/kernels/ref_util.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

enum In { kX = 0, kW, kR, kB, kSeqLens, kInitH, kInitC, kP };

inline float sigmoid(float x) {
  return 1.f / (1.f + std::exp(-x));
}

class LstmKernel final : public Kernel {
 public:
  LstmKernel(int dirs, bool reverse_only, int64_t hidden, int64_t layout, float clip, bool input_forget,
             std::unique_ptr<LstmGemm> gemm)
      : dirs_(dirs),
        reverse_only_(reverse_only),
        hidden_(hidden),
        layout_(layout),
        clip_(clip),
        input_forget_(input_forget),
        gemm_(std::move(gemm)) {}

  void visit_packed(FunctionRef<void(SharedBytes&)> fn) override {
    if (gemm_) gemm_->visit_packed(fn);
  }
  [[nodiscard]] bool packs_input(std::size_t k) const override {
    return gemm_ != nullptr && (k == kW || k == kR || k == kB);
  }

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[kX].dims;
    const Dims& w = ctx.inputs[kW].dims;
    const Dims& r = ctx.inputs[kR].dims;
    if (x.rank() != 3) return make_error(ctx.label, ": LSTM input ", ref::dims_str(x), " must be 3-D");
    const int64_t seq = layout_ == 0 ? x[0] : x[1], batch = layout_ == 0 ? x[1] : x[0], I = x[2];
    if (w.rank() != 3 || w[0] != dirs_ || w[1] % 4 != 0 || w[2] != I)
      return make_error(ctx.label, ": LSTM W ", ref::dims_str(w), " does not match input ", ref::dims_str(x),
                        " and ", dirs_, " direction(s)");
    const int64_t H = w[1] / 4;
    if (hidden_ > 0 && hidden_ != H)
      return make_error(ctx.label, ": hidden_size ", hidden_, " does not match W ", ref::dims_str(w));
    if (!(r == Dims{dirs_, 4 * H, H}))
      return make_error(ctx.label, ": LSTM R ", ref::dims_str(r), " does not match W ", ref::dims_str(w));
    auto check = [&](std::size_t i, const Dims& want, const char* name) -> Status {
      if (ref::present(ctx, i) && !(ctx.inputs[i].dims == want))
        return make_error(ctx.label, ": LSTM ", name, " ", ref::dims_str(ctx.inputs[i].dims), " should be ",
                          ref::dims_str(want), " for input ", ref::dims_str(x));
      return {};
    };
    const Dims state = layout_ == 0 ? Dims{dirs_, batch, H} : Dims{batch, dirs_, H};
    WEAVE_TRY(check(kB, Dims{dirs_, 8 * H}, "B"));
    WEAVE_TRY(check(kSeqLens, Dims{batch}, "sequence_lens"));
    WEAVE_TRY(check(kInitH, state, "initial_h"));
    WEAVE_TRY(check(kInitC, state, "initial_c"));
    WEAVE_TRY(check(kP, Dims{dirs_, 3 * H}, "P"));
    if (ref::present(ctx, kSeqLens) && ctx.inputs[kSeqLens].dtype != DType::int32)
      return make_error(ctx.label, ": LSTM sequence_lens must be int32");
    const Dims y = layout_ == 0 ? Dims{seq, dirs_, batch, H} : Dims{batch, seq, dirs_, H};
    for (std::size_t o = 0; o < ctx.outputs.size() && o < 3; ++o) {
      ctx.outputs[o].dtype = DType::float32;
      ctx.outputs[o].dims = o == 0 ? y : state;
    }
    ctx.workspace = static_cast<std::size_t>((seq * batch * 4 * H + batch * 4 * H + 2 * batch * H) * 4);
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[kX].dims;
    const int64_t seq = layout_ == 0 ? xd[0] : xd[1], batch = layout_ == 0 ? xd[1] : xd[0], I = xd[2];
    const int64_t H = ctx.inputs[kW].dims[1] / 4, G = 4 * H;
    const float* x = ctx.inputs[kX].as<float>();
    const float* W = ctx.inputs[kW].as<float>();
    const float* R = ctx.inputs[kR].as<float>();
    const float* B = ref::present(ctx, kB) ? ctx.inputs[kB].as<float>() : nullptr;
    const int32_t* lens = ref::present(ctx, kSeqLens) ? ctx.inputs[kSeqLens].as<int32_t>() : nullptr;
    const float* h0 = ref::present(ctx, kInitH) ? ctx.inputs[kInitH].as<float>() : nullptr;
    const float* c0 = ref::present(ctx, kInitC) ? ctx.inputs[kInitC].as<float>() : nullptr;
    const float* P = ref::present(ctx, kP) ? ctx.inputs[kP].as<float>() : nullptr;
    float* Y = ref::out_f32(ctx, 0);
    float* Yh = ref::out_f32(ctx, 1);
    float* Yc = ref::out_f32(ctx, 2);

    float* gx = reinterpret_cast<float*>(ctx.workspace.data());  // [rows of X, 4H]
    float* gs = gx + seq * batch * G;                            // [batch, 4H] per step
    float* h = gs + batch * G;                                   // [batch, H]
    float* c = h + batch * H;                                    // [batch, H]
    // Row of x / gx holding (t, b); offsets of per-(d, b) state and of Y's (t, d, b) row.
    auto xrow = [&](int64_t t, int64_t b) { return layout_ == 0 ? t * batch + b : b * seq + t; };
    auto srow = [&](int64_t d, int64_t b) { return layout_ == 0 ? d * batch + b : b * dirs_ + d; };
    auto yrow = [&](int64_t t, int64_t d, int64_t b) {
      return layout_ == 0 ? (t * dirs_ + d) * batch + b : (b * seq + t) * dirs_ + d;
    };

    for (int d = 0; d < dirs_; ++d) {
      const bool reverse = reverse_only_ || d == 1;
      const float* Wd = W + d * G * I;
      const float* Rd = R + d * G * H;
      // gx = X * W^T + Wb + Rb
      if (gemm_) {
        gemm_->input(d, seq * batch, x, gx, ctx.parallel);
      } else {
        for (int64_t row = 0; row < seq * batch; ++row) {
          float* g = gx + row * G;
          for (int64_t j = 0; j < G; ++j) g[j] = B ? B[d * 2 * G + j] + B[d * 2 * G + G + j] : 0.f;
        }
        sgemm_parallel(ctx.parallel, false, true, seq * batch, G, I, 1.f, x, I, Wd, I, 1.f, gx, G);
      }
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < H; ++j) {
          h[b * H + j] = h0 ? h0[srow(d, b) * H + j] : 0.f;
          c[b * H + j] = c0 ? c0[srow(d, b) * H + j] : 0.f;
        }
      const float* pi = P ? P + d * 3 * H : nullptr;
      const float* po = P ? pi + H : nullptr;
      const float* pf = P ? pi + 2 * H : nullptr;
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t t = reverse ? seq - 1 - s : s;
        if (gemm_)
          gemm_->recurrent(d, batch, h, gs, ctx.parallel);
        else
          sgemm_parallel(ctx.parallel, false, true, batch, G, H, 1.f, h, H, Rd, H, 0.f, gs, G);
        for (int64_t b = 0; b < batch; ++b) {
          const bool active = !lens || t < lens[b];
          float* yr = Y ? Y + yrow(t, d, b) * H : nullptr;
          if (!active) {
            if (yr)
              for (int64_t j = 0; j < H; ++j) yr[j] = 0.f;
            continue;
          }
          float* g = gs + b * G;
          const float* gxr = gx + xrow(t, b) * G;
          float* hb = h + b * H;
          float* cb = c + b * H;
          if (gemm_ && !P && clip_ <= 0.f && !input_forget_ && gemm_->cell(g, gxr, cb, hb, H)) {
            if (yr)
              for (int64_t j = 0; j < H; ++j) yr[j] = hb[j];
            continue;
          }
          for (int64_t j = 0; j < G; ++j) {
            float v = g[j] + gxr[j];
            if (clip_ > 0.f) v = std::clamp(v, -clip_, clip_);
            g[j] = v;
          }
          for (int64_t j = 0; j < H; ++j) {
            const float cp = cb[j];
            const float it = sigmoid(g[j] + (pi ? pi[j] * cp : 0.f));
            const float ft = input_forget_ ? 1.f - it : sigmoid(g[2 * H + j] + (pf ? pf[j] * cp : 0.f));
            const float ct = std::tanh(g[3 * H + j]);
            const float cn = ft * cp + it * ct;
            const float ot = sigmoid(g[H + j] + (po ? po[j] * cn : 0.f));
            cb[j] = cn;
            hb[j] = ot * std::tanh(cn);
          }
          if (yr)
            for (int64_t j = 0; j < H; ++j) yr[j] = hb[j];
        }
      }
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < H; ++j) {
          if (Yh) Yh[srow(d, b) * H + j] = h[b * H + j];
          if (Yc) Yc[srow(d, b) * H + j] = c[b * H + j];
        }
    }
  }

 private:
  int dirs_;
  bool reverse_only_;
  int64_t hidden_, layout_;
  float clip_;
  bool input_forget_;
  std::unique_ptr<LstmGemm> gemm_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_lstm_kernel(const KernelSetup& s, std::unique_ptr<LstmGemm> gemm) {
  WEAVE_TRY(ref::require_inputs(s, 3, 8));
  WEAVE_TRY(ref::require_float(s, {kX, kW, kR, kB, kInitH, kInitC, kP}));
  const auto& at = s.node.attrs;
  const std::string dir = at.get_string("direction", "forward");
  int dirs = 1;
  bool reverse_only = false;
  if (dir == "bidirectional")
    dirs = 2;
  else if (dir == "reverse")
    reverse_only = true;
  else if (dir != "forward")
    return make_error(s.label, ": unknown LSTM direction '", dir, "'");
  const auto acts = at.get_strings("activations");
  if (!acts.empty()) {
    if (acts.size() != static_cast<std::size_t>(3 * dirs))
      return make_error(s.label, ": LSTM needs ", 3 * dirs, " activations, got ", acts.size());
    for (std::size_t i = 0; i < acts.size(); ++i) {
      const char* want = i % 3 == 0 ? "Sigmoid" : "Tanh";
      if (acts[i] != want)
        return make_error(s.label, ": LSTM activation '", acts[i],
                          "' is not supported (only Sigmoid, Tanh, Tanh)");
    }
  }
  const int64_t layout = at.get_int("layout", 0);
  if (layout != 0 && layout != 1) return make_error(s.label, ": bad LSTM layout ", layout);
  const int64_t hidden = at.get_int("hidden_size", 0);
  if (hidden < 0) return make_error(s.label, ": bad hidden_size ", hidden);
  const float clip = at.get_float("clip", 0.f);
  if (clip < 0.f) return make_error(s.label, ": bad clip ", clip);
  return std::unique_ptr<Kernel>(std::make_unique<LstmKernel>(
      dirs, reverse_only, hidden, layout, clip, at.get_int("input_forget", 0) != 0, std::move(gemm)));
}

namespace {

Expected<std::unique_ptr<Kernel>> make_lstm(const KernelSetup& s) {
  return make_lstm_kernel(s, nullptr);
}

}  // namespace

void register_rnn_kernels(KernelRegistry& r) {
  r.add("LSTM", make_lstm);
}

}  // namespace weave
