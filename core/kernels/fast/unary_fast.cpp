// Fast elementwise unary math on float32: the activations (Relu, Sigmoid, Tanh, HardSwish,
// HardSigmoid, LeakyRelu, Swish, Gelu, Softplus, Mish), Exp, Log, Erf, Sqrt, Reciprocal, Clip
// with constant bounds, and Pow by a constant exponent of 2, 0.5 or -1 (LayerNorm's variance,
// a norm's root, a reciprocal as exported). One vector routine per kind (Ops::activate); any other
// dtype, exponent or a Clip with computed bounds declines to the reference kernel.
#include <cmath>
#include <optional>
#include <span>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/kernel_util.h"

namespace weave::fast {
namespace {

class FastUnary final : public Kernel {
 public:
  FastUnary(const Ops& ops, Activation act) : ops_(ops), act_(act) {
    // Work per element (parallel.h): the memory traffic, twice over for the kinds built on exp
    // or a division.
    const bool cheap = act.kind <= Activation::hard_swish || act.kind == Activation::hard_sigmoid ||
                       act.kind == Activation::square;
    cost_ = cheap ? kElementWork : 2 * kElementWork;
  }

  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs.empty() || !ctx.inputs[0].present()) return make_error(ctx.label, ": input 0 is missing");
    if (ctx.inputs[0].dtype != DType::float32)
      return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[0].dtype),
                        " reached the fast float32 kernel");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }

  void run(const RunContext& ctx) const override {
    const float* x = ctx.inputs[0].as<float>();
    float* y = kern::out_f32(ctx, 0);
    const int64_t n = ctx.outputs[0].numel();
    ctx.parallel.for_range(n, grain_for(ctx.parallel, n, static_cast<double>(n) * cost_, kern::kGrain / 4),
                           [&](int64_t b, int64_t e) { ops_.activate(x + b, y + b, e - b, act_); });
  }

  // Element i of the output is computed from element i of input 0 alone.
  [[nodiscard]] uint32_t in_place() const override { return 1u; }

 private:
  const Ops& ops_;
  Activation act_;
  double cost_ = kElementWork;
};

// The one number of constant input i (float32, or an integer exponent), if it has one.
std::optional<double> scalar_constant(const KernelSetup& s, std::size_t i) {
  const ConstTensorView* c = kern::constant(s, i);
  if (c == nullptr || c->numel() != 1) return std::nullopt;
  switch (c->dtype) {
    case DType::float32:
      return *c->as<float>();
    case DType::int64:
      return static_cast<double>(*c->as<int64_t>());
    case DType::int32:
      return *c->as<int32_t>();
    default:
      return std::nullopt;
  }
}

// The kind this node maps to, or nullopt when the reference kernel should run it.
std::optional<Activation> kind_of(const KernelSetup& s) {
  using A = Activation;
  const Attributes& at = s.node.attrs;
  const std::string& op = s.node.op;
  A a;
  static const std::pair<const char*, A::Kind> plain[] = {
      {"Relu", A::relu},
      {"Sigmoid", A::sigmoid},
      {"Tanh", A::tanh},
      {"HardSwish", A::hard_swish},
      {"Exp", A::exp},
      {"Log", A::log},
      {"Erf", A::erf},
      {"Sqrt", A::sqrt},
      {"Reciprocal", A::reciprocal},
      {"Softplus", A::softplus},
      {"Mish", A::mish},
  };
  for (const auto& [name, kind] : plain)
    if (op == name) {
      a.kind = kind;
      return s.node.inputs.size() == 1 ? std::optional<A>(a) : std::nullopt;
    }
  if (op == "LeakyRelu") {
    a.kind = A::leaky_relu, a.p0 = at.get_float("alpha", 0.01f);
  } else if (op == "HardSigmoid") {
    a.kind = A::hard_sigmoid, a.p0 = at.get_float("alpha", 0.2f), a.p1 = at.get_float("beta", 0.5f);
  } else if (op == "Swish") {
    a.kind = A::swish, a.p0 = at.get_float("alpha", 1.f);
  } else if (op == "Gelu") {
    const std::string approx = at.get_string("approximate", "none");
    if (approx != "none" && approx != "tanh") return std::nullopt;  // the reference names the error
    a.kind = approx == "tanh" ? A::gelu_tanh : A::gelu;
  } else if (op == "Clip") {
    // Opset 11+: bounds as optional inputs, which must be constants here.
    a.kind = A::clip, a.p0 = -INFINITY, a.p1 = INFINITY;
    if (s.opset < 11) {
      a.p0 = at.get_float("min", -INFINITY), a.p1 = at.get_float("max", INFINITY);
    } else {
      for (std::size_t i = 1; i < s.node.inputs.size(); ++i) {
        if (s.node.inputs[i] == kNoValue) continue;
        const std::optional<double> v = scalar_constant(s, i);
        const Value* info = kern::input_info(s, i);
        if (!v || info == nullptr || info->dtype != DType::float32) return std::nullopt;
        (i == 1 ? a.p0 : a.p1) = static_cast<float>(*v);
      }
    }
    if (std::isnan(a.p0) || std::isnan(a.p1)) return std::nullopt;
    return a;
  } else if (op == "Pow") {
    // Pow(x, c) broadcasts a one-element c of higher rank; only a c of rank <= x's keeps x's dims
    // (a rank-0 c always does, whatever x's rank).
    const Value* x = kern::input_info(s, 0);
    const Value* c = kern::input_info(s, 1);
    const std::optional<double> e = s.node.inputs.size() == 2 ? scalar_constant(s, 1) : std::nullopt;
    if (!e || x == nullptr || c == nullptr || !c->rank_known ||
        (!c->shape.empty() && (!x->rank_known || c->shape.size() > x->shape.size())))
      return std::nullopt;
    if (*e == 2.0)
      a.kind = A::square;
    else if (*e == 0.5)
      a.kind = A::sqrt;
    else if (*e == -1.0)
      a.kind = A::reciprocal;
    else if (*e == 1.0)
      a.kind = A::none;
    else
      return std::nullopt;
    return a;
  } else {
    return std::nullopt;
  }
  return s.node.inputs.size() == 1 ? std::optional<A>(a) : std::nullopt;
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_fast_unary(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  const Value* x = kern::input_info(s, 0);
  if (ops == nullptr || x == nullptr || x->dtype != DType::float32 || s.node.outputs.size() != 1)
    return std::unique_ptr<Kernel>();
  const std::optional<Activation> a = kind_of(s);
  if (!a) return std::unique_ptr<Kernel>();
  s.float_inputs |= 1u;
  return std::unique_ptr<Kernel>(std::make_unique<FastUnary>(*ops, *a));
}

std::span<const char* const> fast_unary_ops() {
  static const char* const ops[] = {"Relu",  "Sigmoid", "Tanh",       "HardSwish", "HardSigmoid", "LeakyRelu",
                                    "Swish", "Gelu",    "Softplus",   "Mish",      "Exp",         "Log",
                                    "Erf",   "Sqrt",    "Reciprocal", "Clip",      "Pow"};
  return ops;
}

}  // namespace weave::fast
