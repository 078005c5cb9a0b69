#include "core/runtime/plan.h"

#include <algorithm>
#include <cstring>
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

std::size_t slot_bytes(const ValueSlot& s) {
  return static_cast<std::size_t>(s.dims.numel()) * dtype_size(s.dtype);
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
  if (!dims_within_plan(d.span()))
    return make_error("input '", info.name, "': shape ", shape_str(d.span()),
                      " has dims whose product (zeros aside) exceeds the ", kMaxPlannedBytes,
                      " a plan admits");
  return {};
}

// Output of step `s` may take the memory of its input `in`: the kernel computes element j from
// element j of that input, the input has the output's dtype and dims (or, for a kernel that only
// relabels dims, as many elements), lives in this stage's arena, is no model input (the caller
// may run again on it) and is read by no later step.
bool may_run_in_place(const Graph& g, const ShapePlan& p, const std::vector<int32_t>& last, int32_t s,
                      int32_t in, int32_t out, bool relabels) {
  if (in == kNoValue || out == kNoValue || in == out) return false;
  const ValueSlot& a = p.slots[in];
  const ValueSlot& b = p.slots[out];
  const bool same = a.dims == b.dims || (relabels && a.dims.numel() == b.dims.numel());
  return a.kind == SlotKind::arena && b.kind == SlotKind::arena && a.stage == p.stage &&
         g.values[in].kind != ValueKind::input && last[in] == s && a.dtype == b.dtype && same;
}

// Plans nodes [first, end) of the graph into `plan` (whose slots hold everything computed
// before `first`), stopping at the first node whose infer needs a value only known at run time.
class Planner {
 public:
  Planner(const Graph& g, std::span<const std::unique_ptr<Kernel>> kernels, ShapePlan& plan)
      : g_(g), kernels_(kernels), plan_(plan) {}

  Status plan_nodes(std::size_t first) {
    auto& slots = plan_.slots;
    std::vector<ConstTensorView> in_views;
    std::vector<TensorView> out_views;
    for (std::size_t n = first; n < g_.nodes.size(); ++n) {
      const Node& node = g_.nodes[n];
      const Kernel& kernel = *kernels_[n];
      in_views.assign(node.inputs.size(), ConstTensorView{});
      bool all_known = true;
      const uint32_t needs = kernel.value_inputs();
      std::vector<int32_t> missing;
      for (std::size_t k = 0; k < node.inputs.size(); ++k) {
        int32_t v = node.inputs[k];
        if (v == kNoValue) continue;
        const ValueSlot& s = slots[v];
        if (s.kind == SlotKind::none)
          return make_error(g_.node_label(static_cast<int32_t>(n)), ": input ", g_.value_label(v),
                            " was not planned");
        const bool known = s.kind == SlotKind::param || s.kind == SlotKind::known;
        all_known = all_known && known;
        in_views[k] = ConstTensorView{known ? s.data : nullptr, s.dtype, s.dims};
        if (!known && k < 32 && (needs >> k & 1u) != 0 && s.dims.numel() > 0) missing.push_back(v);
        // Kernels were made (and chose their implementation) for the dtypes the graph states:
        // a value that turns out another dtype (an output declared float that is bool, fuzz_onnx)
        // is refused here, before a kernel reads it as what it is not.
        if (const DType stated = g_.values[v].dtype; stated != DType::undefined && stated != s.dtype)
          return make_error(g_.node_label(static_cast<int32_t>(n)), ": input ", g_.value_label(v), " is ",
                            dtype_name(s.dtype), " when planned, but the graph states ", dtype_name(stated));
        if (k < 32 && (kernel.float_inputs() >> k & 1u) != 0 && s.dtype != DType::float32)
          return make_error(g_.node_label(static_cast<int32_t>(n)), ": input ", g_.value_label(v),
                            " has dtype ", dtype_name(s.dtype), "; the ", node.op,
                            " kernel reads float32 only");
      }
      if (!missing.empty()) return cut(static_cast<int32_t>(n), missing);
      out_views.assign(node.outputs.size(), TensorView{});
      const std::string label = g_.node_label(static_cast<int32_t>(n));
      ShapeContext sc{in_views, out_views, 0, label};
      if (Status st = kernel.infer(sc); !st) {
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
        if (!dims_within_plan(o.dims.span()))
          return make_error(label, ": output ", k, " of shape ", shape_str(o.dims.span()),
                            " has dims whose product (zeros aside) exceeds the ", kMaxPlannedBytes,
                            " a plan admits");
        out_bytes += static_cast<std::size_t>(bytes);
      }
      const bool fold = only_needs_dims(node.op) || (all_known && out_bytes <= kFoldLimitBytes);
      if (fold) {
        // Evaluate now; the outputs become known values owned by the plan.
        std::vector<TensorView> outs(out_views.size());
        for (std::size_t k = 0; k < out_views.size(); ++k) {
          if (node.outputs[k] == kNoValue) continue;
          plan_.known.emplace_back(out_views[k].dtype, out_views[k].dims);
          outs[k] = plan_.known.back().view();
        }
        AlignedBuffer ws(sc.workspace);
        RunContext rc{in_views, outs, ws.span(), SerialParallel::instance(), sc.state.get()};
        kernel.run(rc);
        for (std::size_t k = 0; k < outs.size(); ++k) {
          int32_t v = node.outputs[k];
          if (v == kNoValue) continue;
          slots[v] = ValueSlot{SlotKind::known, outs[k].dtype, outs[k].dims, 0, outs[k].data, 0};
        }
        ++plan_.folded_nodes;
        continue;
      }
      PlanStep step;
      step.node = static_cast<int32_t>(n);
      step.inputs = node.inputs;
      step.outputs = node.outputs;
      step.workspace = sc.workspace;
      step.state = std::move(sc.state);
      plan_.workspace_bytes = std::max(plan_.workspace_bytes, sc.workspace);
      for (std::size_t k = 0; k < node.outputs.size(); ++k) {
        int32_t v = node.outputs[k];
        if (v == kNoValue) continue;
        slots[v] = ValueSlot{SlotKind::arena, out_views[k].dtype, out_views[k].dims, 0, nullptr, plan_.stage};
      }
      plan_.steps.push_back(std::move(step));
    }
    return {};
  }

  // Lifetimes, in-place pairs and offsets of this stage's arena values.
  void layout(const ShapePlan* bound) {
    const Graph& g = g_;
    auto& slots = plan_.slots;
    auto mine = [&](int32_t v) { return slots[v].kind == SlotKind::arena && slots[v].stage == plan_.stage; };
    // Lifetimes of arena values in step indices; inputs live from the start, both to the end.
    const auto n_steps = static_cast<int32_t>(plan_.steps.size());
    std::vector<int32_t> first(g.values.size(), -1), last(g.values.size(), -1);
    for (int32_t v : g.inputs) first[v] = last[v] = 0;
    for (int32_t s = 0; s < n_steps; ++s) {
      for (int32_t v : plan_.steps[s].inputs)
        if (v != kNoValue && mine(v)) last[v] = std::max(last[v], s);
      for (int32_t v : plan_.steps[s].outputs)
        if (v != kNoValue) {
          if (first[v] < 0) first[v] = s;
          last[v] = std::max(last[v], s);
        }
    }
    // Outputs are read after the run; inputs set with set_input stay set for the next runs (only
    // what changes is set again), so neither may be overwritten by later steps. Values the nodes
    // after a cut read are read by later stages, after every step of this one.
    for (int32_t v : g.outputs)
      if (mine(v)) last[v] = std::max(n_steps, last[v]);
    for (int32_t v : g.inputs)
      if (mine(v)) last[v] = std::max(n_steps, last[v]);
    if (plan_.cut_node >= 0)
      for (std::size_t n = static_cast<std::size_t>(plan_.cut_node); n < g.nodes.size(); ++n)
        for (int32_t v : g.nodes[n].inputs)
          if (v != kNoValue && mine(v)) last[v] = std::max(n_steps, last[v]);

    // In-place elementwise steps: the output joins the memory of an input that dies there. Such
    // chains (Conv -> Add -> Relu) share one block, alive from the first value's first step to the
    // last one's last step; each member's own lifetime is contiguous and starts where the
    // previous member's ends, so the block holds exactly one live member at a time.
    std::vector<int32_t>& in_place = plan_.in_place;
    in_place.assign(g.values.size(), kNoValue);
    for (int32_t s = 0; s < n_steps; ++s) {
      const PlanStep& step = plan_.steps[s];
      if (step.outputs.size() != 1) continue;
      const uint32_t mask = in_place_inputs(*kernels_[step.node]);
      if (mask == 0 || (mask > 1 && step.inputs.size() != 2)) continue;
      for (std::size_t k = 0; k < step.inputs.size() && k < 32; ++k) {
        if ((mask >> k & 1u) == 0) continue;
        if (!may_run_in_place(g, plan_, last, s, step.inputs[k], step.outputs[0],
                              k == 0 && kernels_[step.node]->relabels()))
          continue;
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
      if (mine(static_cast<int32_t>(v))) {
        const int32_t r = root(static_cast<int32_t>(v));
        group_last[r] = std::max({group_last[r], last[v], 0});
      }

    std::vector<TensorLifetime> lifetimes;
    std::vector<int32_t> ids;
    for (std::size_t v = 0; v < g.values.size(); ++v) {
      if (!mine(static_cast<int32_t>(v)) || in_place[v] != kNoValue) continue;
      lifetimes.push_back(TensorLifetime{slot_bytes(slots[v]), std::max(0, first[v]), group_last[v]});
      ids.push_back(static_cast<int32_t>(v));
    }
    if (bound != nullptr && layout_fits_bound(plan_, *bound)) {
      // The bound's layout, with the bound's in-place pairs (still valid: checked above).
      in_place = bound->in_place;
      for (std::size_t v = 0; v < g.values.size(); ++v)
        if (slots[v].kind == SlotKind::arena) slots[v].offset = bound->slots[v].offset;
      plan_.arena_bytes = bound->arena_bytes;
      plan_.workspace_bytes = bound->workspace_bytes;
      plan_.layout_from_bound = true;
      return;
    }
    MemoryPlan mp = plan_memory(lifetimes);
    for (std::size_t i = 0; i < ids.size(); ++i) slots[ids[i]].offset = mp.offsets[i];
    for (std::size_t v = 0; v < g.values.size(); ++v)
      if (in_place[v] != kNoValue) slots[v].offset = slots[root(static_cast<int32_t>(v))].offset;
    plan_.arena_bytes = mp.arena_bytes;
  }

 private:
  Status cut(int32_t n, const std::vector<int32_t>& values) {
    plan_.cut_node = n;
    plan_.cut_values = values;
    std::size_t bytes = 0;
    std::string names;
    for (int32_t v : values) {
      bytes += slot_bytes(plan_.slots[v]);
      names += (names.empty() ? "" : ", ") + g_.value_label(v);
    }
    plan_.cut_reason = g_.node_label(n) + " needs the values of " + names;
    if (bytes > kMaxCutBytes)
      return make_error(plan_.cut_reason, ", known only at run time; they hold ", bytes,
                        " bytes, more than the ", kMaxCutBytes,
                        " a plan may depend on (make them constants or smaller)");
    return {};
  }

  const Graph& g_;
  std::span<const std::unique_ptr<Kernel>> kernels_;
  ShapePlan& plan_;
};

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
  Planner planner(g, kernels, *plan);
  WEAVE_TRY(planner.plan_nodes(0));
  planner.layout(bound);
  return std::shared_ptr<const ShapePlan>(std::move(plan));
}

Expected<std::shared_ptr<const ShapePlan>> make_continuation(const Graph& g,
                                                             std::span<const std::unique_ptr<Kernel>> kernels,
                                                             const ShapePlan& head,
                                                             std::span<const ConstTensorView> cut_values) {
  if (head.cut_node < 0 || cut_values.size() != head.cut_values.size())
    return make_error("make_continuation: the plan has no cut for these ", cut_values.size(), " values");
  auto plan = std::make_shared<ShapePlan>();
  plan->input_dims = head.input_dims;
  plan->slots = head.slots;
  plan->stage = head.stage + 1;
  plan->head = &head;
  plan->key.reserve(cut_values.size());
  for (std::size_t i = 0; i < cut_values.size(); ++i) {
    const int32_t v = head.cut_values[i];
    const ConstTensorView& c = cut_values[i];
    if (c.dtype != head.slots[v].dtype || !(c.dims == head.slots[v].dims) || (c.numel() > 0 && !c.data))
      return make_error("make_continuation: value ", g.value_label(v), " does not match the plan");
    plan->key.push_back(Tensor::copy_of(c));
    plan->slots[v] = ValueSlot{SlotKind::known, c.dtype, c.dims, 0, plan->key.back().data(), 0};
  }
  Planner planner(g, kernels, *plan);
  WEAVE_TRY(planner.plan_nodes(static_cast<std::size_t>(head.cut_node)));
  planner.layout(nullptr);
  return std::shared_ptr<const ShapePlan>(std::move(plan));
}

bool continues_for(const ShapePlan& plan, std::span<const ConstTensorView> values) {
  if (values.size() != plan.key.size()) return false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Tensor& k = plan.key[i];
    const ConstTensorView& v = values[i];
    if (v.dtype != k.dtype() || !(v.dims == k.dims())) return false;
    if (k.bytes() > 0 && std::memcmp(v.data, k.data(), k.bytes()) != 0) return false;
  }
  return true;
}

bool layout_fits_bound(const ShapePlan& plan, const ShapePlan& bound) {
  if (plan.slots.size() != bound.slots.size() || plan.steps.size() != bound.steps.size()) return false;
  if (plan.workspace_bytes > bound.workspace_bytes) return false;
  if (plan.cut_node != bound.cut_node || plan.cut_values != bound.cut_values) return false;
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
    if (slot_bytes(a) > slot_bytes(b)) return false;
  }
  // A pair the bound runs in place must still be in place-able: an input of the same dims as
  // the output (not one broadcast to it, which the output would overwrite before it is read),
  // or, where the bound's pair had other dims (a kernel that relabels dims), as many elements.
  for (std::size_t v = 0; v < bound.in_place.size(); ++v) {
    const int32_t in = bound.in_place[v];
    if (in == kNoValue) continue;
    const ValueSlot& a = plan.slots[in];
    const ValueSlot& b = plan.slots[v];
    const bool relabel = !(bound.slots[in].dims == bound.slots[v].dims);
    const bool same = relabel ? a.dims.numel() == b.dims.numel() : a.dims == b.dims;
    if (a.kind != SlotKind::arena || b.kind != SlotKind::arena || a.dtype != b.dtype || !same) return false;
  }
  return true;
}

}  // namespace weave
