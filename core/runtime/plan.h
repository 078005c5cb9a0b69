// A ShapePlan specializes a factory's graph to concrete input dims: output dims of every node,
// values that can be computed before running (Shape ops and the small shape arithmetic that
// follows them, which then vanish from the schedule), the flat schedule of remaining steps and
// the arena layout. Plans are immutable and shared by every executor that runs those dims; an
// executor only resolves pointers against its own arena.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/graph/graph.h"
#include "core/kernels/kernel.h"

namespace weave {

enum class SlotKind : uint8_t { none, arena, param, known };

struct ValueSlot {
  SlotKind kind = SlotKind::none;
  DType dtype = DType::undefined;
  Dims dims;
  std::size_t offset = 0;      // arena offset, kind == arena
  const void* data = nullptr;  // kind == param or known
};

struct PlanStep {
  int32_t node = 0;
  std::vector<int32_t> inputs;   // value ids (kNoValue for omitted)
  std::vector<int32_t> outputs;  // value ids (kNoValue for omitted)
  std::size_t workspace = 0;
};

struct ShapePlan {
  std::vector<Dims> input_dims;
  std::vector<ValueSlot> slots;  // per value id
  std::vector<PlanStep> steps;
  std::vector<Tensor> known;  // storage for values computed while planning
  std::size_t arena_bytes = 0;
  std::size_t workspace_bytes = 0;
  int folded_nodes = 0;  // nodes evaluated while planning (not in steps)
  // Per value: the value whose arena memory it reuses because the step producing it runs in
  // place over it (an elementwise op over an input that dies at that step, see
  // core/kernels/in_place.h), or kNoValue.
  std::vector<int32_t> in_place;
  // True when the arena offsets were taken from a bounding plan (see make_shape_plan), so an
  // executor sized for that plan runs this one without growing or moving anything. (False for
  // the bound plan itself, which owns the layout.)
  bool layout_from_bound = false;
};

// Builds the plan; errors name the input or node that cannot take these dims.
//
// `bound` (optional) is the plan for the upper bound of every dynamic dim (R8). When the new
// plan has the same steps as `bound`, every arena value is no larger than in `bound` and the
// workspace fits, the arena layout of `bound` is reused: a value alive at the same steps with
// no more bytes cannot overlap anything it did not already avoid, and every pair of values
// `bound` runs in place still has equal dims and dtype. Otherwise (a shape-dependent
// fold changed the steps, or a size is not monotonic in the dims) the plan gets its own layout.
[[nodiscard]] Expected<std::shared_ptr<const ShapePlan>> make_shape_plan(
    const Graph& graph, std::span<const std::unique_ptr<Kernel>> kernels, std::span<const Dims> input_dims,
    const ShapePlan* bound = nullptr);

// True when `plan` can use the arena offsets of `bound` (the conditions above).
[[nodiscard]] bool layout_fits_bound(const ShapePlan& plan, const ShapePlan& bound);

}  // namespace weave
