// The two matrix products of the LSTM kernel (core/kernels/ref/rnn.cpp), as a seam for the fast
// path: the reference kernel computes them with sgemm on the weights as given; the fast path
// (core/kernels/fast/lstm_fast.cpp) packs W and R once at create and runs its micro-kernel.
// The gate equations stay in one place, the LSTM kernel.
#pragma once

#include <cstdint>
#include <memory>

#include "core/common/buffer.h"
#include "core/common/parallel.h"
#include "core/kernels/kernel.h"

namespace weave {

class LstmGemm {
 public:
  virtual ~LstmGemm() = default;
  // gx[rows][4H] = x[rows][I] * W_d^T + Wb_d + Rb_d, for direction d.
  virtual void input(int d, int64_t rows, const float* x, float* gx, const Parallel& par) const = 0;
  // gs[batch][4H] = h[batch][H] * R_d^T, for direction d.
  virtual void recurrent(int d, int64_t batch, const float* h, float* gs, const Parallel& par) const = 0;
  // As Kernel::visit_packed: the packed weights, for sharing across factories.
  virtual void visit_packed(FunctionRef<void(SharedBytes&)> fn) = 0;
  // One cell update of one batch row with the default activations and no peepholes, clip or
  // input_forget: g = gs + gx (gates i, o, f, c), c = f*c + i*tanh(g_c), h = o*tanh(c). False
  // when this implementation leaves it to the kernel's own loop.
  virtual bool cell(const float* /*gs*/, const float* /*gx*/, float* /*c*/, float* /*h*/,
                    int64_t /*H*/) const {
    return false;
  }
};

// The LSTM kernel for node `s` with its products computed by `gemm` (which must have packed W,
// R and B, the node's inputs 1 to 3, so the kernel reports it no longer reads them).
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_lstm_kernel(const KernelSetup& s,
                                                                 std::unique_ptr<LstmGemm> gemm);

}  // namespace weave
