// MatMulInteger and QLinearMatMul: one batched integer matrix product with zero points.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "core/kernels/ref/quantize.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::check_qparams;
using kern::dims_str;
using kern::make_kernel;
using kern::optional;
using kern::qget;
using kern::qput;
using kern::quantized;
using kern::scale_at;
using kern::zero_point;

using Made = Expected<std::unique_ptr<Kernel>>;

// Batched integer matmul with numpy broadcasting of the batch dims: acc = (a - za) @ (b - zb).
// A 1-D a or b is promoted as MatMul does. Zero points: per tensor, or per row of a / column of b.
struct IntMatMul {
  Dims out;
  int64_t m = 0, k = 0, n = 0;
  Dims a_batch, b_batch, batch;
  kern::Plan pa, pb;  // where each batch of the output reads A and B (broadcast)

  Status plan(const Dims& a, const Dims& b, const std::string& label) {
    if (a.rank() < 1 || b.rank() < 1) return make_error(label, ": inputs must have rank >= 1");
    m = a.rank() >= 2 ? a[a.rank() - 2] : 1;
    k = a[a.rank() - 1];
    const int64_t kb = b.rank() >= 2 ? b[b.rank() - 2] : b[0];
    n = b.rank() >= 2 ? b[b.rank() - 1] : 1;
    if (k != kb) return make_error(label, ": cannot multiply ", dims_str(a), " by ", dims_str(b));
    a_batch = Dims(a.span().subspan(0, a.rank() >= 2 ? a.size() - 2 : 0));
    b_batch = Dims(b.span().subspan(0, b.rank() >= 2 ? b.size() - 2 : 0));
    if (!kern::broadcast_dims(a_batch, b_batch, batch))
      return make_error(label, ": batch dims of ", dims_str(a), " and ", dims_str(b), " do not broadcast");
    out = batch;
    if (a.rank() >= 2) out.push_back(m);
    if (b.rank() >= 2) out.push_back(n);
    pa = kern::broadcast_plan(batch, {&a_batch});
    pb = kern::broadcast_plan(batch, {&b_batch});
    return {};
  }

  // acc[batch, i, j] for every output element, calling put(flat index, acc, i, j).
  template <class Put>
  void run(const ConstTensorView& a, int32_t za_default, const ConstTensorView* za, const ConstTensorView& b,
           const ConstTensorView* zb, Put&& put) const {
    const int64_t batches = batch.numel();
    for (int64_t t = 0; t < batches; ++t) {
      int64_t oa = 0, ob = 0;
      kern::for_each_run<1>(pa, t, t + 1, {0},
                            [&](int64_t, const std::array<int64_t, 1>& off, int64_t) { oa = off[0]; });
      kern::for_each_run<1>(pb, t, t + 1, {0},
                            [&](int64_t, const std::array<int64_t, 1>& off, int64_t) { ob = off[0]; });
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const int32_t zai = za ? qget(*za, za->numel() == 1 ? 0 : i) : za_default;
          const int32_t zbj = zb ? qget(*zb, zb->numel() == 1 ? 0 : j) : 0;
          int64_t acc = 0;
          for (int64_t p = 0; p < k; ++p)
            acc += static_cast<int64_t>(qget(a, (oa * m + i) * k + p) - zai) *
                   (qget(b, (ob * k + p) * n + j) - zbj);
          put((t * m + i) * n + j, acc, i, j);
        }
    }
  }
};

class MatMulIntegerKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() < 2 || !in[0].present() || !in[1].present())
      return make_error(ctx.label, ": expects A and B");
    if (!quantized(in[0].dtype) || !quantized(in[1].dtype))
      return make_error(ctx.label, ": A and B must be uint8 or int8, got ", dtype_name(in[0].dtype), " and ",
                        dtype_name(in[1].dtype));
    IntMatMul mm;
    WEAVE_TRY(mm.plan(in[0].dims, in[1].dims, ctx.label));
    ctx.outputs[0].dtype = DType::int32;
    ctx.outputs[0].dims = mm.out;
    ctx.work = kern::work_product({shape_numel(mm.out.span()), mm.k});
    ctx.keep(std::move(mm));
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const IntMatMul& mm = ctx.kept<IntMatMul>();
    int32_t* y = ctx.outputs[0].as<int32_t>();
    mm.run(in[0], 0, optional(in, 2), in[1], optional(in, 3), [&](int64_t at, int64_t acc, int64_t, int64_t) {
      y[at] = static_cast<int32_t>(std::clamp<int64_t>(acc, INT32_MIN, INT32_MAX));
    });
  }
};

class QLinearMatMulKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() != 8) return make_error(ctx.label, ": expects 8 inputs");
    for (std::size_t i = 0; i < 8; ++i)
      if (!in[i].present()) return make_error(ctx.label, ": input ", i, " is missing");
    if (!quantized(in[0].dtype) || !quantized(in[3].dtype) || !quantized(in[7].dtype))
      return make_error(ctx.label, ": a, b and y must be uint8 or int8");
    IntMatMul mm;
    WEAVE_TRY(mm.plan(in[0].dims, in[3].dims, ctx.label));
    WEAVE_TRY(check_qparams(ctx, 1, 2, mm.m, "a"));
    WEAVE_TRY(check_qparams(ctx, 4, 5, mm.n, "b"));
    WEAVE_TRY(check_qparams(ctx, 6, 7, 1, "y"));
    ctx.outputs[0].dtype = in[7].dtype;
    ctx.outputs[0].dims = mm.out;
    ctx.work = kern::work_product({shape_numel(mm.out.span()), mm.k});
    ctx.keep(std::move(mm));
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const IntMatMul& mm = ctx.kept<IntMatMul>();
    const float ys = scale_at(in[6], 0);
    const int32_t yz = zero_point(in, 7, 0);
    mm.run(in[0], 0, &in[2], in[3], &in[5], [&](int64_t at, int64_t acc, int64_t i, int64_t j) {
      const double real = static_cast<double>(acc) * scale_at(in[1], i) * scale_at(in[4], j);
      qput(ctx.outputs[0], at, std::nearbyint(real / ys) + yz);
    });
  }
};

}  // namespace

void register_matmul_integer(KernelRegistry& r) {
  r.add("MatMulInteger", [](const KernelSetup&) -> Made { return make_kernel<MatMulIntegerKernel>(); });
  r.add("QLinearMatMul", [](const KernelSetup&) -> Made { return make_kernel<QLinearMatMulKernel>(); });
}

}  // namespace weave
