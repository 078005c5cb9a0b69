#include "core/compiler/remove_identity.h"

#include <algorithm>
#include <span>

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

namespace {

// Every pad 0, for an input of known rank: pads given as an int64 param of 2 x rank values, or,
// without that input, as the attribute (the importer moves an old opset's attribute into the
// input; hand-built graphs may still carry it). A pads input that is computed, an `axes`
// input, or a count that does not match the rank leaves the node to its kernel (which checks it).
bool all_zero(std::span<const int64_t> v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
}

bool pads_nothing(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.inputs[0] == kNoValue || n.outputs.size() != 1) return false;
  if (n.inputs.size() > 3 && n.inputs[3] != kNoValue) return false;
  const Value& x = g.values[n.inputs[0]];
  if (!x.rank_known) return false;
  const auto want = static_cast<int64_t>(2 * x.shape.size());
  if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) {
    if (!is_param(g, n.inputs[1])) return false;
    const ConstTensorView t = param_view(g, n.inputs[1]);
    if (t.dtype != DType::int64 || t.numel() != want) return false;
    return all_zero(std::span<const int64_t>(t.as<int64_t>(), static_cast<std::size_t>(want)));
  }
  if (!n.attrs.has("pads")) return false;
  const std::vector<int64_t> pads = n.attrs.get_ints("pads");
  return static_cast<int64_t>(pads.size()) == want && all_zero(pads);
}

}  // namespace

Status remove_identity(Graph& g) {
  const std::vector<int> uses = use_counts(g);
  ValueAliases alias(g.values.size());
  std::vector<bool> dead(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    alias.apply(n);
    const bool no_pad = n.op == "Pad" && pads_nothing(g, n);
    if (n.op != "Identity" && n.op != "Dropout" && !no_pad) continue;
    const auto id = static_cast<int32_t>(i);
    if (n.inputs.empty() || n.inputs[0] == kNoValue || n.outputs.empty())
      return make_error(g.node_label(id), ": needs one input and one output");
    if (n.op == "Dropout") {
      // Kept for its kernel when the mask is read or training_mode may be true (the kernel
      // fills the mask, and refuses random dropping when it plans with the mode's value).
      const bool mask_used = n.outputs.size() > 1 && n.outputs[1] != kNoValue &&
                             (uses[n.outputs[1]] > 0 || is_graph_output(g, n.outputs[1]));
      bool training = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
      if (training && is_param(g, n.inputs[2])) {
        ConstTensorView t = param_view(g, n.inputs[2]);
        training = !(t.dtype == DType::boolean && t.numel() == 1 && *t.as<uint8_t>() == 0);
      }
      // Training with a ratio of 0 drops nothing and scales by 1 (Swin's attention dropout as
      // exported: training_mode true, ratio 0).
      if (training && n.inputs.size() > 1 && n.inputs[1] != kNoValue && is_param(g, n.inputs[1])) {
        ConstTensorView r = param_view(g, n.inputs[1]);
        training = !(r.dtype == DType::float32 && r.numel() == 1 && *r.as<float>() == 0.f);
      }
      if (mask_used || training) continue;
    } else if (n.outputs.size() != 1) {
      return make_error(g.node_label(id), ": Identity must have exactly one output");
    }
    const int32_t x = n.inputs[0];
    const int32_t y = n.outputs[0];
    if (y == kNoValue) {
      dead[i] = true;
      continue;
    }
    if (is_graph_output(g, y)) {
      if (g.values[x].kind != ValueKind::intermediate || is_graph_output(g, x))
        continue;  // keep: needs a copy
      for (int32_t& out : g.outputs)
        if (out == y) out = x;
    }
    alias.set(y, x);
    dead[i] = true;
  }
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (dead[i]) g.nodes[i].inputs.clear();  // dead nodes must not keep removed values alive
  g.compact(dead);
  return {};
}

}  // namespace weave
