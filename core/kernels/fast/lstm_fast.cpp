// The LSTM's two matrix products on the fast path: W and R of every direction packed once at
// create (and the two biases summed), so each time step is one micro-kernel pass over packed
// R instead of a reference sgemm that repacks it every step. The gate equations are the LSTM
// kernel's own (core/kernels/ref/rnn.cpp, through core/kernels/lstm_gemm.h).
#include <vector>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/gemm_rows.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/fast/pack.h"
#include "core/kernels/kernel_util.h"
#include "core/kernels/lstm_gemm.h"

namespace weave::fast {
namespace {

class FastLstmGemm final : public LstmGemm {
 public:
  FastLstmGemm(const Ops& ops, const ConstTensorView& w, const ConstTensorView& r, const ConstTensorView* b)
      : ops_(ops), dirs_(w.dims[0]), G_(w.dims[1]), I_(w.dims[2]), H_(r.dims[2]) {
    for (int64_t d = 0; d < dirs_; ++d) {
      w_.push_back(pack_gemm_b(w.as<float>() + d * G_ * I_, I_, G_, I_, true, ops.nr, ops.vec));
      r_.push_back(pack_gemm_b(r.as<float>() + d * G_ * H_, H_, G_, H_, true, ops.nr, ops.vec));
      std::vector<float> bias(static_cast<std::size_t>(G_), 0.f);
      if (b != nullptr)
        for (int64_t j = 0; j < G_; ++j)
          bias[j] = b->as<float>()[d * 2 * G_ + j] + b->as<float>()[d * 2 * G_ + G_ + j];
      bias_.push_back(std::move(bias));
    }
  }

  void input(int d, int64_t rows, const float* x, float* gx, const Parallel& par) const override {
    gemm_rows(ops_, x, rows, I_, w_[d].layout, w_[d].floats(), G_, gx, bias_[d].data(), nullptr, par);
  }
  void recurrent(int d, int64_t batch, const float* h, float* gs, const Parallel& par) const override {
    gemm_rows(ops_, h, batch, H_, r_[d].layout, r_[d].floats(), G_, gs, nullptr, nullptr, par);
  }
  bool cell(const float* gs, const float* gx, float* c, float* h, int64_t H) const override {
    ops_.lstm_cell(gs, gx, c, h, H);
    return true;
  }
  void visit_packed(FunctionRef<void(SharedBytes&)> fn) override {
    for (auto& p : w_) fn(p.data);
    for (auto& p : r_) fn(p.data);
  }

 private:
  const Ops& ops_;
  int64_t dirs_, G_, I_, H_;
  std::vector<PackedWeights> w_, r_;
  std::vector<std::vector<float>> bias_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_fast_lstm(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  const ConstTensorView* w = kern::constant(s, 1);
  const ConstTensorView* r = kern::constant(s, 2);
  const bool has_b = s.node.inputs.size() > 3 && s.node.inputs[3] != kNoValue;
  const ConstTensorView* b = has_b ? kern::constant(s, 3) : nullptr;
  const Value* x = kern::input_info(s, 0);
  if (ops == nullptr || x == nullptr || x->dtype != DType::float32 || w == nullptr || r == nullptr ||
      (has_b && b == nullptr) || w->dtype != DType::float32 || r->dtype != DType::float32 ||
      w->dims.rank() != 3 || r->dims.rank() != 3 || w->dims[0] != r->dims[0] || w->dims[1] != r->dims[1] ||
      r->dims[1] != 4 * r->dims[2] ||
      (b != nullptr && (b->dtype != DType::float32 || b->numel() != w->dims[0] * 2 * w->dims[1])))
    return std::unique_ptr<Kernel>();  // the reference kernel checks (and reports) the rest
  return make_lstm_kernel(s, std::make_unique<FastLstmGemm>(*ops, *w, *r, b));
}

}  // namespace weave::fast
