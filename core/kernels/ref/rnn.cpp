// The recurrent ops (ONNX semantics, float32): LSTM, GRU and RNN (one kernel for GRU and RNN), forward /
// reverse / bidirectional, layout 0 and 1, optional bias, sequence_lens and initial states; LSTM also
// peepholes, clip and input_forget (only its default activations), GRU and RNN any of ONNX's
// activation functions and linear_before_reset (GRU).
// Per direction: one sgemm computes X * W^T + biases for all time steps into the workspace;
// each step then adds H_{t-1} * R^T and applies the gate equations (LSTM gate order i, o, f, c;
// GRU z, r, h).
// The fast path supplies its own two products (core/kernels/lstm_gemm.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/lstm_gemm.h"
#include "core/kernels/ref/gemm_ref.h"
#include "core/kernels/ref/register.h"
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
    if (x.rank() != 3) return make_error(ctx.label, ": LSTM input ", kern::dims_bracketed(x), " must be 3-D");
    const int64_t seq = layout_ == 0 ? x[0] : x[1], batch = layout_ == 0 ? x[1] : x[0], I = x[2];
    if (w.rank() != 3 || w[0] != dirs_ || w[1] % 4 != 0 || w[2] != I)
      return make_error(ctx.label, ": LSTM W ", kern::dims_bracketed(w), " does not match input ",
                        kern::dims_bracketed(x), " and ", dirs_, " direction(s)");
    const int64_t H = w[1] / 4;
    if (hidden_ > 0 && hidden_ != H)
      return make_error(ctx.label, ": hidden_size ", hidden_, " does not match W ", kern::dims_bracketed(w));
    if (!(r == Dims{dirs_, 4 * H, H}))
      return make_error(ctx.label, ": LSTM R ", kern::dims_bracketed(r), " does not match W ",
                        kern::dims_bracketed(w));
    auto check = [&](std::size_t i, const Dims& want, const char* name) -> Status {
      if (kern::present(ctx, i) && !(ctx.inputs[i].dims == want))
        return make_error(ctx.label, ": LSTM ", name, " ", kern::dims_bracketed(ctx.inputs[i].dims),
                          " should be ", kern::dims_bracketed(want), " for input ", kern::dims_bracketed(x));
      return {};
    };
    const Dims state = layout_ == 0 ? Dims{dirs_, batch, H} : Dims{batch, dirs_, H};
    WEAVE_TRY(check(kB, Dims{dirs_, 8 * H}, "B"));
    WEAVE_TRY(check(kSeqLens, Dims{batch}, "sequence_lens"));
    WEAVE_TRY(check(kInitH, state, "initial_h"));
    WEAVE_TRY(check(kInitC, state, "initial_c"));
    WEAVE_TRY(check(kP, Dims{dirs_, 3 * H}, "P"));
    if (kern::present(ctx, kSeqLens) && ctx.inputs[kSeqLens].dtype != DType::int32)
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
    const float* B = kern::present(ctx, kB) ? ctx.inputs[kB].as<float>() : nullptr;
    const int32_t* lens = kern::present(ctx, kSeqLens) ? ctx.inputs[kSeqLens].as<int32_t>() : nullptr;
    const float* h0 = kern::present(ctx, kInitH) ? ctx.inputs[kInitH].as<float>() : nullptr;
    const float* c0 = kern::present(ctx, kInitC) ? ctx.inputs[kInitC].as<float>() : nullptr;
    const float* P = kern::present(ctx, kP) ? ctx.inputs[kP].as<float>() : nullptr;
    float* Y = kern::out_f32(ctx, 0);
    float* Yh = kern::out_f32(ctx, 1);
    float* Yc = kern::out_f32(ctx, 2);

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

// The attribute direction: forward (1 direction), reverse (1, reversed) or bidirectional (2).
Status parse_direction(const KernelSetup& s, int& dirs, bool& reverse_only) {
  const std::string dir = s.node.attrs.get_string("direction", "forward");
  dirs = dir == "bidirectional" ? 2 : 1;
  reverse_only = dir == "reverse";
  if (dir != "bidirectional" && dir != "reverse" && dir != "forward")
    return make_error(s.label, ": unknown direction '", dir, "'");
  return {};
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_lstm_kernel(const KernelSetup& s, std::unique_ptr<LstmGemm> gemm) {
  WEAVE_TRY(kern::require_inputs(s, 3, 8));
  WEAVE_TRY(kern::require_float(s, {kX, kW, kR, kB, kInitH, kInitC, kP}));
  const auto& at = s.node.attrs;
  int dirs = 1;
  bool reverse_only = false;
  WEAVE_TRY(parse_direction(s, dirs, reverse_only));
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

// ---------------------------------------------------------------------------------------------

// An activation of ONNX's recurrent ops with its alpha/beta.
struct Act {
  enum Kind {
    relu,
    tanh,
    sigmoid,
    affine,
    leaky_relu,
    thresholded_relu,
    scaled_tanh,
    hard_sigmoid,
    elu,
    softsign,
    softplus
  };
  Kind kind = tanh;
  float alpha = 0.f, beta = 0.f;
  [[nodiscard]] float operator()(float x) const {
    switch (kind) {
      case relu:
        return std::max(x, 0.f);
      case tanh:
        return std::tanh(x);
      case sigmoid:
        return 1.f / (1.f + std::exp(-x));
      case affine:
        return alpha * x + beta;
      case leaky_relu:
        return x < 0.f ? alpha * x : x;
      case thresholded_relu:
        return x > alpha ? x : 0.f;
      case scaled_tanh:
        return alpha * std::tanh(beta * x);
      case hard_sigmoid:
        return std::clamp(alpha * x + beta, 0.f, 1.f);
      case elu:
        return x < 0.f ? alpha * (std::exp(x) - 1.f) : x;
      case softsign:
        return x / (1.f + std::fabs(x));
      case softplus:
        return std::log1p(std::exp(x));
    }
    return x;
  }
};

// The activation named `name` with the next alpha/beta from the lists (or its defaults).
Expected<Act> parse_act(const std::string& name, const std::vector<float>& alphas,
                        const std::vector<float>& betas, std::size_t& ai, std::size_t& bi) {
  struct Def {
    const char* name;
    Act::Kind kind;
    int params;  // 0, 1 (alpha) or 2 (alpha, beta)
    float alpha, beta;
  };
  static constexpr Def kDefs[] = {
      {"Relu", Act::relu, 0, 0, 0},
      {"Tanh", Act::tanh, 0, 0, 0},
      {"Sigmoid", Act::sigmoid, 0, 0, 0},
      {"Affine", Act::affine, 2, 1, 0},
      {"LeakyRelu", Act::leaky_relu, 1, 0.01f, 0},
      {"ThresholdedRelu", Act::thresholded_relu, 1, 1, 0},
      {"ScaledTanh", Act::scaled_tanh, 2, 1, 1},
      {"HardSigmoid", Act::hard_sigmoid, 2, 0.2f, 0.5f},
      {"Elu", Act::elu, 1, 1, 0},
      {"Softsign", Act::softsign, 0, 0, 0},
      {"Softplus", Act::softplus, 0, 0, 0},
  };
  for (const Def& d : kDefs) {
    if (name != d.name) continue;
    Act a{d.kind, d.alpha, d.beta};
    if (d.params >= 1 && ai < alphas.size()) a.alpha = alphas[ai++];
    if (d.params >= 2 && bi < betas.size()) a.beta = betas[bi++];
    return a;
  }
  return make_error("unsupported activation '", name, "'");
}

// GRU (gates = 3: z, r, h) and RNN (gates = 1) with per-direction activations f (and g for GRU).
class GatedRnnKernel final : public Kernel {
 public:
  GatedRnnKernel(int gates, int dirs, bool reverse_only, int64_t hidden, int64_t layout, float clip,
                 bool linear_before_reset, std::vector<Act> acts)
      : gates_(gates),
        dirs_(dirs),
        reverse_only_(reverse_only),
        hidden_(hidden),
        layout_(layout),
        clip_(clip),
        lbr_(linear_before_reset),
        acts_(std::move(acts)) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[kX].dims;
    const Dims& w = ctx.inputs[kW].dims;
    const Dims& r = ctx.inputs[kR].dims;
    if (x.rank() != 3) return make_error(ctx.label, ": input ", kern::dims_bracketed(x), " must be 3-D");
    const int64_t batch = layout_ == 0 ? x[1] : x[0], I = x[2];
    if (w.rank() != 3 || w[0] != dirs_ || w[1] % gates_ != 0 || w[2] != I)
      return make_error(ctx.label, ": W ", kern::dims_bracketed(w), " does not match input ",
                        kern::dims_bracketed(x), " and ", dirs_, " direction(s)");
    const int64_t H = w[1] / gates_;
    if (hidden_ > 0 && hidden_ != H)
      return make_error(ctx.label, ": hidden_size ", hidden_, " does not match W ", kern::dims_bracketed(w));
    if (!(r == Dims{dirs_, gates_ * H, H}))
      return make_error(ctx.label, ": R ", kern::dims_bracketed(r), " does not match W ",
                        kern::dims_bracketed(w));
    const Dims state = layout_ == 0 ? Dims{dirs_, batch, H} : Dims{batch, dirs_, H};
    const Dims want[] = {Dims{}, Dims{}, Dims{}, Dims{dirs_, 2 * gates_ * H}, Dims{batch}, state};
    for (std::size_t i = kB; i <= kInitH; ++i)
      if (kern::present(ctx, i) && !(ctx.inputs[i].dims == want[i]))
        return make_error(ctx.label, ": input ", i, " ", kern::dims_bracketed(ctx.inputs[i].dims),
                          " should be ", kern::dims_bracketed(want[i]), " for input ",
                          kern::dims_bracketed(x));
    if (kern::present(ctx, kSeqLens) && ctx.inputs[kSeqLens].dtype != DType::int32)
      return make_error(ctx.label, ": sequence_lens must be int32");
    const int64_t seq = layout_ == 0 ? x[0] : x[1];
    const Dims y = layout_ == 0 ? Dims{seq, dirs_, batch, H} : Dims{batch, seq, dirs_, H};
    for (std::size_t o = 0; o < ctx.outputs.size() && o < 2; ++o) {
      ctx.outputs[o].dtype = DType::float32;
      ctx.outputs[o].dims = o == 0 ? y : state;
    }
    ctx.workspace =
        static_cast<std::size_t>((seq * batch * gates_ * H + 2 * batch * gates_ * H + batch * H) * 4);
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& xd = ctx.inputs[kX].dims;
    const int64_t seq = layout_ == 0 ? xd[0] : xd[1], batch = layout_ == 0 ? xd[1] : xd[0], I = xd[2];
    const int64_t H = ctx.inputs[kW].dims[1] / gates_, G = gates_ * H;
    const float* x = ctx.inputs[kX].as<float>();
    const float* W = ctx.inputs[kW].as<float>();
    const float* R = ctx.inputs[kR].as<float>();
    const float* B = kern::present(ctx, kB) ? ctx.inputs[kB].as<float>() : nullptr;
    const int32_t* lens = kern::present(ctx, kSeqLens) ? ctx.inputs[kSeqLens].as<int32_t>() : nullptr;
    const float* h0 = kern::present(ctx, kInitH) ? ctx.inputs[kInitH].as<float>() : nullptr;
    float* Y = kern::out_f32(ctx, 0);
    float* Yh = kern::out_f32(ctx, 1);
    float* gx = reinterpret_cast<float*>(ctx.workspace.data());  // X * W^T + Wb, [rows of X, G]
    float* gh = gx + seq * batch * G;                            // H * R^T (+ Rb), [batch, G]
    float* rh = gh + batch * G;                                  // r (.) H for GRU, [batch, G]
    float* h = rh + batch * G;                                   // [batch, H]
    auto xrow = [&](int64_t t, int64_t b) { return layout_ == 0 ? t * batch + b : b * seq + t; };
    auto srow = [&](int64_t d, int64_t b) { return layout_ == 0 ? d * batch + b : b * dirs_ + d; };
    auto yrow = [&](int64_t t, int64_t d, int64_t b) {
      return layout_ == 0 ? (t * dirs_ + d) * batch + b : (b * seq + t) * dirs_ + d;
    };
    auto clip = [&](float v) { return clip_ > 0.f ? std::clamp(v, -clip_, clip_) : v; };
    for (int d = 0; d < dirs_; ++d) {
      const bool reverse = reverse_only_ || d == 1;
      const float* Wd = W + d * G * I;
      const float* Rd = R + d * G * H;
      const float* Wb = B ? B + d * 2 * G : nullptr;
      const float* Rb = B ? Wb + G : nullptr;
      const Act& f = acts_[static_cast<std::size_t>(d * (gates_ == 3 ? 2 : 1))];
      const Act& g = gates_ == 3 ? acts_[static_cast<std::size_t>(d * 2 + 1)] : f;
      for (int64_t row = 0; row < seq * batch; ++row)
        for (int64_t j = 0; j < G; ++j) gx[row * G + j] = Wb ? Wb[j] : 0.f;
      sgemm_parallel(ctx.parallel, false, true, seq * batch, G, I, 1.f, x, I, Wd, I, 1.f, gx, G);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < H; ++j) h[b * H + j] = h0 ? h0[srow(d, b) * H + j] : 0.f;
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t t = reverse ? seq - 1 - s : s;
        // gh = H * R^T + Rb for every gate (GRU's h gate is redone below unless linear_before_reset).
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t j = 0; j < G; ++j) gh[b * G + j] = Rb ? Rb[j] : 0.f;
        sgemm_parallel(ctx.parallel, false, true, batch, G, H, 1.f, h, H, Rd, H, 1.f, gh, G);
        for (int64_t b = 0; b < batch; ++b) {
          const bool active = !lens || t < lens[b];
          float* yr = Y ? Y + yrow(t, d, b) * H : nullptr;
          if (!active) {
            if (yr)
              for (int64_t j = 0; j < H; ++j) yr[j] = 0.f;
            continue;
          }
          const float* gxr = gx + xrow(t, b) * G;
          const float* ghr = gh + b * G;
          float* hb = h + b * H;
          if (gates_ == 1) {
            for (int64_t j = 0; j < H; ++j) hb[j] = f(clip(gxr[j] + ghr[j]));
          } else {
            float* rr = rh + b * G;
            for (int64_t j = 0; j < H; ++j) rr[j] = f(clip(gxr[H + j] + ghr[H + j]));  // r
            for (int64_t j = 0; j < H; ++j) {
              const float z = f(clip(gxr[j] + ghr[j]));
              float hh = 0.f;
              if (lbr_) {
                hh = gxr[2 * H + j] + rr[j] * ghr[2 * H + j];
              } else {
                // (r (.) H_{t-1}) * Rh^T + Rbh
                double acc = Rb ? Rb[2 * H + j] : 0.f;
                const float* rh_row = Rd + (2 * H + j) * H;
                for (int64_t k = 0; k < H; ++k) acc += static_cast<double>(rr[k]) * hb[k] * rh_row[k];
                hh = gxr[2 * H + j] + static_cast<float>(acc);
              }
              const float ht = g(clip(hh));
              rr[H + j] = (1.f - z) * ht + z * hb[j];  // new H, kept aside: hb is still read above
            }
            for (int64_t j = 0; j < H; ++j) hb[j] = rr[H + j];
          }
          if (yr)
            for (int64_t j = 0; j < H; ++j) yr[j] = hb[j];
        }
      }
      if (Yh)
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t j = 0; j < H; ++j) Yh[srow(d, b) * H + j] = h[b * H + j];
    }
  }

 private:
  int gates_, dirs_;
  bool reverse_only_;
  int64_t hidden_, layout_;
  float clip_;
  bool lbr_;
  std::vector<Act> acts_;  // per direction: f (and g for GRU)
};

Expected<std::unique_ptr<Kernel>> make_gated_rnn(const KernelSetup& s, int gates) {
  WEAVE_TRY(kern::require_inputs(s, 3, 6));
  WEAVE_TRY(kern::require_float(s, {kX, kW, kR, kB, kInitH}));
  const auto& at = s.node.attrs;
  int dirs = 1;
  bool reverse_only = false;
  WEAVE_TRY(parse_direction(s, dirs, reverse_only));
  const std::size_t per_dir = gates == 3 ? 2 : 1;
  auto names = at.get_strings("activations");
  if (names.empty())
    for (int d = 0; d < dirs; ++d) {
      if (gates == 3) names.emplace_back("Sigmoid");
      names.emplace_back("Tanh");
    }
  if (names.size() != per_dir * static_cast<std::size_t>(dirs))
    return make_error(s.label, ": needs ", per_dir * static_cast<std::size_t>(dirs), " activations, got ",
                      names.size());
  const auto alphas = at.get_floats("activation_alpha"), betas = at.get_floats("activation_beta");
  std::vector<Act> acts;
  std::size_t ai = 0, bi = 0;
  for (const auto& n : names) {
    auto a = parse_act(n, alphas, betas, ai, bi);
    if (!a) return a.error().context(s.label);
    acts.push_back(*a);
  }
  const int64_t layout = at.get_int("layout", 0);
  if (layout != 0 && layout != 1) return make_error(s.label, ": bad layout ", layout);
  const int64_t hidden = at.get_int("hidden_size", 0);
  if (hidden < 0) return make_error(s.label, ": bad hidden_size ", hidden);
  const float clip = at.get_float("clip", 0.f);
  if (clip < 0.f) return make_error(s.label, ": bad clip ", clip);
  return std::unique_ptr<Kernel>(
      std::make_unique<GatedRnnKernel>(gates, dirs, reverse_only, hidden, layout, clip,
                                       at.get_int("linear_before_reset", 0) != 0, std::move(acts)));
}

}  // namespace

void register_rnn(KernelRegistry& r) {
  r.add("LSTM", make_lstm);
  r.add("GRU", [](const KernelSetup& s) { return make_gated_rnn(s, 3); });
  r.add("RNN", [](const KernelSetup& s) { return make_gated_rnn(s, 1); });
}

}  // namespace weave
