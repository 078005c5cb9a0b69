// Dead-code elimination: drops nodes none of whose outputs reaches a graph output, then
// compacts the graph (unused values and params disappear, ids are renumbered).
#pragma once

#include "core/graph/graph.h"

namespace weave {

void eliminate_dead_code(Graph& g);

}  // namespace weave
