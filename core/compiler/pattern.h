// Matching a small subgraph (an activation or a normalization written out with elementary ops)
// from its last node backwards, for the fusion passes (fuse_hardswish.h, fuse_activations.h,
// fuse_layer_norm.h). A pattern's intermediates must feed only the pattern and be no graph
// output; the nodes it matched die when the pass rewrites its last node into the fused op.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/compiler/graph_edit.h"
#include "core/graph/graph.h"

namespace weave::compiler {

class Pattern {
 public:
  explicit Pattern(const Graph& g)
      : g_(g), uses_(use_counts(g)), prod_(producers(g)), dead_(g.nodes.size()) {}

  // The one number of a float32 param with one element.
  [[nodiscard]] std::optional<float> scalar(int32_t v) const;
  // A float32 one-element param equal to `want` to within `rel` of it (at least 1e-6).
  [[nodiscard]] bool is_const(int32_t v, double want, double rel = 1e-6) const;
  // The node producing `v` when it has op `op`, one output, and `v` is read by exactly `uses`
  // node inputs (the pattern's) and is no graph output; nullptr otherwise or when that node
  // already died in this pass.
  [[nodiscard]] const Node* inner(int32_t v, const char* op, int uses = 1) const;
  // inner() and records the node as matched.
  const Node* take(int32_t v, const char* op, int uses = 1);
  [[nodiscard]] int32_t producer(int32_t v) const { return v >= 0 ? prod_[v] : -1; }

  // Matched nodes so far; a failed alternative restores the count it started from.
  [[nodiscard]] std::size_t mark() const { return matched_.size(); }
  void reset(std::size_t mark) { matched_.resize(mark); }

  // Rewrites node `root` into `op` with `inputs` and `attrs`, kills the matched nodes and
  // starts a new match.
  void replace(Graph& g, std::size_t root, const char* op, std::vector<int32_t> inputs, Attributes attrs);
  // Removes the dead nodes (ends the pass).
  void finish(Graph& g) { g.compact(dead_); }

 private:
  const Graph& g_;
  std::vector<int> uses_;
  std::vector<int32_t> prod_;
  std::vector<bool> dead_;
  std::vector<int32_t> matched_;
};

}  // namespace weave::compiler
