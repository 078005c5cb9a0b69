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
};

// Builds the plan; errors name the input or node that cannot take these dims.
[[nodiscard]] Expected<std::shared_ptr<const ShapePlan>> make_shape_plan(
    const Graph& graph, std::span<const std::unique_ptr<Kernel>> kernels, std::span<const Dims> input_dims);

}  // namespace weave
