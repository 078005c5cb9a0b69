#include "core/compiler/split_conv_outputs.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

namespace {

// Rows [first, first + rows) of a param (along its leading dim), as a new param sharing the same
// bytes.
int32_t rows_of(Graph& g, int32_t value, int64_t first, int64_t rows) {
  const Value& v = g.values[value];
  const SharedBytes& all = g.params[static_cast<std::size_t>(v.param)].data;
  const std::size_t row_bytes = all.size() / static_cast<std::size_t>(v.shape[0]);
  Shape shape = v.shape;
  shape[0] = rows;
  const DType dtype = v.dtype;
  SharedBytes part(all.span().subspan(static_cast<std::size_t>(first) * row_bytes,
                                      static_cast<std::size_t>(rows) * row_bytes),
                   all.owner());
  return g.add_param(dtype, std::move(shape), std::move(part));
}

// The channel counts of the parts when Split node `s` may be folded into Conv node `c` (the
// producer of its input), else empty.
std::vector<int64_t> part_sizes(const Graph& g, const Node& s, const Node& c) {
  if (c.op != "Conv" || c.outputs.size() != 1 || c.inputs.size() < 2 || c.inputs.size() > 3 ||
      c.attrs.get_int("group", 1) != 1)
    return {};
  const int32_t w = c.inputs[1], b = c.inputs.size() > 2 ? c.inputs[2] : kNoValue;
  if (!is_float_param(g, w)) return {};
  const Shape& ws = g.values[w].shape;
  if (ws.size() < 3 || ws[0] < 2) return {};
  if (b != kNoValue && (!is_float_param(g, b) || g.values[b].shape != Shape{ws[0]})) return {};
  const std::size_t rank = ws.size();  // the Conv's output's
  int64_t axis = s.attrs.get_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis != 1) return {};
  // The sizes the Split itself states (its input, its attribute, or equal parts), as its kernel
  // reads them; output shapes that shape inference knows must agree.
  const int64_t m = ws[0], n = static_cast<int64_t>(s.outputs.size());
  std::vector<int64_t> sizes;
  if (s.inputs.size() > 1 && s.inputs[1] != kNoValue) {
    if (!is_param(g, s.inputs[1]) || g.values[s.inputs[1]].dtype != DType::int64) return {};
    const ConstTensorView t = param_view(g, s.inputs[1]);
    sizes.assign(t.as<int64_t>(), t.as<int64_t>() + t.numel());
  } else if (s.attrs.has("split")) {
    sizes = s.attrs.get_ints("split");
  } else if (s.attrs.has("num_outputs")) {  // its kernel refuses a count other than the outputs'
    if (s.attrs.get_int("num_outputs", 0) != n) return {};
    const int64_t chunk = (m + n - 1) / n;
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::clamp<int64_t>(m - i * chunk, 0, chunk));
  } else {
    if (m % n != 0) return {};
    sizes.assign(static_cast<std::size_t>(n), m / n);
  }
  if (static_cast<int64_t>(sizes.size()) != n) return {};
  int64_t sum = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const int32_t o = s.outputs[k];
    if (o == kNoValue || sizes[k] < 1 || sizes[k] > m) return {};
    const Value& part = g.values[o];
    if (part.rank_known && part.shape.size() == rank && part.shape[1] >= 0 && part.shape[1] != sizes[k])
      return {};
    sum += sizes[k];
  }
  return sum == m ? sizes : std::vector<int64_t>{};
}

}  // namespace

Status split_conv_outputs(Graph& g) {
  const char* env = std::getenv("WEAVE_SPLIT_CONV");
  if (env != nullptr && std::strcmp(env, "0") == 0) return {};
  const std::vector<int> uses = use_counts(g);
  const std::vector<int32_t> prod = producers(g);
  // Split node -> its parts and the Conv they replace (dropped from its place).
  std::map<std::size_t, std::pair<std::size_t, std::vector<Node>>> parts;
  std::vector<bool> dropped(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& s = g.nodes[i];
    if (s.op != "Split" || s.inputs.empty() || s.outputs.size() < 2) continue;
    const int32_t v = s.inputs[0];
    if (v < 0 || prod[v] < 0 || uses[v] != 1 || is_graph_output(g, v)) continue;
    const auto ci = static_cast<std::size_t>(prod[v]);
    const std::vector<int64_t> sizes = part_sizes(g, s, g.nodes[ci]);
    if (sizes.empty()) continue;
    const Node conv = g.nodes[ci];
    const std::vector<int32_t> outs = s.outputs;
    const int32_t w = conv.inputs[1], b = conv.inputs.size() > 2 ? conv.inputs[2] : kNoValue;
    std::vector<Node> out;
    int64_t first = 0;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      Node p = conv;
      p.inputs[1] = rows_of(g, w, first, sizes[k]);
      if (b != kNoValue) p.inputs[2] = rows_of(g, b, first, sizes[k]);
      p.outputs = {outs[k]};
      out.push_back(std::move(p));
      first += sizes[k];
    }
    parts[i] = {ci, std::move(out)};
    dropped[ci] = true;
  }
  if (parts.empty()) return {};
  std::vector<Node> old = std::move(g.nodes);
  g.nodes.clear();
  std::map<int32_t, std::string> old_names = std::move(g.names.nodes);
  g.names.nodes.clear();
  for (std::size_t i = 0; i < old.size(); ++i) {
    if (dropped[i]) continue;
    const auto split = parts.find(i);
    if (split == parts.end()) {
      const auto name = old_names.find(static_cast<int32_t>(i));
      if (name != old_names.end()) g.names.nodes[static_cast<int32_t>(g.nodes.size())] = name->second;
      g.nodes.push_back(std::move(old[i]));
      continue;
    }
    // The parts carry the Conv's name with their number: "conv:0", "conv:1", ...
    const auto name = old_names.find(static_cast<int32_t>(split->second.first));
    std::vector<Node>& ps = split->second.second;
    for (std::size_t k = 0; k < ps.size(); ++k) {
      if (name != old_names.end())
        g.names.nodes[static_cast<int32_t>(g.nodes.size())] = name->second + ":" + std::to_string(k);
      g.nodes.push_back(std::move(ps[k]));
    }
  }
  // The Conv's output and weights (unless shared) are read by nothing now.
  std::vector<bool> none(g.nodes.size(), false);
  g.compact(none);
  return {};
}

}  // namespace weave
