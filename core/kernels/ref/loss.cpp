// The losses NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (one kernel; float32 and
// float64), as ONNX defines them:
//   input [N, C, d1..dk] (log-probabilities, or scores for SCE), target [N, d1..dk] int32/int64,
//   optional weight [C]; loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]], 0 where
//   target == ignore_index; reduction none (loss as is), sum, or mean (sum / sum of the weights
//   applied, i.e. / the number of counted elements without weights).
// SoftmaxCrossEntropyLoss applies log-softmax over axis 1 first and may output it (log_prob).
// A target outside [0, C) that is not ignore_index is clamped into range, so no input value reads
// out of bounds.
#include <cmath>
#include <limits>

#include "core/common/buffer.h"
#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;

enum class Reduction { none, sum, mean };

class LossKernel final : public Kernel {
 public:
  LossKernel(bool softmax, Reduction reduction, bool has_ignore, int64_t ignore_index)
      : softmax_(softmax), reduction_(reduction), has_ignore_(has_ignore), ignore_(ignore_index) {}

  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() < 2 || !in[0].present() || !in[1].present())
      return make_error(ctx.label, ": needs the input and the target");
    const DType t = in[0].dtype;
    if (t != DType::float32 && t != DType::float64)
      return make_error(ctx.label, ": dtype ", dtype_name(t), " is not supported (float32, float64)");
    if (in[1].dtype != DType::int64 && in[1].dtype != DType::int32)
      return make_error(ctx.label, ": target must be int32 or int64, got ", dtype_name(in[1].dtype));
    const Dims& x = in[0].dims;
    const Dims& y = in[1].dims;
    bool ok = x.rank() >= 2 && y.rank() == x.rank() - 1 && y[0] == x[0];
    for (int i = 2; ok && i < x.rank(); ++i) ok = y[i - 1] == x[i];
    if (!ok)
      return make_error(ctx.label, ": target ", kern::dims_str(y), " does not fit input ", kern::dims_str(x),
                        " (expected [N, d1..dk] for [N, C, d1..dk])");
    if (kern::has_input(in, 2)) {
      if (in[2].dtype != t || in[2].dims.rank() != 1 || in[2].dims[0] != x[1])
        return make_error(ctx.label, ": weight must be ", dtype_name(t), "[", x[1], "], got ",
                          dtype_name(in[2].dtype), "[", kern::dims_str(in[2].dims), "]");
    }
    ctx.outputs[0].dtype = t;
    ctx.outputs[0].dims = reduction_ == Reduction::none ? y : Dims{};
    if (ctx.outputs.size() > 1) {
      ctx.outputs[1].dtype = t;
      ctx.outputs[1].dims = x;
    }
    // Per-element losses and weights before the reduction.
    // The doubles start 8-byte aligned after the log-softmax values (an odd count of floats).
    ctx.workspace =
        softmax_ ? align_up(static_cast<std::size_t>(x.numel()) * dtype_size(t), sizeof(double)) : 0;
    ctx.workspace += 2 * static_cast<std::size_t>(y.numel()) * sizeof(double);
    return {};
  }

  void run(const RunContext& ctx) const override {
    if (ctx.inputs[0].dtype == DType::float64)
      run_typed<double>(ctx);
    else
      run_typed<float>(ctx);
  }

 private:
  template <class T>
  void run_typed(const RunContext& ctx) const {
    const ConstTensorView& xin = ctx.inputs[0];
    const ConstTensorView& tgt = ctx.inputs[1];
    const bool weighted = kern::has_input(ctx.inputs, 2);
    const Dims& x = xin.dims;
    const int64_t N = x[0], C = x[1];
    int64_t D = 1;
    for (int i = 2; i < x.rank(); ++i) D *= x[i];
    const int64_t count = tgt.numel();
    std::byte* ws = ctx.workspace.data();
    const T* input = xin.as<T>();
    if (softmax_) {
      // log-softmax over axis 1 into the log_prob output, or into the workspace.
      T* lp = ctx.outputs.size() > 1 && ctx.outputs[1].present() ? ctx.outputs[1].as<T>()
                                                                 : reinterpret_cast<T*>(ws);
      ws += align_up(static_cast<std::size_t>(x.numel()) * sizeof(T), sizeof(double));
      log_softmax(input, lp, N, C, D);
      input = lp;
    }
    auto* loss = reinterpret_cast<double*>(ws);
    double* weight = loss + count;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d) {
        const int64_t i = n * D + d;
        const int64_t c = kern::int_at(tgt, i);
        if (has_ignore_ && c == ignore_) {
          loss[i] = 0;
          weight[i] = 0;
          continue;
        }
        const int64_t cc = std::clamp<int64_t>(c, 0, C > 0 ? C - 1 : 0);
        weight[i] = weighted ? static_cast<double>(ctx.inputs[2].as<T>()[cc]) : 1.0;
        loss[i] = C > 0 ? -static_cast<double>(input[(n * C + cc) * D + d]) * weight[i] : 0.0;
      }
    T* out = ctx.outputs[0].as<T>();
    if (reduction_ == Reduction::none) {
      for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(loss[i]);
      return;
    }
    double sum = 0, wsum = 0;
    for (int64_t i = 0; i < count; ++i) {
      sum += loss[i];
      wsum += weight[i];
    }
    *out = static_cast<T>(reduction_ == Reduction::sum ? sum : sum / wsum);
  }

  template <class T>
  static void log_softmax(const T* x, T* y, int64_t N, int64_t C, int64_t D) {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d) {
        const T* xl = x + n * C * D + d;
        T* yl = y + n * C * D + d;
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t c = 0; c < C; ++c) m = std::max(m, xl[c * D]);
        if (std::isinf(m)) m = 0;
        double sum = 0;
        for (int64_t c = 0; c < C; ++c) sum += std::exp(static_cast<double>(xl[c * D] - m));
        const T ls = static_cast<T>(std::log(sum));
        for (int64_t c = 0; c < C; ++c) yl[c * D] = xl[c * D] - m - ls;
      }
  }

  bool softmax_;
  Reduction reduction_;
  bool has_ignore_;
  int64_t ignore_;
};

Expected<std::unique_ptr<Kernel>> make_loss(const KernelSetup& s, bool softmax) {
  const std::string r = s.node.attrs.get_string("reduction", "mean");
  Reduction red = Reduction::mean;
  if (r == "none")
    red = Reduction::none;
  else if (r == "sum")
    red = Reduction::sum;
  else if (r != "mean")
    return make_error("unsupported attribute reduction='", r, "' (none, sum, mean)");
  if (s.node.inputs.size() < 2 || s.node.inputs.size() > 3)
    return make_error(s.node.op, " takes 2 or 3 inputs, got ", s.node.inputs.size());
  if (!softmax && s.node.outputs.size() != 1) return make_error(s.node.op, " has one output");
  return make_kernel<LossKernel>(softmax, red, s.node.attrs.has("ignore_index"),
                                 s.node.attrs.get_int("ignore_index", 0));
}

}  // namespace

void register_loss(KernelRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", [](const KernelSetup& s) { return make_loss(s, false); });
  r.add("SoftmaxCrossEntropyLoss", [](const KernelSetup& s) { return make_loss(s, true); });
}

}  // namespace weave
