// The activations with attributes: LeakyRelu, HardSigmoid, Elu, Selu, Gelu, Swish, ThresholdedRelu,
// Shrink and Celu, on the unary kernel of elementwise.h (UnaryKernel, float32).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/kernels/ref/elementwise.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::kF;
using kern::make_unary_with;
using kern::UParams;

struct LeakyRelu {
  static float f(float x, const UParams& p) { return x < 0.f ? x * p.alpha : x; }
};
struct HardSigmoid {
  static float f(float x, const UParams& p) { return std::clamp(p.alpha * x + p.beta, 0.f, 1.f); }
};
struct Elu {
  static float f(float x, const UParams& p) { return x < 0.f ? p.alpha * (std::exp(x) - 1.f) : x; }
};
struct Selu {
  static float f(float x, const UParams& p) {
    return p.gamma * (x <= 0.f ? p.alpha * (std::exp(x) - 1.f) : x);
  }
};
struct Gelu {
  static float f(float x, const UParams& p) {
    if (p.gamma != 0.f) {                       // approximate="tanh"
      constexpr float k = 0.7978845608028654f;  // sqrt(2/pi)
      return 0.5f * x * (1.f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
    return 0.5f * x * (1.f + std::erf(x * 0.7071067811865476f));
  }
};
struct Swish {  // x * sigmoid(alpha * x)
  static float f(float x, const UParams& p) { return x / (1.f + std::exp(-p.alpha * x)); }
};
struct ThresholdedRelu {
  static float f(float x, const UParams& p) { return x > p.alpha ? x : 0.f; }
};
struct Shrink {  // alpha = lambd, beta = bias
  static float f(float x, const UParams& p) {
    return x < -p.alpha ? x + p.beta : x > p.alpha ? x - p.beta : 0.f;
  }
};
struct Celu {
  static float f(float x, const UParams& p) {
    return std::max(0.f, x) + std::min(0.f, p.alpha * (std::exp(x / p.alpha) - 1.f));
  }
};

Expected<std::unique_ptr<Kernel>> make_leaky_relu(const KernelSetup& s) {
  return make_unary_with<LeakyRelu, kF>({s.node.attrs.get_float("alpha", 0.01f)});
}
Expected<std::unique_ptr<Kernel>> make_hard_sigmoid(const KernelSetup& s) {
  return make_unary_with<HardSigmoid, kF>(
      {s.node.attrs.get_float("alpha", 0.2f), s.node.attrs.get_float("beta", 0.5f)});
}
Expected<std::unique_ptr<Kernel>> make_elu(const KernelSetup& s) {
  return make_unary_with<Elu, kF>({s.node.attrs.get_float("alpha", 1.f)});
}
Expected<std::unique_ptr<Kernel>> make_selu(const KernelSetup& s) {
  return make_unary_with<Selu, kF>({s.node.attrs.get_float("alpha", 1.67326319217681884765625f), 0.f,
                                    s.node.attrs.get_float("gamma", 1.05070102214813232421875f)});
}
Expected<std::unique_ptr<Kernel>> make_swish(const KernelSetup& s) {
  return make_unary_with<Swish, kF>({s.node.attrs.get_float("alpha", 1.f)});
}
Expected<std::unique_ptr<Kernel>> make_thresholded_relu(const KernelSetup& s) {
  return make_unary_with<ThresholdedRelu, kF>({s.node.attrs.get_float("alpha", 1.f)});
}
Expected<std::unique_ptr<Kernel>> make_shrink(const KernelSetup& s) {
  return make_unary_with<Shrink, kF>(
      {s.node.attrs.get_float("lambd", 0.5f), s.node.attrs.get_float("bias", 0.f)});
}
Expected<std::unique_ptr<Kernel>> make_celu(const KernelSetup& s) {
  const float alpha = s.node.attrs.get_float("alpha", 1.f);
  if (alpha == 0.f) return make_error("Celu alpha must not be 0");
  return make_unary_with<Celu, kF>({alpha});
}
Expected<std::unique_ptr<Kernel>> make_gelu(const KernelSetup& s) {
  const std::string approx = s.node.attrs.get_string("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return make_error("Gelu approximate='", approx, "' is not supported");
  return make_unary_with<Gelu, kF>({0.f, 0.f, approx == "tanh" ? 1.f : 0.f});
}

}  // namespace

void register_activation(KernelRegistry& r) {
  r.add("LeakyRelu", &make_leaky_relu);
  r.add("HardSigmoid", &make_hard_sigmoid);
  r.add("Elu", &make_elu);
  r.add("Selu", &make_selu);
  r.add("Gelu", &make_gelu);
  r.add("Swish", &make_swish);
  r.add("ThresholdedRelu", &make_thresholded_relu);
  r.add("Shrink", &make_shrink);
  r.add("Celu", &make_celu);
}

}  // namespace weave
