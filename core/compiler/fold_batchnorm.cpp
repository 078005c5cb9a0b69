#include "core/compiler/fold_batchnorm.h"

#include <cmath>
#include <cstring>

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

namespace {

// A float32 param of exactly `count` elements, or nullptr.
const float* float_param(const Graph& g, int32_t value, int64_t count) {
  if (!is_param(g, value) || g.values[value].dtype != DType::float32) return nullptr;
  ConstTensorView t = param_view(g, value);
  if (t.numel() != count) return nullptr;
  return t.as<float>();
}

int32_t add_float_param(Graph& g, const Shape& shape, const std::vector<float>& data) {
  AlignedBuffer buf(data.size() * sizeof(float));
  std::memcpy(buf.data(), data.data(), buf.size());
  return g.add_param(DType::float32, shape, SharedBytes::from(std::move(buf)));
}

// Folds BN node `bn_id` into conv node `conv_id` if all conditions hold; returns true if done.
bool try_fold(Graph& g, int32_t conv_id, int32_t bn_id) {
  Node& conv = g.nodes[conv_id];
  const Node& bn = g.nodes[bn_id];
  const bool transposed = conv.op == "ConvTranspose";
  if (conv.inputs.size() < 2 || conv.outputs.size() != 1) return false;
  if (bn.inputs.size() != 5 || bn.attrs.get_int("training_mode", 0) != 0 ||
      bn.attrs.get_int("spatial", 1) != 1)
    return false;
  const int32_t w_id = conv.inputs[1];
  if (!is_param(g, w_id) || g.values[w_id].dtype != DType::float32) return false;
  const Shape w_shape = g.values[w_id].shape;
  if (w_shape.size() < 3) return false;
  const int64_t group = conv.attrs.get_int("group", 1);
  if (group < 1) return false;
  // Output channels M; W is [M, C/group, k...] for Conv and [C, M/group, k...] for ConvTranspose.
  const int64_t m = transposed ? w_shape[1] * group : w_shape[0];
  if (transposed && w_shape[0] % group != 0) return false;
  const int64_t w_numel = shape_numel(w_shape);
  if (m <= 0 || w_numel <= 0) return false;
  const float* w = float_param(g, w_id, w_numel);
  const float* b = nullptr;
  if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue) {
    b = float_param(g, conv.inputs[2], m);
    if (!b) return false;
  }
  const float* scale = float_param(g, bn.inputs[1], m);
  const float* beta = float_param(g, bn.inputs[2], m);
  const float* mean = float_param(g, bn.inputs[3], m);
  const float* var = float_param(g, bn.inputs[4], m);
  if (!w || !scale || !beta || !mean || !var) return false;
  const double eps = bn.attrs.get_float("epsilon", 1e-5f);

  std::vector<double> a(m);
  for (int64_t c = 0; c < m; ++c) {
    const double denom = std::sqrt(static_cast<double>(var[c]) + eps);
    if (!(denom > 0)) return false;  // negative variance or NaN: leave it to the kernel
    a[c] = scale[c] / denom;
  }
  std::vector<float> new_w(w_numel);
  if (!transposed) {
    const int64_t per = w_numel / m;
    for (int64_t c = 0; c < m; ++c)
      for (int64_t k = 0; k < per; ++k) new_w[c * per + k] = static_cast<float>(w[c * per + k] * a[c]);
  } else {
    const int64_t cin = w_shape[0], mg = w_shape[1], per = w_numel / (cin * mg), cin_g = cin / group;
    for (int64_t ci = 0; ci < cin; ++ci)
      for (int64_t j = 0; j < mg; ++j) {
        const double f = a[(ci / cin_g) * mg + j];
        const int64_t base = (ci * mg + j) * per;
        for (int64_t k = 0; k < per; ++k) new_w[base + k] = static_cast<float>(w[base + k] * f);
      }
  }
  std::vector<float> new_b(m);
  for (int64_t c = 0; c < m; ++c)
    new_b[c] = static_cast<float>(((b ? b[c] : 0.0) - mean[c]) * a[c] + beta[c]);

  const int32_t bn_out = bn.outputs[0];
  const int32_t w2 = add_float_param(g, w_shape, new_w);  // grows g.values only
  const int32_t b2 = add_float_param(g, Shape{m}, new_b);
  Node& c2 = g.nodes[conv_id];
  c2.inputs[1] = w2;
  if (c2.inputs.size() < 3) c2.inputs.resize(3, kNoValue);
  c2.inputs[2] = b2;
  c2.outputs[0] = bn_out;
  return true;
}

}  // namespace

Status fold_batchnorm(Graph& g) {
  const std::vector<int> uses = use_counts(g);
  const std::vector<int32_t> prod = producers(g);
  std::vector<bool> dead(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& bn = g.nodes[i];
    // One that took an activation (fuse_conv_epilogue) would lose it in the convolution.
    if (bn.op != "BatchNormalization" || bn.inputs.empty() || bn.outputs.empty() ||
        bn.outputs[0] == kNoValue || bn.attrs.has("activation"))
      continue;
    bool extra_outputs = false;
    for (std::size_t k = 1; k < bn.outputs.size(); ++k)
      extra_outputs = extra_outputs || (bn.outputs[k] != kNoValue && uses[bn.outputs[k]] > 0);
    const int32_t x = bn.inputs[0];
    if (extra_outputs || x < 0 || prod[x] < 0 || uses[x] != 1 || is_graph_output(g, x)) continue;
    const int32_t conv = prod[x];
    if (g.nodes[conv].op != "Conv" && g.nodes[conv].op != "ConvTranspose") continue;
    if (try_fold(g, conv, static_cast<int32_t>(i))) {
      dead[i] = true;
      g.nodes[i].inputs.clear();
      g.nodes[i].outputs.clear();
    }
  }
  g.compact(dead);
  return {};
}

}  // namespace weave
