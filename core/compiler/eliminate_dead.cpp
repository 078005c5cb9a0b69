#include "core/compiler/eliminate_dead.h"

namespace weave {

void eliminate_dead_code(Graph& g) {
  std::vector<bool> live(g.values.size(), false);
  for (int32_t out : g.outputs)
    if (out >= 0 && out < static_cast<int32_t>(live.size())) live[out] = true;
  std::vector<bool> dead(g.nodes.size(), true);
  for (std::size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    bool needed = false;
    for (int32_t out : n.outputs)
      needed = needed || (out >= 0 && out < static_cast<int32_t>(live.size()) && live[out]);
    if (!needed) continue;
    dead[i] = false;
    for (int32_t in : n.inputs)
      if (in >= 0 && in < static_cast<int32_t>(live.size())) live[in] = true;
  }
  g.compact(dead);
}

}  // namespace weave
