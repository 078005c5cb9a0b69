// Det (LU with partial pivoting), float32 and float64, accumulated in double.
#include <cmath>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::floating;
using kern::load;
using kern::make_kernel;
using kern::store;

class DetKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.empty() || !ctx.inputs[0].present() || !floating(ctx.inputs[0].dtype))
      return make_error(ctx.label, ": input must be float32 or float64");
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() < 2 || x[x.rank() - 1] != x[x.rank() - 2])
      return make_error(ctx.label, ": input ", dims_str(x), " must be [*, M, M]");
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = Dims(x.span().subspan(0, x.size() - 2));
    const int64_t m = x[x.rank() - 1];
    ctx.workspace = static_cast<std::size_t>(m * m) * sizeof(double);
    return {};
  }
  void run(const RunContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    const int64_t m = x[x.rank() - 1];
    auto* a = reinterpret_cast<double*>(ctx.workspace.data());
    for (int64_t b = 0; b < ctx.outputs[0].numel(); ++b) {
      for (int64_t i = 0; i < m * m; ++i) a[i] = load(ctx.inputs[0], b * m * m + i);
      double det = 1;
      for (int64_t c = 0; c < m && det != 0; ++c) {
        int64_t p = c;
        for (int64_t r = c + 1; r < m; ++r)
          if (std::fabs(a[r * m + c]) > std::fabs(a[p * m + c])) p = r;
        if (a[p * m + c] == 0) {
          det = 0;
          break;
        }
        if (p != c) {
          for (int64_t k = 0; k < m; ++k) std::swap(a[p * m + k], a[c * m + k]);
          det = -det;
        }
        det *= a[c * m + c];
        for (int64_t r = c + 1; r < m; ++r) {
          const double f = a[r * m + c] / a[c * m + c];
          for (int64_t k = c; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
        }
      }
      store(ctx.outputs[0], b, det);
    }
  }
};

}  // namespace

void register_det(KernelRegistry& r) {
  r.add("Det",
        [](const KernelSetup&) -> Expected<std::unique_ptr<Kernel>> { return make_kernel<DetKernel>(); });
}

}  // namespace weave
