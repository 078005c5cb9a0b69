#include "core/graph/graph.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace weave {

std::string Graph::node_label(int32_t node) const {
  std::ostringstream os;
  os << "node " << node;
  if (node >= 0 && node < static_cast<int32_t>(nodes.size())) {
    os << " (" << nodes[node].op;
    auto it = names.nodes.find(node);
    if (it != names.nodes.end() && !it->second.empty()) os << " '" << it->second << "'";
    os << ")";
  }
  return os.str();
}

std::string Graph::value_label(int32_t value) const {
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] == value) return "input '" + input_infos[i].name + "'";
  for (std::size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i] == value) return "output '" + output_infos[i].name + "'";
  std::ostringstream os;
  if (value >= 0 && value < static_cast<int32_t>(values.size()) && values[value].kind == ValueKind::param)
    os << "param " << values[value].param;
  else
    os << "value " << value;
  auto it = names.values.find(value);
  if (it != names.values.end()) os << " ('" << it->second << "')";
  return os.str();
}

int64_t Graph::param_bytes() const {
  int64_t total = 0;
  // From dtype and shape, so a param whose bytes a Factory dropped after packing still counts.
  for (const auto& p : params) {
    const Value& v = values[p.value];
    const int64_t n = shape_numel(v.shape);
    total += n > 0 ? n * static_cast<int64_t>(dtype_size(v.dtype)) : static_cast<int64_t>(p.data.size());
  }
  return total;
}

int32_t Graph::add_value(Value v) {
  values.push_back(std::move(v));
  return static_cast<int32_t>(values.size() - 1);
}

int32_t Graph::add_param(DType dtype, Shape shape, SharedBytes data) {
  Value v;
  v.kind = ValueKind::param;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.param = static_cast<int32_t>(params.size());
  int32_t id = add_value(std::move(v));
  params.push_back(Param{id, std::move(data)});
  return id;
}

Status Graph::validate() const {
  const auto nv = static_cast<int32_t>(values.size());
  std::vector<int> producers(values.size(), 0);
  std::vector<bool> available(values.size(), false);
  if (inputs.size() != input_infos.size() || outputs.size() != output_infos.size())
    return make_error("graph: input/output tables disagree");
  for (int32_t id : inputs) {
    if (id < 0 || id >= nv) return make_error("graph: input id ", id, " out of range");
    if (values[id].kind != ValueKind::input)
      return make_error("graph: ", value_label(id), " is not of kind input");
    available[id] = true;
  }
  for (std::size_t p = 0; p < params.size(); ++p) {
    int32_t id = params[p].value;
    if (id < 0 || id >= nv) return make_error("graph: param ", p, " refers to value ", id, " out of range");
    const Value& v = values[id];
    if (v.kind != ValueKind::param || v.param != static_cast<int32_t>(p))
      return make_error("graph: param ", p, " and value ", id, " disagree");
    int64_t n = shape_numel(v.shape);
    if (n < 0)
      return make_error("graph: param ", p, " has a dynamic shape or more elements than int64 holds");
    if (!dims_within_plan(v.shape))
      return make_error("graph: param ", p, " of shape ", shape_str(v.shape),
                        " has dims whose product (zeros aside) exceeds the ", kMaxPlannedBytes,
                        " a plan admits");
    if (static_cast<uint64_t>(n) * dtype_size(v.dtype) != params[p].data.size())
      return make_error("graph: param ", p, " holds ", params[p].data.size(), " bytes, its ",
                        dtype_name(v.dtype), "[", shape_str(v.shape), "] needs ", n * dtype_size(v.dtype));
    available[id] = true;
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    for (int32_t in : n.inputs) {
      if (in == kNoValue) continue;
      if (in < 0 || in >= nv)
        return make_error("graph: ", node_label(i), " reads value ", in, " out of range");
      if (!available[in])
        return make_error("graph: ", node_label(i), " reads ", value_label(in), " before it is produced");
    }
    for (int32_t out : n.outputs) {
      if (out == kNoValue) continue;
      if (out < 0 || out >= nv)
        return make_error("graph: ", node_label(i), " writes value ", out, " out of range");
      if (values[out].kind != ValueKind::intermediate)
        return make_error("graph: ", node_label(i), " writes ", value_label(out),
                          " which is not an intermediate");
      if (++producers[out] > 1) return make_error("graph: ", value_label(out), " has two producers");
      available[out] = true;
    }
  }
  for (int32_t id : outputs) {
    if (id < 0 || id >= nv) return make_error("graph: output id ", id, " out of range");
    if (!available[id]) return make_error("graph: ", value_label(id), " is never produced");
  }
  return {};
}

void Graph::compact(const std::vector<bool>& dead_nodes) {
  // Keep live nodes, then keep values that are inputs, outputs or touched by a live node.
  std::vector<Node> kept;
  std::vector<int32_t> node_map(nodes.size(), -1);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i < dead_nodes.size() && dead_nodes[i]) continue;
    node_map[i] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(nodes[i]));
  }
  nodes = std::move(kept);

  std::vector<bool> used(values.size(), false);
  for (int32_t id : inputs) used[id] = true;
  for (int32_t id : outputs) used[id] = true;
  for (const Node& n : nodes) {
    for (int32_t id : n.inputs)
      if (id != kNoValue) used[id] = true;
    for (int32_t id : n.outputs)
      if (id != kNoValue) used[id] = true;
  }
  std::vector<int32_t> value_map(values.size(), -1);
  std::vector<Value> new_values;
  std::vector<Param> new_params;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!used[i]) continue;
    value_map[i] = static_cast<int32_t>(new_values.size());
    Value v = std::move(values[i]);
    if (v.kind == ValueKind::param) {
      Param p = std::move(params[v.param]);
      p.value = value_map[i];
      v.param = static_cast<int32_t>(new_params.size());
      new_params.push_back(std::move(p));
    }
    new_values.push_back(std::move(v));
  }
  values = std::move(new_values);
  params = std::move(new_params);
  auto remap = [&](int32_t id) { return id == kNoValue ? kNoValue : value_map[id]; };
  for (Node& n : nodes) {
    for (int32_t& id : n.inputs) id = remap(id);
    for (int32_t& id : n.outputs) id = remap(id);
  }
  for (int32_t& id : inputs) id = remap(id);
  for (int32_t& id : outputs) id = remap(id);

  NameMap nm;
  for (auto& [id, name] : names.values)
    if (id >= 0 && id < static_cast<int32_t>(value_map.size()) && value_map[id] >= 0)
      nm.values[value_map[id]] = std::move(name);
  for (auto& [id, name] : names.nodes)
    if (id >= 0 && id < static_cast<int32_t>(node_map.size()) && node_map[id] >= 0)
      nm.nodes[node_map[id]] = std::move(name);
  names = std::move(nm);
}

int Graph::kernel_opset() const {
  int opset = 0;
  if (auto it = metadata.find("opset"); it != metadata.end())
    std::from_chars(it->second.data(), it->second.data() + it->second.size(), opset);
  return std::max(opset, 13);
}

std::map<std::string, int> Graph::op_histogram() const {
  std::map<std::string, int> h;
  for (const Node& n : nodes) ++h[n.op];
  return h;
}

}  // namespace weave
