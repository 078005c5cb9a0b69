// MelWeightMatrix (opset 17), float32 or float64 out. Its sizes (mel bins, DFT length, sample
// rate) are input values that decide the output shape: the kernel lists them in value_inputs.
#include <algorithm>
#include <cmath>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::has_input;
using kern::make_kernel;
using kern::output_datatype;
using kern::scalar_double;
using kern::scalar_int;
using kern::store;

using Made = Expected<std::unique_ptr<Kernel>>;

// [dft_length / 2 + 1, num_mel_bins] triangular filters between lower and upper edge (Hz),
// spaced evenly on the mel scale, as ONNX's reference computes them.
class MelWeightMatrixKernel final : public Kernel {
 public:
  explicit MelWeightMatrixKernel(DType out) : out_(out) {}
  [[nodiscard]] uint32_t value_inputs() const override { return input_bits(0, 4); }
  Status infer(ShapeContext& ctx) const override {
    for (std::size_t i = 0; i < 5; ++i)
      if (!has_input(ctx.inputs, i)) return make_error(ctx.label, ": needs 5 inputs");
    auto bins = scalar_int(ctx, 0, "num_mel_bins");
    if (!bins) return bins.error();
    auto len = scalar_int(ctx, 1, "dft_length");
    if (!len) return len.error();
    auto rate = scalar_int(ctx, 2, "sample_rate");
    if (!rate) return rate.error();
    if (*bins < 1 || *len < 1 || *rate < 1 || *bins > (1 << 20) || *len > (int64_t{1} << 30))
      return make_error(ctx.label, ": num_mel_bins, dft_length and sample_rate must be positive");
    for (std::size_t i = 3; i < 5; ++i)
      if (ctx.inputs[i].numel() != 1 || ctx.inputs[i].data == nullptr)
        return make_error(ctx.label, ": the edge frequencies must be known scalars");
    ctx.outputs[0].dtype = out_;
    ctx.outputs[0].dims = Dims{*len / 2 + 1, *bins};
    ctx.workspace = static_cast<std::size_t>(*bins + 2) * sizeof(int64_t);  // the filter edges
    return {};
  }
  void run(const RunContext& ctx) const override {
    const int64_t bins = kern::int_at(ctx.inputs[0], 0), len = kern::int_at(ctx.inputs[1], 0);
    const int64_t rate = kern::int_at(ctx.inputs[2], 0);
    const double lo = scalar_double(ctx.inputs[3]), hi = scalar_double(ctx.inputs[4]);
    const int64_t rows = len / 2 + 1;
    const TensorView& out = ctx.outputs[0];
    for (int64_t i = 0; i < out.numel(); ++i) store(out, i, 0.0);
    auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double lo_mel = mel(lo), step = (mel(hi) - lo_mel) / static_cast<double>(bins + 2);
    const std::span<int64_t> f(reinterpret_cast<int64_t*>(ctx.workspace.data()),
                               static_cast<std::size_t>(bins + 2));
    for (int64_t k = 0; k < bins + 2; ++k) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(k) * step + lo_mel) / 2595.0) - 1.0);
      // Clamped to [-1, rows] before converting: hostile edge frequencies (NaN, huge) only
      // move filters off the matrix.
      const double bin = std::floor(static_cast<double>(len + 1) * hz / static_cast<double>(rate));
      f[static_cast<std::size_t>(k)] =
          std::isnan(bin) ? -1 : static_cast<int64_t>(std::clamp(bin, -1.0, static_cast<double>(rows)));
    }
    auto set = [&](int64_t j, int64_t i, double v) {
      if (j >= 0 && j < rows) store(out, j * bins + i, v);
    };
    for (int64_t i = 0; i < bins; ++i) {
      const int64_t left = f[static_cast<std::size_t>(i)], center = f[static_cast<std::size_t>(i + 1)],
                    right = f[static_cast<std::size_t>(i + 2)];
      if (center - left == 0)
        set(center, i, 1.0);
      else
        for (int64_t j = std::max<int64_t>(left, 0); j <= std::min(center, rows - 1); ++j)
          set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
      if (right - center > 0)
        for (int64_t j = std::max<int64_t>(center, 0); j < std::min(right, rows); ++j)
          set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
    }
  }

 private:
  DType out_;
};

}  // namespace

void register_mel_weight_matrix(KernelRegistry& r) {
  r.add("MelWeightMatrix", [](const KernelSetup& s) -> Made {
    auto t = output_datatype(s);
    if (!t) return t.error();
    return make_kernel<MelWeightMatrixKernel>(*t);
  });
}

}  // namespace weave
