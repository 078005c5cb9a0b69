// Gemm (alpha, beta, transA, transB, unidirectionally broadcast C), float32, on the shared sgemm of
// gemm_ref.h.
#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/gemm_ref.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

class GemmKernel final : public Kernel {
 public:
  GemmKernel(float alpha, float beta, bool ta, bool tb) : alpha_(alpha), beta_(beta), ta_(ta), tb_(tb) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& a = ctx.inputs[0].dims;
    const Dims& b = ctx.inputs[1].dims;
    if (a.rank() != 2 || b.rank() != 2)
      return make_error(ctx.label, ": Gemm operands ", kern::dims_bracketed(a), " and ",
                        kern::dims_bracketed(b), " must be 2-D");
    const int64_t M = ta_ ? a[1] : a[0], K = ta_ ? a[0] : a[1];
    const int64_t Kb = tb_ ? b[1] : b[0], N = tb_ ? b[0] : b[1];
    if (K != Kb)
      return make_error(ctx.label, ": Gemm inner dims differ: A ", kern::dims_bracketed(a), " (transA ", ta_,
                        ") and B ", kern::dims_bracketed(b), " (transB ", tb_, ")");
    if (kern::present(ctx, 2)) {
      const Dims& c = ctx.inputs[2].dims;
      bool ok = c.rank() <= 2;
      if (ok && c.rank() == 2) ok = (c[0] == 1 || c[0] == M) && (c[1] == 1 || c[1] == N);
      if (ok && c.rank() == 1) ok = c[0] == 1 || c[0] == N;
      if (!ok)
        return make_error(ctx.label, ": Gemm C ", kern::dims_bracketed(c), " does not broadcast to [", M, "x",
                          N, "]");
    }
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = Dims{M, N};
    ctx.workspace = 0;
    ctx.work = kern::work_product({M, N, K});
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& a = ctx.inputs[0].dims;
    const Dims& b = ctx.inputs[1].dims;
    const int64_t M = ta_ ? a[1] : a[0], K = ta_ ? a[0] : a[1], N = tb_ ? b[0] : b[1];
    float* Y = kern::out_f32(ctx, 0);
    float beta = 0.f;
    if (kern::present(ctx, 2) && beta_ != 0.f) {
      const Dims& cd = ctx.inputs[2].dims;
      const float* C = ctx.inputs[2].as<float>();
      // Strides of C broadcast to [M, N].
      int64_t sm = 0, sn = 0;
      if (cd.rank() == 2) {
        sm = cd[0] == 1 ? 0 : cd[1];
        sn = cd[1] == 1 ? 0 : 1;
      } else if (cd.rank() == 1) {
        sn = cd[0] == 1 ? 0 : 1;
      }
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) Y[i * N + j] = C[i * sm + j * sn];
      beta = beta_;
    }
    sgemm_parallel(ctx.parallel, ta_, tb_, M, N, K, alpha_, ctx.inputs[0].as<float>(), a[1],
                   ctx.inputs[1].as<float>(), b[1], beta, Y, N);
  }

 private:
  float alpha_, beta_;
  bool ta_, tb_;
};

Expected<std::unique_ptr<Kernel>> make_gemm(const KernelSetup& s) {
  WEAVE_TRY(kern::require_inputs(s, 2, 3));
  WEAVE_TRY(kern::require_float(s, {0, 1, 2}));
  const auto& at = s.node.attrs;
  return std::unique_ptr<Kernel>(
      std::make_unique<GemmKernel>(at.get_float("alpha", 1.f), at.get_float("beta", 1.f),
                                   at.get_int("transA", 0) != 0, at.get_int("transB", 0) != 0));
}

}  // namespace

void register_gemm(KernelRegistry& r) {
  r.add("Gemm", make_gemm);
}

}  // namespace weave
