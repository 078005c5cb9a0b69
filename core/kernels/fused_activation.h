// The activation a fusion pass attaches to Conv, ConvTranspose, MatMul and BatchNormalization
// (core/compiler/fuse_conv_epilogue.h): its kinds, its scalar form (the reference kernels') and
// the parsing of its attributes. The fast kernels map it onto their vector forms
// (core/kernels/fast/epilogue.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/common/status.h"
#include "core/kernels/kernel.h"

namespace weave::kern {

// Epilogue a fusion pass may attach to Conv (core/compiler/fuse_conv_epilogue.h): attribute
// "activation", then y * post_mul + post_add.
struct Activation {
  enum Kind {
    none,
    relu,
    clip,
    leaky_relu,
    hard_swish,
    sigmoid,
    hard_sigmoid,
    tanh,
    swish,
    gelu,
    gelu_tanh
  } kind = none;
  float lo = 0.f, hi = 0.f, alpha = 0.01f, beta = 0.f;  // swish: x * sigmoid(alpha * x)
  float post_mul = 1.f, post_add = 0.f;

  [[nodiscard]] float one(float v) const {
    switch (kind) {
      case none:
        return v;
      case relu:
        return std::max(v, 0.f);
      case clip:
        return std::min(std::max(v, lo), hi);
      case leaky_relu:
        return v < 0.f ? alpha * v : v;
      case hard_swish:
        return v * std::min(std::max(v / 6.f + 0.5f, 0.f), 1.f);
      case sigmoid:
        return 1.f / (1.f + std::exp(-v));
      case hard_sigmoid:
        return std::min(std::max(alpha * v + beta, 0.f), 1.f);
      case tanh:
        return std::tanh(v);
      case swish:
        return v / (1.f + std::exp(-alpha * v));
      case gelu:
        return 0.5f * v * (1.f + std::erf(v * 0.70710678118654752f));
      case gelu_tanh:
        return 0.5f * v * (1.f + std::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    }
    return v;
  }
  void apply(float* p, int64_t n) const {
    if (kind == none && post_mul == 1.f && post_add == 0.f) return;
    for (int64_t i = 0; i < n; ++i) p[i] = one(p[i]) * post_mul + post_add;
  }
};

// Parses "activation" ("Relu", "Clip" + activation_min/activation_max, "LeakyRelu" +
// activation_alpha, "HardSwish", "Sigmoid", "HardSigmoid" + activation_alpha/activation_beta,
// "Tanh", "Swish" + activation_alpha, "Gelu" + activation_approximate "none"/"tanh") and
// activation_post_mul / activation_post_add; absent = none.
[[nodiscard]] inline Expected<Activation> parse_activation(const KernelSetup& s) {
  Activation a;
  const Attributes& at = s.node.attrs;
  a.post_mul = at.get_float("activation_post_mul", 1.f);
  a.post_add = at.get_float("activation_post_add", 0.f);
  const std::string name = at.get_string("activation", "");
  if (name.empty()) return a;
  if (name == "Relu") {
    a.kind = Activation::relu;
  } else if (name == "Clip") {
    a.kind = Activation::clip;
    a.lo = at.get_float("activation_min", -INFINITY);
    a.hi = at.get_float("activation_max", INFINITY);
  } else if (name == "LeakyRelu") {
    a.kind = Activation::leaky_relu;
    a.alpha = at.get_float("activation_alpha", 0.01f);
  } else if (name == "HardSwish") {
    a.kind = Activation::hard_swish;
  } else if (name == "Sigmoid") {
    a.kind = Activation::sigmoid;
  } else if (name == "HardSigmoid") {
    a.kind = Activation::hard_sigmoid;
    a.alpha = at.get_float("activation_alpha", 0.2f);
    a.beta = at.get_float("activation_beta", 0.5f);
  } else if (name == "Tanh") {
    a.kind = Activation::tanh;
  } else if (name == "Swish") {
    a.kind = Activation::swish;
    a.alpha = at.get_float("activation_alpha", 1.f);
  } else if (name == "Gelu") {
    const std::string approx = at.get_string("activation_approximate", "none");
    if (approx != "none" && approx != "tanh")
      return make_error(s.label, ": fused Gelu approximate='", approx, "' is not 'none' or 'tanh'");
    a.kind = approx == "tanh" ? Activation::gelu_tanh : Activation::gelu;
  } else {
    return make_error(s.label, ": unsupported fused activation '", name, "'");
  }
  return a;
}

}  // namespace weave::kern
