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
    if (i < 32) s.float_inputs |= 1u << i;
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

// The reference kernels are channels-first only; a node the layout pass marked NHWC
// (core/compiler/layout_nhwc.h) belongs to a fast kernel that declined it.
[[nodiscard]] inline Status require_nchw(const KernelSetup& s) {
  if (s.node.attrs.get_string("weave_layout", "NCHW") != "NCHW")
    return make_error(s.label, ": ", s.node.op, " in layout ", s.node.attrs.get_string("weave_layout"),
                      " needs the fast CPU path, which did not accept this node");
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

// Epilogue a fusion pass may attach to Conv (core/compiler/fuse_conv_epilogue.h): attribute
// "activation", then y * post_mul + post_add.
struct Activation {
  enum Kind { none, relu, clip, leaky_relu, hard_swish, sigmoid, hard_sigmoid, tanh } kind = none;
  float lo = 0.f, hi = 0.f, alpha = 0.01f, beta = 0.f;
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
// "Tanh") and activation_post_mul / activation_post_add; absent = none.
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
  } else {
    return make_error(s.label, ": unsupported fused activation '", name, "'");
  }
  return a;
}

}  // namespace weave::ref
