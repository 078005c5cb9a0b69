// Constant folding: a node whose inputs are all params is evaluated once, at compile time, by
// the same kernels the runtime uses (so folding can never disagree with running), and its
// outputs become params. Nodes are visited in topological order, so whole constant subgraphs
// (shape arithmetic on weights, Cast of constants, ...) collapse in one pass.
//
// A node is left alone when: its op has no kernel, its kernel declines or fails (the runtime
// will then report the problem with full context), it writes a graph output, it is
// nondeterministic (Random*, Bernoulli, Multinomial), it has no inputs, or its outputs would
// exceed `max_bytes` (folding must not blow up the artifact, e.g. an Expand of a scalar), or its
// kernel says it would take more than about 2^27 steps (ShapeContext::work: a pool over a huge
// window; compiling must stay quick).
#pragma once

#include <cstdint>

#include "core/common/status.h"
#include "core/graph/graph.h"
#include "core/kernels/registry.h"

namespace weave {

[[nodiscard]] Status fold_constants(Graph& g, const KernelRegistry& registry, int64_t max_bytes);

}  // namespace weave
