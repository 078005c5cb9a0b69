// Removes Identity and Dropout nodes (at inference Dropout's output equals its input), and Pad
// nodes that pad nothing (every pad 0: PyTorch exports DenseNet's average pools so; each was a
// copy between a pair of layout reorders). Readers of the node's output read its input instead.
// When the output is a graph output, the graph output is redirected to the input value (its
// name stays in Graph::output_infos); if that input is a graph input, a param or already another
// graph output, the node is kept because the output needs its own buffer. A Dropout whose mask
// output is read, or whose training_mode is a true param, is an error: those need training
// behaviour.
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

[[nodiscard]] Status remove_identity(Graph& g);

}  // namespace weave
