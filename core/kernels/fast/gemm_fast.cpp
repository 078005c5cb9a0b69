// Fast MatMul and Gemm on the fast path's micro-kernel (rows of A are "pixels" of a 1x1
// convolution). A constant B (weights) is packed once at create; a B computed at run time
// (attention's Q x K^T, weights x V) is packed per batch into the workspace. Gemm takes the
// fast path for transA = 0, a constant B (alpha folded into the packing) and a C that is a
// bias (scalar, [N], [1, N]) or, with beta = 1, a full [M, N] matrix added in the epilogue.
// Anything else declines to the reference kernels.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/kernels/fast/epilogue.h"
#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/gemm_rows.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/fast/pack.h"
#include "core/kernels/kernel_util.h"
#include "core/kernels/matmul_plan.h"

namespace weave::fast {
namespace {

bool is_float(const Value* v) {
  return v != nullptr && v->dtype == DType::float32;
}

// Float operations of one of a MatMul's products.
double product_work(const MatMulPlan& p) {
  return 2.0 * static_cast<double>(p.M) * static_cast<double>(p.N) * static_cast<double>(p.K);
}

// Packing slices for a B computed at run time: as many threads as could take a share of the
// batches (at most one per hardware thread, per batch, and per kMinWorkPerThread of work), so
// that a product no second thread would join reserves one.
int64_t batch_slices(const MatMulPlan& p) {
  const int64_t nb = std::max<int64_t>(1, p.batch.numel());
  const double justified = product_work(p) * static_cast<double>(nb) / kMinWorkPerThread;
  return std::min(scratch_lanes(nb),
                  static_cast<int64_t>(std::clamp(justified, 1.0, static_cast<double>(nb))));
}

class FastMatMul final : public Kernel {
 public:
  FastMatMul(const Ops& ops, Activation act) : ops_(ops), act_(act) {}

  // The fused bias (core/compiler/fuse_conv_epilogue.h): N floats added to every row.
  void set_bias(const float* b, int64_t n) {
    bias_ = AlignedBuffer(static_cast<std::size_t>(n) * sizeof(float));
    std::memcpy(bias_.data(), b, static_cast<std::size_t>(n) * sizeof(float));
  }

  void pack(const float* b, int64_t K, int64_t N) {
    packed_ = pack_gemm_b(b, K, N, N, false, ops_.nr, ops_.vec);
    K_ = K;
    N_ = N;
  }
  void visit_packed(FunctionRef<void(SharedBytes&)> fn) override { fn(packed_.data); }
  [[nodiscard]] bool packs_input(std::size_t k) const override {
    return (k == 1 && packed_.data.size() > 0) || (k == 2 && bias_.size() > 0);
  }

  Status infer(ShapeContext& ctx) const override {
    auto p = plan_matmul(ctx.inputs[0].dims, ctx.inputs[1].dims, ctx.label);
    if (!p) return p.error();
    if (bias_.size() > 0 && static_cast<int64_t>(bias_.size() / sizeof(float)) != p->N)
      return make_error(ctx.label, ": fused bias of ", bias_.size() / sizeof(float),
                        " values for a product of ", p->N, " columns");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = p->out;
    ctx.work = kern::work_product({shape_numel(p->out.span()), p->K});
    // A B computed at run time is packed into the workspace: one slice per thread that takes
    // a share of the batches (run()).
    ctx.workspace = packed_.data.size() > 0
                        ? 0
                        : static_cast<std::size_t>(
                              batch_slices(*p) * gemm_b_layout(p->K, p->N, ops_.nr, ops_.vec).group_floats) *
                              sizeof(float);
    ctx.keep(std::move(*p));
    return {};
  }

  void run(const RunContext& ctx) const override {
    const MatMulPlan* p = &ctx.kept<MatMulPlan>();
    const float* A = ctx.inputs[0].as<float>();
    float* Y = kern::out_f32(ctx, 0);
    const int64_t nb = p->batch.numel(), M = p->M, N = p->N, K = p->K;
    if (nb <= 0 || M == 0 || N == 0) return;
    const auto* bias = bias_.size() > 0 ? reinterpret_cast<const float*>(bias_.data()) : nullptr;
    if (K == 0) {
      // An empty sum: every row is the epilogue of zeros.
      for (int64_t r = 0; r < nb * M; ++r)
        for (int64_t j = 0; j < N; ++j) Y[r * N + j] = bias != nullptr ? bias[j] : 0.f;
      ops_.activate(Y, Y, nb * M * N, act_);
      return;
    }
    if (packed_.data.size() > 0) {
      // B is one matrix: every batch of A is more rows of one GEMM (A is contiguous).
      gemm_rows(ops_, A, nb * M, K, packed_.layout, packed_.floats(), N, Y, bias, nullptr, ctx.parallel,
                act_);
      return;
    }
    const float* B = ctx.inputs[1].as<float>();
    auto* wb = reinterpret_cast<float*>(ctx.workspace.data());
    const PackedLayout layout = gemm_b_layout(K, N, ops_.nr, ops_.vec);
    // Batches [b0, b1) with one packing slice; `par` splits each product.
    auto batches = [&](int64_t b0, int64_t b1, float* slice, const Parallel& par) {
      int64_t packed_ob = -1;
      for (int64_t b = b0; b < b1; ++b) {
        int64_t oa, ob;
        p->offsets(b, oa, ob);
        if (ob != packed_ob) {  // a broadcast B is packed once
          pack_gemm_b_into(B + ob, K, N, N, false, layout, ops_.vec, slice);
          packed_ob = ob;
        }
        gemm_rows(ops_, A + oa, M, K, layout, slice, N, Y + b * M * N, bias, nullptr, par, act_);
      }
    };
    // Attention's products are many small ones (Swin-T: 192 of 49 x 49 x 32): each alone is
    // too little work for a second thread, so the batches are split over the threads, each
    // packing its B into its own slice. Before, one thread ran them all and Swin-T's attention
    // products were slower at 2 threads than at 1. A product that can use every thread alone
    // (ViT's 197 x 197 x 64) keeps being split inside instead: by batch, 3 products on 2
    // threads would leave one thread two of them.
    const double one = product_work(*p);
    const int64_t tasks =
        std::min<int64_t>(batch_slices(*p), threads_for(ctx.parallel, one * static_cast<double>(nb)));
    if (tasks > 1 && threads_for(ctx.parallel, one) < ctx.parallel.threads()) {
      ctx.parallel.for_range(tasks, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t)
          batches(nb * t / tasks, nb * (t + 1) / tasks, wb + t * layout.group_floats,
                  SerialParallel::instance());
      });
      return;
    }
    batches(0, nb, wb, ctx.parallel);
  }

 private:
  const Ops& ops_;
  Activation act_;
  PackedWeights packed_;
  AlignedBuffer bias_;
  int64_t K_ = 0, N_ = 0;
};

class FastGemm final : public Kernel {
 public:
  FastGemm(const Ops& ops, const Dims& b, bool tb, bool residual)
      : ops_(ops), b_(b), tb_(tb), K_(tb ? b[1] : b[0]), N_(tb ? b[0] : b[1]), residual_(residual) {}

  void pack(const float* b, bool trans, float alpha, const float* c, int64_t c_numel, float beta) {
    std::vector<float> scaled;
    if (alpha != 1.f) {
      scaled.assign(b, b + K_ * N_);
      for (float& v : scaled) v *= alpha;
      b = scaled.data();
    }
    packed_ = pack_gemm_b(b, K_, N_, trans ? K_ : N_, trans, ops_.nr, ops_.vec);
    if (c != nullptr) {
      bias_ = AlignedBuffer(static_cast<std::size_t>(N_) * sizeof(float));
      auto* o = reinterpret_cast<float*>(bias_.data());
      for (int64_t j = 0; j < N_; ++j) o[j] = beta * c[c_numel == 1 ? 0 : j];
    }
  }
  void visit_packed(FunctionRef<void(SharedBytes&)> fn) override { fn(packed_.data); }
  [[nodiscard]] bool packs_input(std::size_t k) const override {
    return k == 1 || (k == 2 && bias_.size() > 0);
  }

  Status infer(ShapeContext& ctx) const override {
    const Dims& a = ctx.inputs[0].dims;
    if (a.rank() != 2 || a[1] != K_)
      return make_error(ctx.label, ": Gemm inner dims differ: A ", kern::dims_bracketed(a),
                        " (transA 0) and B ", kern::dims_bracketed(b_), " (transB ", tb_ ? 1 : 0, ")");
    if (residual_ && !(ctx.inputs[2].dims == Dims{a[0], N_}))
      return make_error(ctx.label, ": Gemm C ", kern::dims_bracketed(ctx.inputs[2].dims), " does not match [",
                        a[0], "x", N_, "]");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = Dims{a[0], N_};
    ctx.workspace = 0;
    ctx.work = kern::work_product({a[0], N_, K_});
    return {};
  }

  void run(const RunContext& ctx) const override {
    const int64_t M = ctx.inputs[0].dims[0];
    const float* residual = residual_ ? ctx.inputs[2].as<float>() : nullptr;
    const auto* bias = bias_.size() > 0 ? reinterpret_cast<const float*>(bias_.data()) : nullptr;
    gemm_rows(ops_, ctx.inputs[0].as<float>(), M, K_, packed_.layout, packed_.floats(), N_,
              kern::out_f32(ctx, 0), bias, residual, ctx.parallel);
  }

 private:
  const Ops& ops_;
  Dims b_;
  bool tb_;
  int64_t K_, N_;
  bool residual_;  // C is a full [M, N] matrix added as is (beta = 1)
  PackedWeights packed_;
  AlignedBuffer bias_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_fast_matmul(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  if (ops == nullptr || s.node.inputs.size() < 2 || s.node.inputs.size() > 3 ||
      !is_float(kern::input_info(s, 0)) || !is_float(kern::input_info(s, 1)))
    return std::unique_ptr<Kernel>();
  // A fused bias must be constant here; the reference kernel takes any other.
  const ConstTensorView* bias = nullptr;
  if (s.node.inputs.size() == 3) {
    bias = kern::constant(s, 2);
    if (bias == nullptr || bias->dtype != DType::float32) return std::unique_ptr<Kernel>();
  }
  auto act = parse_epilogue(s);
  if (!act) return act.error();
  auto k = std::make_unique<FastMatMul>(*ops, *act);
  if (bias != nullptr) k->set_bias(bias->as<float>(), bias->numel());
  if (const ConstTensorView* b = kern::constant(s, 1); b != nullptr && b->dims.rank() == 2 && b->numel() > 0)
    k->pack(b->as<float>(), b->dims[0], b->dims[1]);
  return std::unique_ptr<Kernel>(std::move(k));
}

Expected<std::unique_ptr<Kernel>> make_fast_gemm(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  const auto& at = s.node.attrs;
  const ConstTensorView* b = kern::constant(s, 1);
  if (ops == nullptr || s.node.inputs.size() < 2 || s.node.inputs.size() > 3 ||
      at.get_int("transA", 0) != 0 || !is_float(kern::input_info(s, 0)) || b == nullptr ||
      b->dtype != DType::float32 || b->dims.rank() != 2 || b->numel() == 0)
    return std::unique_ptr<Kernel>();
  const bool tb = at.get_int("transB", 0) != 0;
  const float alpha = at.get_float("alpha", 1.f), beta = at.get_float("beta", 1.f);
  const int64_t N = tb ? b->dims[0] : b->dims[1];
  const float* c = nullptr;
  int64_t c_numel = 0;
  bool residual = false;
  if (s.node.inputs.size() == 3 && s.node.inputs[2] != kNoValue && beta != 0.f) {
    const Value* cv = kern::input_info(s, 2);
    if (!is_float(cv)) return std::unique_ptr<Kernel>();
    const ConstTensorView* cc = kern::constant(s, 2);
    const bool row =
        cc != nullptr && (cc->numel() == 1 || (cc->numel() == N && cc->dims[cc->dims.rank() - 1] == N));
    if (row) {
      c = cc->as<float>();
      c_numel = cc->numel();
    } else if (beta != 1.f || cv->shape.size() != 2 || (cv->shape[1] >= 0 && cv->shape[1] != N) ||
               cv->shape[0] == 1) {
      return std::unique_ptr<Kernel>();  // a broadcast or scaled C: the reference handles it
    } else {
      residual = true;
    }
  }
  auto k = std::make_unique<FastGemm>(*ops, b->dims, tb, residual);
  k->pack(b->as<float>(), tb, alpha, c, c_numel, beta);
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace weave::fast
