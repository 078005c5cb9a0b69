// A ShapePlan specializes a factory's graph to concrete input dims: output dims of every node,
// values that can be computed before running (Shape ops and the small shape arithmetic that
// follows them, which then vanish from the schedule), the flat schedule of remaining steps and
// the arena layout. Plans are immutable and shared by every executor that runs those dims; an
// executor only resolves pointers against its own arena.
//
// Shapes known only at run time. A kernel says which inputs' values its infer() needs
// (Kernel::value_inputs: Reshape's shape, Slice's starts, NonZero's data...). When such a value
// is computed from input data rather than from dims and params, the plan cannot go past that
// node: it is cut there (cut_node, cut_values) and covers only the steps before it. The executor
// runs those steps, reads the cut values and continues with a continuation plan made for the
// rest of the graph with those values known (make_continuation). A continuation is a plan of its
// own (stage 1, 2, ...: it may be cut again) with its own arena; values of earlier stages stay in
// theirs, read-only. Continuations are cached per head plan, keyed by the cut values' bytes, so
// runs whose values repeat reuse them without planning or allocating; new values plan once more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
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
  int32_t stage = 0;           // kind == arena: the stage whose arena holds it (see the top)
};

struct PlanStep {
  int32_t node = 0;
  std::vector<int32_t> inputs;   // value ids (kNoValue for omitted)
  std::vector<int32_t> outputs;  // value ids (kNoValue for omitted)
  std::size_t workspace = 0;
  std::shared_ptr<const KernelState> state;  // what the kernel's infer() kept for these shapes
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

  // Run-time shapes (see the top). 0 for a plan of input dims, k for the k-th continuation.
  int32_t stage = 0;
  // The first node this plan does not cover, or -1 when it covers the whole graph. The node's
  // infer needs the values of cut_values, computed by this plan's steps (or earlier stages, or
  // model inputs) and read by the executor after the steps ran.
  int32_t cut_node = -1;
  std::vector<int32_t> cut_values;
  std::string cut_reason;  // "node 3 (Reshape) needs the values of value 2 ('shape')", for users
  // A continuation: the plan it continues and the cut values it was made for (its cache key).
  // The head outlives its continuations while anyone runs them: executors hold both.
  const ShapePlan* head = nullptr;
  std::vector<Tensor> key;
  // True when every shape of this plan and of its continuations followed from input dims and
  // params (no cut anywhere): the plan is complete.
  [[nodiscard]] bool complete() const { return cut_node < 0; }

  // Continuations made from this plan, most recent last (a small cache; see Factory).
  mutable std::mutex continuations_mutex;
  mutable std::vector<std::shared_ptr<const ShapePlan>> continuations;
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

// The continuation of `head` (which has a cut) for the values `cut_values` (parallel to
// head.cut_values, with data): the rest of the graph planned with those values known. Errors
// name the node that cannot take them.
[[nodiscard]] Expected<std::shared_ptr<const ShapePlan>> make_continuation(
    const Graph& graph, std::span<const std::unique_ptr<Kernel>> kernels, const ShapePlan& head,
    std::span<const ConstTensorView> cut_values);

// True when `values` equal `plan.key` (dtype, dims, bytes): `plan` continues for them.
[[nodiscard]] bool continues_for(const ShapePlan& plan, std::span<const ConstTensorView> values);

// Most bytes of cut values a continuation is keyed by: values beyond it (e.g. NonZero over a
// large tensor computed at run time) are an error naming the node, not a huge copy per run.
inline constexpr std::size_t kMaxCutBytes = std::size_t{16} << 20;

// True when `plan` can use the arena offsets of `bound` (the conditions above).
[[nodiscard]] bool layout_fits_bound(const ShapePlan& plan, const ShapePlan& bound);

}  // namespace weave
