#include "core/compiler/fuse_hardswish.h"

#include <cmath>

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

namespace {

struct Matcher {
  const Graph& g;
  const std::vector<int>& uses;
  const std::vector<int32_t>& prod;
  std::vector<int32_t> matched;  // nodes of the pattern besides the root

  // A float32 param holding one number equal to `want` (to float rounding).
  [[nodiscard]] bool is_const(int32_t v, double want) const {
    if (!is_param(g, v) || g.values[v].dtype != DType::float32 || shape_numel(g.values[v].shape) != 1)
      return false;
    const double got = *param_view(g, v).as<float>();
    return std::fabs(got - want) <= 1e-6 * std::max(1.0, std::fabs(want));
  }
  // The node producing `v` when it has op `op` and `v` is used once and is no graph output.
  [[nodiscard]] const Node* inner(int32_t v, const char* op) const {
    if (v < 0 || prod[v] < 0 || uses[v] != 1 || is_graph_output(g, v)) return nullptr;
    const Node& n = g.nodes[prod[v]];
    return n.op == op && n.outputs.size() == 1 ? &n : nullptr;
  }
  // v = Clip(x + 3, 0, 6): returns x or kNoValue.
  int32_t relu6_plus3(int32_t v) {
    const Node* clip = inner(v, "Clip");
    if (!clip || clip->inputs.size() != 3 || !is_const(clip->inputs[1], 0.0) ||
        !is_const(clip->inputs[2], 6.0))
      return kNoValue;
    const Node* add = inner(clip->inputs[0], "Add");
    if (!add || add->inputs.size() != 2) return kNoValue;
    int32_t x = kNoValue;
    if (is_const(add->inputs[1], 3.0))
      x = add->inputs[0];
    else if (is_const(add->inputs[0], 3.0))
      x = add->inputs[1];
    if (x == kNoValue) return kNoValue;
    matched.push_back(prod[v]);
    matched.push_back(prod[clip->inputs[0]]);
    return x;
  }
  // v = relu6(x + 3) / 6 or * (1/6): returns x or kNoValue.
  int32_t scaled(int32_t v) {
    if (const Node* d = inner(v, "Div"); d && d->inputs.size() == 2 && is_const(d->inputs[1], 6.0)) {
      const int32_t x = relu6_plus3(d->inputs[0]);
      if (x != kNoValue) matched.push_back(prod[v]);
      return x;
    }
    if (const Node* m = inner(v, "Mul"); m && m->inputs.size() == 2) {
      for (int s = 0; s < 2; ++s)
        if (is_const(m->inputs[1 - s], 1.0 / 6.0)) {
          const int32_t x = relu6_plus3(m->inputs[s]);
          if (x != kNoValue) matched.push_back(prod[v]);
          return x;
        }
    }
    if (const Node* h = inner(v, "HardSigmoid");
        h && h->inputs.size() == 1 && std::fabs(h->attrs.get_float("alpha", 0.2f) - 1.0 / 6.0) < 1e-6 &&
        std::fabs(h->attrs.get_float("beta", 0.5f) - 0.5) < 1e-6) {
      matched.push_back(prod[v]);
      return h->inputs[0];
    }
    return kNoValue;
  }
  // x * relu6(x + 3) where `m` is that Mul: returns x or kNoValue.
  int32_t product(const Node& m) {
    for (int s = 0; s < 2; ++s) {
      const std::size_t before = matched.size();
      const int32_t x = relu6_plus3(m.inputs[1 - s]);
      if (x != kNoValue && x == m.inputs[s]) return x;
      matched.resize(before);
    }
    return kNoValue;
  }
  // The root `n`: returns x when n computes hard-swish of x.
  int32_t root(const Node& n) {
    if (n.inputs.size() != 2 || n.outputs.size() != 1) return kNoValue;
    matched.clear();
    // Div(x * relu6(x+3), 6) or Mul(x * relu6(x+3), 1/6)
    for (int s = 0; s < 2; ++s) {
      const bool div6 = n.op == "Div" && s == 0 && is_const(n.inputs[1], 6.0);
      const bool mul6 = n.op == "Mul" && is_const(n.inputs[1 - s], 1.0 / 6.0);
      if (!div6 && !mul6) continue;
      const Node* m = inner(n.inputs[s], "Mul");
      if (!m || m->inputs.size() != 2) continue;
      const int32_t x = product(*m);
      if (x != kNoValue) {
        matched.push_back(prod[n.inputs[s]]);
        return x;
      }
    }
    // Mul(x, relu6(x+3)/6) or Mul(x, HardSigmoid(x))
    if (n.op == "Mul") {
      for (int s = 0; s < 2; ++s) {
        matched.clear();
        const int32_t x = scaled(n.inputs[1 - s]);
        if (x != kNoValue && x == n.inputs[s]) return x;
      }
    }
    matched.clear();
    return kNoValue;
  }
};

}  // namespace

Status fuse_hardswish(Graph& g) {
  const std::vector<int> uses = use_counts(g);
  const std::vector<int32_t> prod = producers(g);
  std::vector<bool> dead(g.nodes.size(), false);
  Matcher m{g, uses, prod, {}};
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (n.op != "Div" && n.op != "Mul") continue;
    const int32_t x = m.root(n);
    if (x == kNoValue) continue;
    bool taken = false;
    for (int32_t k : m.matched) taken = taken || dead[k];
    if (taken) continue;
    for (int32_t k : m.matched) {
      dead[k] = true;
      g.nodes[k].inputs.clear();
      g.nodes[k].outputs.clear();
    }
    n.op = "HardSwish";
    n.inputs = {x};
    n.attrs = Attributes{};
  }
  g.compact(dead);
  return {};
}

}  // namespace weave
