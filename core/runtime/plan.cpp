#include "core/runtime/plan.h"

#include <algorithm>
#include <string>

#include "core/kernels/in_place.h"
#include "core/runtime/memory_planner.h"

namespace weave {
namespace {

// Values up to this size whose inputs are all known are computed while planning. This covers
// shape arithmetic (Shape -> Gather -> Concat -> Reshape) without moving real work off the
// run path.
constexpr std::size_t kFoldLimitBytes = 64 * 1024;

bool only_needs_dims(const std::string& op) {
  return op == "Shape" || op == "Size";
}

Status check_input(const Graph& g, std::size_t i, const Dims& d) {
  const TensorInfo& info = g.input_infos[i];
  if (d.size() != info.shape.size())
    return make_error("input '", info.name, "': expected rank ", info.shape.size(), " (", info.str(),
                      "), got shape ", shape_str(d.span()));
  for (int k = 0; k < d.rank(); ++k) {
    if (d[k] < 0) return make_error("input '", info.name, "': negative dim in ", shape_str(d.span()));
    if (info.shape[k] >= 0 && info.shape[k] != d[k])
      return make_error("input '", info.name, "': expected ", info.str(), ", got shape ",
                        shape_str(d.span()));
  }
  const int64_t bytes = checked_bytes(d.span(), dtype_size(info.dtype));
  if (bytes < 0 || bytes > kMaxPlannedBytes)
    return make_error("input '", info.name, "': shape ", shape_str(d.span()), " is larger than the ",
                      kMaxPlannedBytes, " bytes a plan admits");
  return {};
}

// Output of step `s` may take the memory of its input `in`: the kernel computes element j from
// element j of that input, the input has the output's dtype and dims, lives in the arena, is
// no model input (the caller may run again on it) and is read by no later step.
bool may_run_in_place(const Graph& g, const std::vector<ValueSlot>& slots, const std::vector<int32_t>& last,
                      int32_t s, int32_t in, int32_t out) {
  if (in == kNoValue || out == kNoValue || in == out) return false;
  const ValueSlot& a = slots[in];
  const ValueSlot& b = slots[out];
  return a.kind == SlotKind::arena && b.kind == SlotKind::arena && g.values[in].kind != ValueKind::input &&
         last[in] == s && a.dtype == b.dtype && a.dims == b.dims;
}

}  // namespace

Expected<std::shared_ptr<const ShapePlan>> make_shape_plan(const Graph& g,
                                                           std::span<const std::unique_ptr<Kernel>> kernels,
                                                           std::span<const Dims> input_dims,
                                                           const ShapePlan* bound) {
  auto plan = std::make_shared<ShapePlan>();
  if (input_dims.size() != g.inputs.size())
    return make_error("expected dims for ", g.inputs.size(), " inputs, got ", input_dims.size());
  plan->input_dims.assign(input_dims.begin(), input_dims.end());
  plan->slots.resize(g.values.size());
  auto& slots = plan->slots;

  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    WEAVE_TRY(check_input(g, i, input_dims[i]));
    ValueSlot& s = slots[g.inputs[i]];
    s.kind = SlotKind::arena;
    s.dtype = g.input_infos[i].dtype;
    s.dims = input_dims[i];
  }
  for (const Param& p : g.params) {
    ValueSlot& s = slots[p.value];
    s.kind = SlotKind::param;
    s.dtype = g.values[p.value].dtype;
    s.dims = Dims(g.values[p.value].shape);
    s.data = p.data.data();
  }

  std::vector<ConstTensorView> in_views;
  std::vector<TensorView> out_views;
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    in_views.assign(node.inputs.size(), ConstTensorView{});
    bool all_known = true;
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      int32_t v = node.inputs[k];
      if (v == kNoValue) continue;
      const ValueSlot& s = slots[v];
      if (s.kind == SlotKind::none)
        return make_error(g.node_label(static_cast<int32_t>(n)), ": input ", g.value_label(v),
                          " was not planned");
      const bool known = s.kind == SlotKind::param || s.kind == SlotKind::known;
      all_known = all_known && known;
      in_views[k] = ConstTensorView{known ? s.data : nullptr, s.dtype, s.dims};
    }
    out_views.assign(node.outputs.size(), TensorView{});
    const std::string label = g.node_label(static_cast<int32_t>(n));
    ShapeContext sc{in_views, out_views, 0, label};
    if (Status st = kernels[n]->infer(sc); !st) {
      std::string shapes;
      for (std::size_t k = 0; k < in_views.size(); ++k)
        if (in_views[k].present())
          shapes += (shapes.empty() ? "" : ", ") + shape_str(in_views[k].dims.span());
      return make_error(st.message().find(label) == std::string::npos ? label + ": " : "", st.message(),
                        " (input shapes: ", shapes, ")");
    }

    std::size_t out_bytes = 0;
    for (std::size_t k = 0; k < out_views.size(); ++k) {
      const TensorView& o = out_views[k];
      const int64_t bytes = checked_bytes(o.dims.span(), dtype_size(o.dtype));
      if (bytes < 0 || bytes > kMaxPlannedBytes)
        return make_error(label, ": output ", k, " of shape ", shape_str(o.dims.span()),
                          " is larger than the ", kMaxPlannedBytes, " bytes a plan admits");
      out_bytes += static_cast<std::size_t>(bytes);
    }
    const bool fold = only_needs_dims(node.op) || (all_known && out_bytes <= kFoldLimitBytes);
    if (fold) {
      // Evaluate now; the outputs become known values owned by the plan.
      std::vector<TensorView> outs(out_views.size());
      for (std::size_t k = 0; k < out_views.size(); ++k) {
        if (node.outputs[k] == kNoValue) continue;
        plan->known.emplace_back(out_views[k].dtype, out_views[k].dims);
        outs[k] = plan->known.back().view();
      }
      AlignedBuffer ws(sc.workspace);
      RunContext rc{in_views, outs, ws.span(), SerialParallel::instance()};
      kernels[n]->run(rc);
      for (std::size_t k = 0; k < outs.size(); ++k) {
        int32_t v = node.outputs[k];
        if (v == kNoValue) continue;
        slots[v] = ValueSlot{SlotKind::known, outs[k].dtype, outs[k].dims, 0, outs[k].data};
      }
      ++plan->folded_nodes;
      continue;
    }
    PlanStep step;
    step.node = static_cast<int32_t>(n);
    step.inputs = node.inputs;
    step.outputs = node.outputs;
    step.workspace = sc.workspace;
    plan->workspace_bytes = std::max(plan->workspace_bytes, sc.workspace);
    for (std::size_t k = 0; k < node.outputs.size(); ++k) {
      int32_t v = node.outputs[k];
      if (v == kNoValue) continue;
      slots[v] = ValueSlot{SlotKind::arena, out_views[k].dtype, out_views[k].dims, 0, nullptr};
    }
    plan->steps.push_back(std::move(step));
  }

  // Lifetimes of arena values in step indices; inputs live from the start, both to the end.
  const auto n_steps = static_cast<int32_t>(plan->steps.size());
  std::vector<int32_t> first(g.values.size(), -1), last(g.values.size(), -1);
  for (int32_t v : g.inputs) first[v] = last[v] = 0;
  for (int32_t s = 0; s < n_steps; ++s) {
    for (int32_t v : plan->steps[s].inputs)
      if (v != kNoValue && slots[v].kind == SlotKind::arena) last[v] = std::max(last[v], s);
    for (int32_t v : plan->steps[s].outputs)
      if (v != kNoValue) {
        if (first[v] < 0) first[v] = s;
        last[v] = std::max(last[v], s);
      }
  }
  // Outputs are read after the run; inputs set with set_input stay set for the next runs (only
  // what changes is set again), so neither may be overwritten by later steps.
  for (int32_t v : g.outputs)
    if (slots[v].kind == SlotKind::arena) last[v] = std::max(n_steps, last[v]);
  for (int32_t v : g.inputs)
    if (slots[v].kind == SlotKind::arena) last[v] = std::max(n_steps, last[v]);

  // In-place elementwise steps: the output joins the memory of an input that dies there. Such
  // chains (Conv -> Add -> Relu) share one block, alive from the first value's first step to the
  // last one's last step; each member's own lifetime is contiguous and starts where the
  // previous member's ends, so the block holds exactly one live member at a time.
  std::vector<int32_t>& in_place = plan->in_place;
  in_place.assign(g.values.size(), kNoValue);
  for (int32_t s = 0; s < n_steps; ++s) {
    const PlanStep& step = plan->steps[s];
    if (step.outputs.size() != 1) continue;
    const uint32_t mask = in_place_inputs(*kernels[step.node]);
    if (mask == 0 || (mask > 1 && step.inputs.size() != 2)) continue;
    for (std::size_t k = 0; k < step.inputs.size() && k < 32; ++k) {
      if ((mask >> k & 1u) == 0) continue;
      if (!may_run_in_place(g, slots, last, s, step.inputs[k], step.outputs[0])) continue;
      in_place[step.outputs[0]] = step.inputs[k];
      break;
    }
  }
  auto root = [&](int32_t v) {
    while (in_place[v] != kNoValue) v = in_place[v];
    return v;
  };
  std::vector<int32_t> group_last(g.values.size(), -1);
  for (std::size_t v = 0; v < g.values.size(); ++v)
    if (slots[v].kind == SlotKind::arena) {
      const int32_t r = root(static_cast<int32_t>(v));
      group_last[r] = std::max({group_last[r], last[v], 0});
    }

  std::vector<TensorLifetime> lifetimes;
  std::vector<int32_t> ids;
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    if (slots[v].kind != SlotKind::arena || in_place[v] != kNoValue) continue;
    const std::size_t bytes = static_cast<std::size_t>(slots[v].dims.numel()) * dtype_size(slots[v].dtype);
    lifetimes.push_back(TensorLifetime{bytes, std::max(0, first[v]), group_last[v]});
    ids.push_back(static_cast<int32_t>(v));
  }
  if (bound != nullptr && layout_fits_bound(*plan, *bound)) {
    // The bound's layout, with the bound's in-place pairs (still valid: checked above).
    in_place = bound->in_place;
    for (std::size_t v = 0; v < g.values.size(); ++v)
      if (slots[v].kind == SlotKind::arena) slots[v].offset = bound->slots[v].offset;
    plan->arena_bytes = bound->arena_bytes;
    plan->workspace_bytes = bound->workspace_bytes;
    plan->layout_from_bound = true;
    return std::shared_ptr<const ShapePlan>(std::move(plan));
  }
  MemoryPlan mp = plan_memory(lifetimes);
  for (std::size_t i = 0; i < ids.size(); ++i) slots[ids[i]].offset = mp.offsets[i];
  for (std::size_t v = 0; v < g.values.size(); ++v)
    if (in_place[v] != kNoValue) slots[v].offset = slots[root(static_cast<int32_t>(v))].offset;
  plan->arena_bytes = mp.arena_bytes;
  return std::shared_ptr<const ShapePlan>(std::move(plan));
}

bool layout_fits_bound(const ShapePlan& plan, const ShapePlan& bound) {
  if (plan.slots.size() != bound.slots.size() || plan.steps.size() != bound.steps.size()) return false;
  if (plan.workspace_bytes > bound.workspace_bytes) return false;
  // Same steps in the same order means the same lifetimes for every value both keep in the arena.
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep& a = plan.steps[s];
    const PlanStep& b = bound.steps[s];
    if (a.node != b.node || a.inputs != b.inputs || a.outputs != b.outputs) return false;
  }
  for (std::size_t v = 0; v < plan.slots.size(); ++v) {
    const ValueSlot& a = plan.slots[v];
    if (a.kind != SlotKind::arena) continue;
    const ValueSlot& b = bound.slots[v];
    if (b.kind != SlotKind::arena) return false;
    const std::size_t need = static_cast<std::size_t>(a.dims.numel()) * dtype_size(a.dtype);
    const std::size_t have = static_cast<std::size_t>(b.dims.numel()) * dtype_size(b.dtype);
    if (need > have) return false;
  }
  // A pair the bound runs in place must still be in place-able: an input of the same dims as
  // the output (not one broadcast to it, which the output would overwrite before it is read).
  for (std::size_t v = 0; v < bound.in_place.size(); ++v) {
    const int32_t in = bound.in_place[v];
    if (in == kNoValue) continue;
    const ValueSlot& a = plan.slots[in];
    const ValueSlot& b = plan.slots[v];
    if (a.kind != SlotKind::arena || b.kind != SlotKind::arena || a.dtype != b.dtype || !(a.dims == b.dims))
      return false;
  }
  return true;
}

}  // namespace weave
