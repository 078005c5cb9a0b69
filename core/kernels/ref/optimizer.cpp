// The training optimizers of the ai.onnx.preview.training domain (one kernel): Adagrad, Momentum
// (and Nesterov momentum) and Adam, one update step of n tensors at a time. Inputs are R (learning
// rate) and T (update count), scalars, then n X, n G (gradients) and n states per kind; outputs
// the new X and the new states. Computed in double, float32 or float64 tensors.
#include <cmath>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::load;
using kern::make_kernel;
using kern::scalar_double;
using kern::store;

enum class Optimizer { adagrad, momentum, nesterov, adam };

struct OptimizerAttrs {
  double decay_factor = 0, epsilon = 1e-6, norm = 0, norm_post = 0, alpha = 0.9, beta = 0.999;
};

class OptimizerKernel final : public Kernel {
 public:
  OptimizerKernel(Optimizer kind, OptimizerAttrs a) : kind_(kind), a_(a) {}

  // States per tensor: Adagrad H; Momentum V; Adam V and H.
  [[nodiscard]] std::size_t states() const { return kind_ == Optimizer::adam ? 2 : 1; }

  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    const std::size_t groups = 2 + states();  // X, G, states
    if (in.size() < 2 + groups || (in.size() - 2) % groups != 0)
      return make_error(ctx.label, ": takes R, T and ", groups, " inputs per tensor, got ", in.size());
    const std::size_t n = (in.size() - 2) / groups;
    if (ctx.outputs.size() != n * (1 + states()))
      return make_error(ctx.label, ": makes ", n * (1 + states()), " outputs for ", n, " tensors, has ",
                        ctx.outputs.size());
    for (std::size_t i = 0; i < 2; ++i)
      if (!has_input(in, i) || in[i].numel() != 1)
        return make_error(ctx.label, ": input ", i, " (R, T) must be a scalar");
    if (in[0].dtype != DType::float32 && in[0].dtype != DType::float64)
      return make_error(ctx.label, ": R must be float32 or float64");
    if (in[1].dtype != DType::int64) return make_error(ctx.label, ": T must be int64");
    for (std::size_t t = 0; t < n; ++t) {
      const ConstTensorView& x = in[2 + t];
      if (x.dtype != DType::float32 && x.dtype != DType::float64)
        return make_error(ctx.label, ": tensor ", t, " must be float32 or float64, got ",
                          dtype_name(x.dtype));
      for (std::size_t g = 1; g < groups; ++g) {
        const ConstTensorView& o = in[2 + g * n + t];
        if (o.dtype != x.dtype || !(o.dims == x.dims))
          return make_error(ctx.label, ": input ", 2 + g * n + t, " ", dims_str(o.dims), " differs from X ",
                            dims_str(x.dims));
      }
      for (std::size_t k = 0; k <= states(); ++k) {
        ctx.outputs[k * n + t].dtype = x.dtype;
        ctx.outputs[k * n + t].dims = x.dims;
      }
    }
    return {};
  }

  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const std::size_t n = (in.size() - 2) / (2 + states());
    const double r = scalar_double(in[0]);
    const auto T = static_cast<double>(*in[1].as<int64_t>());
    for (std::size_t t = 0; t < n; ++t) {
      const ConstTensorView& x = in[2 + t];
      const ConstTensorView& g = in[2 + n + t];
      const ConstTensorView& s1 = in[2 + 2 * n + t];
      const TensorView& x_new = ctx.outputs[t];
      const TensorView& s1_new = ctx.outputs[n + t];
      for (int64_t i = 0; i < x.numel(); ++i) {
        const double xv = load(x, i), gr = a_.norm * xv + load(g, i);
        switch (kind_) {
          case Optimizer::adagrad: {
            const double rate = r / (1 + T * a_.decay_factor);
            const double h = load(s1, i) + gr * gr;
            store(s1_new, i, h);
            store(x_new, i, xv - rate * gr / (std::sqrt(h) + a_.epsilon));
            break;
          }
          case Optimizer::momentum:
          case Optimizer::nesterov: {
            const double v = a_.alpha * load(s1, i) + (T > 0 ? a_.beta : 1.0) * gr;
            store(s1_new, i, v);
            store(x_new, i, kind_ == Optimizer::momentum ? xv - r * v : xv - r * (gr + a_.alpha * v));
            break;
          }
          case Optimizer::adam: {
            const ConstTensorView& h_in = in[2 + 3 * n + t];
            const double v = a_.alpha * load(s1, i) + (1 - a_.alpha) * gr;
            const double h = a_.beta * load(h_in, i) + (1 - a_.beta) * gr * gr;
            const double rate =
                T > 0 ? r * std::sqrt(1 - std::pow(a_.beta, T)) / (1 - std::pow(a_.alpha, T)) : r;
            store(s1_new, i, v);
            store(ctx.outputs[2 * n + t], i, h);
            store(x_new, i, (1 - a_.norm_post) * (xv - rate * v / (std::sqrt(h) + a_.epsilon)));
            break;
          }
        }
      }
    }
  }

 private:
  Optimizer kind_;
  OptimizerAttrs a_;
};

Expected<std::unique_ptr<Kernel>> make_optimizer(const KernelSetup& s, Optimizer kind) {
  const auto& at = s.node.attrs;
  OptimizerAttrs a;
  a.norm = at.get_float("norm_coefficient", 0.f);
  switch (kind) {
    case Optimizer::adagrad:
      a.decay_factor = at.get_float("decay_factor", 0.f);
      a.epsilon = at.get_float("epsilon", 1e-6f);
      break;
    case Optimizer::momentum:
    case Optimizer::nesterov: {
      if (!at.has("alpha") || !at.has("beta") || !at.has("mode") || !at.has("norm_coefficient"))
        return make_error("Momentum needs the alpha, beta, mode and norm_coefficient attributes");
      const std::string mode = at.get_string("mode");
      if (mode != "standard" && mode != "nesterov")
        return make_error("unsupported attribute mode='", mode, "'");
      kind = mode == "nesterov" ? Optimizer::nesterov : Optimizer::momentum;
      a.alpha = at.get_float("alpha", 0.f);
      a.beta = at.get_float("beta", 0.f);
      break;
    }
    case Optimizer::adam:
      a.alpha = at.get_float("alpha", 0.9f);
      a.beta = at.get_float("beta", 0.999f);
      a.epsilon = at.get_float("epsilon", 1e-6f);
      a.norm_post = at.get_float("norm_coefficient_post", 0.f);
      break;
  }
  return make_kernel<OptimizerKernel>(kind, a);
}

}  // namespace

void register_optimizer(KernelRegistry& r) {
  r.add("Adagrad", [](const KernelSetup& s) { return make_optimizer(s, Optimizer::adagrad); });
  r.add("Momentum", [](const KernelSetup& s) { return make_optimizer(s, Optimizer::momentum); });
  r.add("Adam", [](const KernelSetup& s) { return make_optimizer(s, Optimizer::adam); });
}

}  // namespace weave
