#include "core/compiler/graph_edit.h"

#include <charconv>

namespace weave::compiler {

std::vector<int> use_counts(const Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes)
    for (int32_t in : n.inputs)
      if (in >= 0 && in < static_cast<int32_t>(uses.size())) ++uses[in];
  for (int32_t out : g.outputs)
    if (out >= 0 && out < static_cast<int32_t>(uses.size())) ++uses[out];
  return uses;
}

std::vector<int32_t> producers(const Graph& g) {
  std::vector<int32_t> prod(g.values.size(), -1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    for (int32_t out : g.nodes[i].outputs)
      if (out >= 0 && out < static_cast<int32_t>(prod.size())) prod[out] = static_cast<int32_t>(i);
  return prod;
}

bool is_graph_output(const Graph& g, int32_t value) {
  for (int32_t out : g.outputs)
    if (out == value) return true;
  return false;
}

bool inputs_static(const Graph& g) {
  for (const TensorInfo& info : g.input_infos)
    for (int64_t d : info.shape)
      if (d < 0) return false;
  return true;
}

bool is_param(const Graph& g, int32_t value) {
  return value >= 0 && value < static_cast<int32_t>(g.values.size()) &&
         g.values[value].kind == ValueKind::param;
}

ConstTensorView param_view(const Graph& g, int32_t value) {
  const Value& v = g.values[value];
  return ConstTensorView{g.params[v.param].data.data(), v.dtype, Dims(std::span<const int64_t>(v.shape))};
}

}  // namespace weave::compiler
