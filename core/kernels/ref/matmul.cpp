// MatMul (numpy semantics: 1-D operands, broadcast batch dims), float32, on the shared sgemm of
// gemm_ref.h; the batch layout is matmul_plan.h's, which the fast MatMul shares. The compiler's
// epilogue fusion (core/compiler/fuse_conv_epilogue.h) may give it a 3rd input, a bias of N
// elements added to every row, and the "activation" attributes, applied after.
#include "core/kernels/fused_activation.h"
#include "core/kernels/kernel_util.h"
#include "core/kernels/matmul_plan.h"
#include "core/kernels/ref/gemm_ref.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

class MatMulKernel final : public Kernel {
 public:
  explicit MatMulKernel(kern::Activation act) : act_(act) {}

  Status infer(ShapeContext& ctx) const override {
    auto p = plan_matmul(ctx.inputs[0].dims, ctx.inputs[1].dims, ctx.label);
    if (!p) return p.error();
    if (kern::present(ctx, 2) && ctx.inputs[2].numel() != p->N)
      return make_error(ctx.label, ": fused bias ", kern::dims_bracketed(ctx.inputs[2].dims),
                        " is not one value per ", "column of the ", p->N, "-column product");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = p->out;
    ctx.workspace = 0;
    ctx.work = kern::work_product({shape_numel(p->out.span()), p->K});
    ctx.keep(std::move(*p));
    return {};
  }

  void run(const RunContext& ctx) const override {
    const MatMulPlan* p = &ctx.kept<MatMulPlan>();
    const float* A = ctx.inputs[0].as<float>();
    const float* B = ctx.inputs[1].as<float>();
    float* Y = kern::out_f32(ctx, 0);
    const int64_t nb = p->batch.numel(), M = p->M, N = p->N, K = p->K;
    if (nb <= 0 || M == 0 || N == 0) return;
    if (nb == 1) {
      sgemm_parallel(ctx.parallel, false, false, M, N, K, 1.f, A, K, B, N, 0.f, Y, N);
    } else {
      ctx.parallel.for_range(nb, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          int64_t oa, ob;
          p->offsets(b, oa, ob);
          sgemm(false, false, M, N, K, 1.f, A + oa, K, B + ob, N, 0.f, Y + b * M * N, N);
        }
      });
    }
    const float* bias = kern::present(ctx, 2) ? ctx.inputs[2].as<float>() : nullptr;
    if (bias == nullptr && act_.kind == kern::Activation::none && act_.post_mul == 1.f &&
        act_.post_add == 0.f)
      return;
    ctx.parallel.for_range(nb * M, kern::kGrain / (N > 0 ? N : 1) + 1, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        float* y = Y + r * N;
        if (bias != nullptr)
          for (int64_t j = 0; j < N; ++j) y[j] += bias[j];
        act_.apply(y, N);
      }
    });
  }

 private:
  kern::Activation act_;
};

Expected<std::unique_ptr<Kernel>> make_matmul(const KernelSetup& s) {
  WEAVE_TRY(kern::require_inputs(s, 2, 3));
  WEAVE_TRY(kern::require_float(s, {0, 1}));
  if (s.node.inputs.size() == 3) WEAVE_TRY(kern::require_float(s, {2}));
  auto act = kern::parse_activation(s);
  if (!act) return act.error();
  return std::unique_ptr<Kernel>(std::make_unique<MatMulKernel>(*act));
}

}  // namespace

void register_matmul(KernelRegistry& r) {
  r.add("MatMul", make_matmul);
}

}  // namespace weave
