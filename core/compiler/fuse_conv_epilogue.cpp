#include "core/compiler/fuse_conv_epilogue.h"

#include <cmath>

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

namespace {

bool scalar_const(const Graph& g, int32_t v, float& out) {
  if (!is_param(g, v) || g.values[v].dtype != DType::float32 || shape_numel(g.values[v].shape) != 1)
    return false;
  out = *param_view(g, v).as<float>();
  return std::isfinite(out);
}

// Same rank and, per dim, equal static sizes or both dynamic.
bool same_shape(const Value& a, const Value& b) {
  if (!a.rank_known || !b.rank_known || a.shape.size() != b.shape.size()) return false;
  for (std::size_t i = 0; i < a.shape.size(); ++i) {
    const bool da = a.shape[i] < 0, db = b.shape[i] < 0;
    if (da != db || (!da && a.shape[i] != b.shape[i])) return false;
  }
  return true;
}

// Sets the activation attributes of `conv` from activation node `act`; false if unsupported.
bool set_activation(const Graph& g, Node& conv, const Node& act) {
  Attributes& a = conv.attrs;
  if (act.op == "Relu" || act.op == "HardSwish" || act.op == "Sigmoid" || act.op == "Tanh") {
    a.set("activation", act.op);
    return true;
  }
  if (act.op == "Swish") {
    a.set("activation", act.op);
    a.set("activation_alpha", act.attrs.get_float("alpha", 1.f));
    return true;
  }
  if (act.op == "Gelu") {
    const std::string approx = act.attrs.get_string("approximate", "none");
    if (approx != "none" && approx != "tanh") return false;
    a.set("activation", act.op);
    a.set("activation_approximate", approx);
    return true;
  }
  if (act.op == "LeakyRelu") {
    a.set("activation", act.op);
    a.set("activation_alpha", act.attrs.get_float("alpha", 0.01f));
    return true;
  }
  if (act.op == "HardSigmoid") {
    a.set("activation", act.op);
    a.set("activation_alpha", act.attrs.get_float("alpha", 0.2f));
    a.set("activation_beta", act.attrs.get_float("beta", 0.5f));
    return true;
  }
  if (act.op == "Clip") {
    float lo = -INFINITY, hi = INFINITY;
    if (act.inputs.size() > 1 && act.inputs[1] != kNoValue && !scalar_const(g, act.inputs[1], lo))
      return false;
    if (act.inputs.size() > 2 && act.inputs[2] != kNoValue && !scalar_const(g, act.inputs[2], hi))
      return false;
    a.set("activation", std::string("Clip"));
    a.set("activation_min", lo);
    a.set("activation_max", hi);
    return true;
  }
  return false;
}

// A float32 param of N elements shaped [N] or [1, .., 1, N] and of no higher rank than `y`
// (when y's rank is not known, rank 1): a bias a MatMul of N columns can add per column.
bool column_bias(const Graph& g, int32_t v, int64_t n, const Value& y) {
  if (!is_param(g, v) || g.values[v].dtype != DType::float32) return false;
  const Shape& s = g.values[v].shape;
  if (s.empty() || s.back() != n || shape_numel(s) != n) return false;
  return s.size() <= (y.rank_known ? y.shape.size() : 1);
}

// A MatMul by a constant [K, N] matrix (whose fast kernel packs it once).
bool matmul_by_weights(const Graph& g, const Node& m) {
  if (m.op != "MatMul" || m.inputs.size() < 2 || m.inputs.size() > 3 || m.inputs[0] < 0 ||
      !is_param(g, m.inputs[1]))
    return false;
  const Value& b = g.values[m.inputs[1]];
  return b.dtype == DType::float32 && b.shape.size() == 2 && g.values[m.inputs[0]].dtype == DType::float32;
}

// An inference BatchNormalization (one output, training_mode 0), which takes the activation.
bool inference_batch_norm(const Node& n) {
  return n.op == "BatchNormalization" && n.outputs.size() == 1 && n.attrs.get_int("training_mode", 0) == 0;
}

}  // namespace

Status fuse_conv_epilogue(Graph& g) {
  std::vector<bool> dead(g.nodes.size(), false);
  std::vector<int> uses = use_counts(g);
  std::vector<int32_t> prod = producers(g);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (n.outputs.size() != 1 || n.inputs.empty()) continue;
    // The conv this node would join: the producer of one of its inputs.
    for (std::size_t side = 0; side < n.inputs.size() && side < 2; ++side) {
      const int32_t x = n.inputs[side];
      if (x < 0 || prod[x] < 0 || uses[x] != 1 || is_graph_output(g, x)) continue;
      const int32_t ci = prod[x];
      Node& conv = g.nodes[ci];
      if (dead[ci] || conv.outputs.size() != 1) continue;
      const bool is_conv = conv.op == "Conv", is_convt = conv.op == "ConvTranspose";
      const bool is_matmul = matmul_by_weights(g, conv);
      const bool is_bn = inference_batch_norm(conv);
      if (!is_conv && !is_convt && !is_matmul && !is_bn) continue;
      const bool has_act = conv.attrs.has("activation");
      const bool has_res = conv.inputs.size() > 3;
      Node fused = conv;
      bool ok = false;
      if (is_bn) {
        // Only the activation (DenseNet's pre-activation BN -> ReLU after each Concat).
        if (side == 0 && !has_act && (n.inputs.size() == 1 || n.op == "Clip"))
          ok = set_activation(g, fused, n);
      } else if (is_matmul) {
        // MatMul(x, W) + b with b per column -> MatMul with a 3rd input b; then the activation.
        const int64_t cols = g.values[conv.inputs[1]].shape[1];
        if (n.op == "Add" && n.inputs.size() == 2 && conv.inputs.size() == 2 && !has_act) {
          const int32_t b = n.inputs[1 - side];
          if (b != x && column_bias(g, b, cols, g.values[x])) {
            fused.inputs.push_back(b);
            ok = true;
          }
        } else if (side == 0 && !has_act && (n.inputs.size() == 1 || n.op == "Clip")) {
          ok = set_activation(g, fused, n);
        }
      } else if (n.op == "Add" && n.inputs.size() == 2 && is_conv && !has_act && !has_res) {
        const int32_t r = n.inputs[1 - side];
        if (r >= 0 && !is_param(g, r) && r != x && g.values[r].dtype == DType::float32 &&
            same_shape(g.values[x], g.values[r])) {
          fused.inputs.resize(3, kNoValue);
          fused.inputs.push_back(r);
          ok = true;
        }
      } else if (side == 0 && !has_act && (n.inputs.size() == 1 || n.op == "Clip")) {
        ok = set_activation(g, fused, n);
      } else if (is_conv && has_act && n.inputs.size() == 2 && (n.op == "Mul" || n.op == "Add")) {
        float k = 0.f;
        if (scalar_const(g, n.inputs[1 - side], k)) {
          float pm = conv.attrs.get_float("activation_post_mul", 1.f);
          float pa = conv.attrs.get_float("activation_post_add", 0.f);
          if (n.op == "Mul")
            pm *= k, pa *= k;
          else
            pa += k;
          fused.attrs.set("activation_post_mul", pm);
          fused.attrs.set("activation_post_add", pa);
          ok = true;
        }
      }
      if (!ok) continue;
      // The fused conv replaces node i (inputs all computed by then); the conv node dies.
      fused.outputs = n.outputs;
      n = std::move(fused);
      dead[ci] = true;
      g.nodes[ci].inputs.clear();
      g.nodes[ci].outputs.clear();
      prod[n.outputs[0]] = static_cast<int32_t>(i);
      break;
    }
  }
  g.compact(dead);
  return {};
}

}  // namespace weave
