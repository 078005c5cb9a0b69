#include "core/compiler/fuse_residual_after_activation.h"

#include "core/compiler/graph_edit.h"
#include "core/kernels/fused_ops.h"

namespace weave::compiler {
namespace {

// An NHWC Conv the fast GEMM or Winograd kernel runs (ungrouped, constant weights of two or
// more input channels), with an activation fused and no residual yet.
bool takes_late_residual(const Graph& g, const Node& c) {
  if (c.op != "Conv" || c.outputs.size() != 1 || c.inputs.size() < 2 || c.inputs.size() > 3 ||
      c.attrs.get_string("weave_layout") != "NHWC" || c.attrs.get_int("group", 1) != 1 ||
      c.attrs.get_string("activation", "") == "")
    return false;
  const int32_t w = c.inputs[1];
  if (!is_param(g, w)) return false;
  const Shape& ws = g.values[w].shape;
  return ws.size() == 4 && ws[1] >= 2;
}

}  // namespace

Status fuse_residual_after_activation(Graph& g) {
  const std::vector<int> uses = use_counts(g);
  const std::vector<int32_t> prod = producers(g);
  std::vector<bool> dead(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& add = g.nodes[i];
    if (add.op != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    for (int side = 0; side < 2; ++side) {
      const int32_t y = add.inputs[side], r = add.inputs[1 - side];
      if (y < 0 || r < 0 || y == r || prod[y] < 0 || dead[prod[y]] || uses[y] != 1 || is_graph_output(g, y))
        continue;
      Node& conv = g.nodes[prod[y]];
      const Value &vy = g.values[y], &vr = g.values[r];
      // The same dims (no broadcast), all known, and the same type.
      if (!takes_late_residual(g, conv) || vr.dtype != vy.dtype || !vy.rank_known || !vr.rank_known ||
          vy.shape.size() != 4 || vr.shape != vy.shape || !shape_is_static(vy.shape))
        continue;
      // The fused node takes the Add's place: every input of both is computed by then.
      Node f = std::move(conv);
      if (f.inputs.size() < 3) f.inputs.resize(3, kNoValue);
      f.inputs.push_back(r);
      f.outputs = add.outputs;
      f.attrs.set(fused::kResidualLastAttr, int64_t{1});
      conv.inputs.clear();
      conv.outputs.clear();
      dead[static_cast<std::size_t>(prod[y])] = true;
      add = std::move(f);
      break;
    }
  }
  g.compact(dead);
  return {};
}

}  // namespace weave::compiler
