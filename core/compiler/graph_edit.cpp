#include "core/compiler/graph_edit.h"

#include <algorithm>
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

bool is_float_param(const Graph& g, int32_t value) {
  return is_param(g, value) && g.values[value].dtype == DType::float32;
}

bool pointwise_nhwc_conv(const Graph& g, const Node& n, bool residual) {
  if (n.op != "Conv" || n.outputs.size() != 1 || n.inputs.size() < 2 ||
      n.inputs.size() > (residual ? 4u : 3u) || n.attrs.get_string("weave_layout") != "NHWC")
    return false;
  if (!is_float_param(g, n.inputs[1])) return false;
  const Shape& w = g.values[n.inputs[1]].shape;
  if (w.size() != 4 || w[2] != 1 || w[3] != 1) return false;
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue && !is_float_param(g, n.inputs[2])) return false;
  auto all = [](const std::vector<int64_t>& v, int64_t x) {
    return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
  };
  const std::string pad = n.attrs.get_string("auto_pad", "NOTSET");
  return n.attrs.get_int("group", 1) == 1 && all(n.attrs.get_ints("strides"), 1) &&
         all(n.attrs.get_ints("dilations"), 1) && all(n.attrs.get_ints("pads"), 0) &&
         (pad == "NOTSET" || pad == "VALID");
}

ConstTensorView param_view(const Graph& g, int32_t value) {
  const Value& v = g.values[value];
  return ConstTensorView{g.params[v.param].data.data(), v.dtype, Dims(std::span<const int64_t>(v.shape))};
}

}  // namespace weave::compiler
