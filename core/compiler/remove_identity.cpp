#include "core/compiler/remove_identity.h"

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

Status remove_identity(Graph& g) {
  const std::vector<int> uses = use_counts(g);
  ValueAliases alias(g.values.size());
  std::vector<bool> dead(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    alias.apply(n);
    if (n.op != "Identity" && n.op != "Dropout") continue;
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
