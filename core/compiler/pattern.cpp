#include "core/compiler/pattern.h"

#include <algorithm>
#include <cmath>

namespace weave::compiler {

std::optional<float> Pattern::scalar(int32_t v) const {
  if (!is_param(g_, v) || g_.values[v].dtype != DType::float32 || shape_numel(g_.values[v].shape) != 1)
    return std::nullopt;
  return *param_view(g_, v).as<float>();
}

bool Pattern::is_const(int32_t v, double want, double rel) const {
  const std::optional<float> got = scalar(v);
  return got && std::fabs(*got - want) <= std::max(rel, 1e-6) * std::max(1.0, std::fabs(want));
}

const Node* Pattern::inner(int32_t v, const char* op, int uses) const {
  if (v < 0 || prod_[v] < 0 || uses_[v] != uses || is_graph_output(g_, v) || dead_[prod_[v]]) return nullptr;
  const Node& n = g_.nodes[prod_[v]];
  return n.op == op && n.outputs.size() == 1 ? &n : nullptr;
}

const Node* Pattern::take(int32_t v, const char* op, int uses) {
  const Node* n = inner(v, op, uses);
  if (n != nullptr) matched_.push_back(prod_[v]);
  return n;
}

void Pattern::replace(Graph& g, std::size_t root, const char* op, std::vector<int32_t> inputs,
                      Attributes attrs) {
  for (int32_t k : matched_) {
    dead_[k] = true;
    g.nodes[k].inputs.clear();
    g.nodes[k].outputs.clear();
  }
  matched_.clear();
  Node& n = g.nodes[root];
  n.op = op;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
}

}  // namespace weave::compiler
