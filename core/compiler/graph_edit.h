// Small helpers the compile passes share for reading and rewriting a Graph in place. Passes
// rewrite by value id and leave removal of dead nodes/values to Graph::compact, so ids stay
// stable while a pass runs.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/tensor.h"
#include "core/graph/graph.h"

namespace weave::compiler {

// Per value: how many node input slots read it plus how many graph outputs name it.
[[nodiscard]] std::vector<int> use_counts(const Graph& g);
// Per value: the id of the node producing it, or -1.
[[nodiscard]] std::vector<int32_t> producers(const Graph& g);
[[nodiscard]] bool is_graph_output(const Graph& g, int32_t value);
[[nodiscard]] bool is_param(const Graph& g, int32_t value);
// is_param, of dtype float32.
[[nodiscard]] bool is_float_param(const Graph& g, int32_t value);
// Every graph input has a fully static shape. Passes that act on an intermediate's static dims
// (trim_conv_taps, unfold_patch_conv) ask this first: such dims then follow from the inputs the
// executor enforces, not from a model's stored value_info, which may be stale where an input was
// made dynamic after export.
[[nodiscard]] bool inputs_static(const Graph& g);
// A 1x1, stride-1, unpadded, ungrouped Conv the layout pass made NHWC, with constant float
// weights [M, C, 1, 1] and a constant float bias or none; with `residual`, a fourth input (a
// residual) is allowed too. The pointwise convolutions the fast registry's fusions take.
[[nodiscard]] bool pointwise_nhwc_conv(const Graph& g, const Node& n, bool residual);
// The bytes of a param value as a view (its shape must be static, which validate() checks).
[[nodiscard]] ConstTensorView param_view(const Graph& g, int32_t value);

// Maps value ids to replacements while a forward pass walks the nodes. Replacements are
// resolved when recorded, so chains (a->b, b->c) collapse to one lookup.
class ValueAliases {
 public:
  explicit ValueAliases(std::size_t values) : to_(values, -1) {}
  [[nodiscard]] int32_t resolve(int32_t v) const {
    if (v < 0 || v >= static_cast<int32_t>(to_.size()) || to_[v] < 0) return v;
    return to_[v];
  }
  void set(int32_t from, int32_t to) {
    if (from >= static_cast<int32_t>(to_.size())) to_.resize(from + 1, -1);
    to_[from] = resolve(to);
  }
  // Rewrites a node's inputs through the aliases.
  void apply(Node& n) const {
    for (int32_t& in : n.inputs) in = resolve(in);
  }

 private:
  std::vector<int32_t> to_;
};

}  // namespace weave::compiler
