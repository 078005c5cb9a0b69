// Softmax, LogSoftmax and Hardmax (1 at the first maximum; one kernel), float32, numerically stable (the row
// maximum is subtracted). Opset >= 13 semantics: normalize along `axis` (default -1). With the attribute
// coerce_2d=1 (set by the importer for opset < 13 models) the input is viewed as 2-D at `axis` (default 1)
// and each row of the trailing block is normalized as a whole.
#include <array>
#include <cmath>
#include <limits>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

enum class Mode { softmax, log, hard };

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(int64_t axis, bool coerce_2d, Mode mode) : axis_(axis), coerce_(coerce_2d), mode_(mode) {}

  // outer x D x inner view of the input.
  Status split(const Dims& x, const std::string& label, int64_t& outer, int64_t& D, int64_t& inner) const {
    const int64_t r = x.rank();
    const int64_t a = axis_ < 0 ? axis_ + r : axis_;
    if (a < 0 || a > r || (!coerce_ && a == r))
      return make_error(label, ": axis ", axis_, " is out of range for input ", kern::dims_bracketed(x));
    outer = D = inner = 1;
    for (int64_t i = 0; i < a; ++i) outer *= x[static_cast<int>(i)];
    if (coerce_) {
      for (int64_t i = a; i < r; ++i) D *= x[static_cast<int>(i)];
    } else {
      D = x[static_cast<int>(a)];
      for (int64_t i = a + 1; i < r; ++i) inner *= x[static_cast<int>(i)];
    }
    return {};
  }

  Status infer(ShapeContext& ctx) const override {
    std::array<int64_t, 3> split_dims{};  // outer, D, inner
    WEAVE_TRY(split(ctx.inputs[0].dims, ctx.label, split_dims[0], split_dims[1], split_dims[2]));
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    ctx.workspace = 0;
    ctx.keep(split_dims);
    return {};
  }

  void run(const RunContext& ctx) const override {
    const auto [outer, D, inner] = ctx.kept<std::array<int64_t, 3>>();
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
    if (D == 0) return;
    ctx.parallel.for_range(outer * inner, inner == 1 ? 16 : 64, [&](int64_t l0, int64_t l1) {
      for (int64_t l = l0; l < l1; ++l) {
        const int64_t o = l / inner, i = l % inner;
        const float* xl = x + o * D * inner + i;
        float* yl = y + o * D * inner + i;
        if (mode_ == Mode::hard) {  // 1 at the first maximum, 0 elsewhere
          int64_t best = 0;
          for (int64_t d = 1; d < D; ++d)
            if (xl[d * inner] > xl[best * inner]) best = d;
          for (int64_t d = 0; d < D; ++d) yl[d * inner] = d == best ? 1.f : 0.f;
          continue;
        }
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t d = 0; d < D; ++d) m = std::max(m, xl[d * inner]);
        if (std::isinf(m) && m < 0) m = 0.f;  // all -inf: avoid (-inf) - (-inf)
        float sum = 0.f;
        for (int64_t d = 0; d < D; ++d) {
          const float e = std::exp(xl[d * inner] - m);
          yl[d * inner] = e;
          sum += e;
        }
        if (mode_ == Mode::log) {
          const float ls = std::log(sum);
          for (int64_t d = 0; d < D; ++d) yl[d * inner] = xl[d * inner] - m - ls;
        } else {
          const float inv = 1.f / sum;
          for (int64_t d = 0; d < D; ++d) yl[d * inner] *= inv;
        }
      }
    });
  }

 private:
  int64_t axis_;
  bool coerce_;
  Mode mode_;
};

Expected<std::unique_ptr<Kernel>> make_softmax_impl(const KernelSetup& s, Mode mode) {
  WEAVE_TRY(kern::require_inputs(s, 1, 1));
  WEAVE_TRY(kern::require_float(s, {0}));
  const bool coerce = s.node.attrs.get_int("coerce_2d", 0) != 0;
  const int64_t axis = s.node.attrs.get_int("axis", coerce ? 1 : -1);
  return std::unique_ptr<Kernel>(std::make_unique<SoftmaxKernel>(axis, coerce, mode));
}

Expected<std::unique_ptr<Kernel>> make_softmax(const KernelSetup& s) {
  return make_softmax_impl(s, Mode::softmax);
}
Expected<std::unique_ptr<Kernel>> make_log_softmax(const KernelSetup& s) {
  return make_softmax_impl(s, Mode::log);
}
Expected<std::unique_ptr<Kernel>> make_hardmax(const KernelSetup& s) {
  return make_softmax_impl(s, Mode::hard);
}

}  // namespace

void register_softmax(KernelRegistry& r) {
  r.add("Softmax", make_softmax);
  r.add("LogSoftmax", make_log_softmax);
  r.add("Hardmax", make_hardmax);
}

}  // namespace weave
