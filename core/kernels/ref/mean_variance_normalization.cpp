// MeanVarianceNormalization, float32.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

// MeanVarianceNormalization over `axes`: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9), as the
// ONNX function defines it.
class MvnKernel final : public Kernel {
 public:
  explicit MvnKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}
  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    for (int64_t a : axes_)
      if (a < -x.rank() || a >= x.rank())
        return make_error(ctx.label, ": axis ", a, " is out of range for input ", kern::dims_bracketed(x));
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = x;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    const int r = d.rank();
    std::array<bool, kMaxRank> reduced{};
    for (int64_t a : axes_) reduced[static_cast<std::size_t>(a < 0 ? a + r : a)] = true;
    // Group of an element: its index with the reduced axes dropped.
    auto group = [&](int64_t i) {
      int64_t g = 0, rem = i;
      std::array<int64_t, kMaxRank> c{};
      for (int k = r - 1; k >= 0; --k) {
        c[k] = rem % d[k];
        rem /= d[k];
      }
      for (int k = 0; k < r; ++k)
        if (!reduced[k]) g = g * d[k] + c[k];
      return g;
    };
    int64_t groups = 1, per = 1;
    for (int k = 0; k < r; ++k) (reduced[k] ? per : groups) *= d[k];
    std::vector<double> s(static_cast<std::size_t>(groups)), s2(static_cast<std::size_t>(groups));
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
    for (int64_t i = 0; i < d.numel(); ++i) {
      const auto g = static_cast<std::size_t>(group(i));
      s[g] += x[i];
      s2[g] += static_cast<double>(x[i]) * x[i];
    }
    for (int64_t i = 0; i < d.numel(); ++i) {
      const auto g = static_cast<std::size_t>(group(i));
      const double m = s[g] / static_cast<double>(per);
      const double var = std::max(0.0, s2[g] / static_cast<double>(per) - m * m);
      y[i] = static_cast<float>((x[i] - m) / (std::sqrt(var) + 1e-9));
    }
  }

 private:
  std::vector<int64_t> axes_;
};

}  // namespace

void register_mean_variance_normalization(KernelRegistry& r) {
  r.add("MeanVarianceNormalization", [](const KernelSetup& s) -> Expected<std::unique_ptr<Kernel>> {
    WEAVE_TRY(kern::require_inputs(s, 1, 1));
    WEAVE_TRY(kern::require_float(s, {0}));
    return std::unique_ptr<Kernel>(std::make_unique<MvnKernel>(s.node.attrs.get_ints("axes", {0, 2, 3})));
  });
}

}  // namespace weave
