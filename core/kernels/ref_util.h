// Small helpers shared by the reference kernels (float32 checks, optional inputs/outputs,
// fused activations). Header-only; not part of the kernel interface.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/kernels/kernel.h"

namespace weave::ref {

// Static info of input i, or nullptr when omitted / out of range.
[[nodiscard]] inline const Value* input_info(const KernelSetup& s, std::size_t i) {
  return i < s.inputs.size() ? s.inputs[i] : nullptr;
}

// Constant bytes of input i (a param) or nullptr.
[[nodiscard]] inline const ConstTensorView* constant(const KernelSetup& s, std::size_t i) {
  if (i >= s.constants.size() || s.constants[i].data == nullptr) return nullptr;
  return &s.constants[i];
}

[[nodiscard]] inline bool has_output(const KernelSetup& s, std::size_t i) {
  return i < s.node.outputs.size() && s.node.outputs[i] != kNoValue;
}

// Every present input among `which` must be float32 (the reference kernels are float-only).
[[nodiscard]] inline Status require_float(const KernelSetup& s, std::initializer_list<std::size_t> which) {
  for (std::size_t i : which) {
    const Value* v = input_info(s, i);
    if (v && v->dtype != DType::float32 && v->dtype != DType::undefined)
      return make_error(s.label, ": input ", i, " has dtype ", dtype_name(v->dtype), "; the reference ",
                        s.node.op, " kernel supports float32 only");
  }
  return {};
}

[[nodiscard]] inline Status require_inputs(const KernelSetup& s, std::size_t min, std::size_t max) {
  if (s.node.inputs.size() < min || s.node.inputs.size() > max)
    return make_error(s.label, ": ", s.node.op, " takes ", min, "..", max, " inputs, got ",
                      s.node.inputs.size());
  for (std::size_t i = 0; i < min; ++i)
    if (s.node.inputs[i] == kNoValue) return make_error(s.label, ": required input ", i, " is missing");
  return {};
}

[[nodiscard]] inline bool present(const ShapeContext& c, std::size_t i) {
  return i < c.inputs.size() && c.inputs[i].present();
}
[[nodiscard]] inline bool present(const RunContext& c, std::size_t i) {
  return i < c.inputs.size() && c.inputs[i].present() && c.inputs[i].data != nullptr;
}
[[nodiscard]] inline float* out_f32(const RunContext& c, std::size_t i) {
  return i < c.outputs.size() ? static_cast<float*>(c.outputs[i].data) : nullptr;
}

[[nodiscard]] inline std::string dims_str(const Dims& d) {
  std::string s(1, '[');
  s += shape_str(d.span());
  s += ']';
  return s;
}

// Activation a fusion pass may attach to Conv (attribute "activation").
struct Activation {
  enum Kind { none, relu, clip, leaky_relu, hard_swish, sigmoid } kind = none;
  float lo = 0.f, hi = 0.f, alpha = 0.01f;

  void apply(float* p, int64_t n) const {
    switch (kind) {
      case none:
        break;
      case relu:
        for (int64_t i = 0; i < n; ++i) p[i] = std::max(p[i], 0.f);
        break;
      case clip:
        for (int64_t i = 0; i < n; ++i) p[i] = std::min(std::max(p[i], lo), hi);
        break;
      case leaky_relu:
        for (int64_t i = 0; i < n; ++i) p[i] = p[i] < 0.f ? alpha * p[i] : p[i];
        break;
      case hard_swish:
        for (int64_t i = 0; i < n; ++i) p[i] = p[i] * std::min(std::max(p[i] / 6.f + 0.5f, 0.f), 1.f);
        break;
      case sigmoid:
        for (int64_t i = 0; i < n; ++i) p[i] = 1.f / (1.f + std::exp(-p[i]));
        break;
    }
  }
};

// Parses "activation" ("Relu", "Clip" + activation_min/activation_max, "LeakyRelu" +
// activation_alpha, "HardSwish", "Sigmoid"); absent = none.
[[nodiscard]] inline Expected<Activation> parse_activation(const KernelSetup& s) {
  Activation a;
  const std::string name = s.node.attrs.get_string("activation", "");
  if (name.empty()) return a;
  if (name == "Relu") {
    a.kind = Activation::relu;
  } else if (name == "Clip") {
    a.kind = Activation::clip;
    a.lo = s.node.attrs.get_float("activation_min", -INFINITY);
    a.hi = s.node.attrs.get_float("activation_max", INFINITY);
  } else if (name == "LeakyRelu") {
    a.kind = Activation::leaky_relu;
    a.alpha = s.node.attrs.get_float("activation_alpha", 0.01f);
  } else if (name == "HardSwish") {
    a.kind = Activation::hard_swish;
  } else if (name == "Sigmoid") {
    a.kind = Activation::sigmoid;
  } else {
    return make_error(s.label, ": unsupported fused activation '", name, "'");
  }
  return a;
}

}  // namespace weave::ref
