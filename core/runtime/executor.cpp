#include "core/runtime/executor.h"

#include <cstring>

#include "core/runtime/thread_budget.h"

namespace weave {

Expected<Executor> Executor::create(std::shared_ptr<const Factory> factory, ExecutorOptions options) {
  if (!factory) return make_error("Executor::create: no factory");
  Executor ex(std::move(factory), std::move(options));
  ex.input_set_.assign(ex.factory_->num_inputs(), false);
  ex.parked_.resize(ex.factory_->num_inputs());
  std::vector<Dims> dims;
  if (ex.factory_->default_input_dims(dims))
    ex.pending_dims_ = dims;
  else
    ex.pending_dims_.assign(ex.factory_->num_inputs(), Dims{});
  if (auto plan = ex.factory_->default_plan()) WEAVE_TRY(ex.use_plan(plan));
  return ex;
}

Status Executor::use_plan(std::shared_ptr<const ShapePlan> plan) {
  if (plan == plan_) return {};
  // Keep the bytes of inputs already set when the new plan puts them elsewhere.
  const Graph& g = factory_->graph();
  std::vector<AlignedBuffer> saved(g.inputs.size());
  if (plan_) {
    for (std::size_t i = 0; i < g.inputs.size(); ++i) {
      if (!input_set_[i]) continue;
      const ValueSlot& old = plan_->slots[g.inputs[i]];
      const ValueSlot& neu = plan->slots[g.inputs[i]];
      if (!(old.dims == neu.dims)) {
        input_set_[i] = false;
        continue;
      }
      const std::size_t n = static_cast<std::size_t>(old.dims.numel()) * dtype_size(old.dtype);
      saved[i] = AlignedBuffer(n);
      std::memcpy(saved[i].data(), arena_.data() + old.offset, n);
    }
  }
  plan_ = std::move(plan);
  if (arena_.size() < plan_->arena_bytes) arena_ = AlignedBuffer(plan_->arena_bytes, /*zero=*/false);
  if (workspace_.size() < plan_->workspace_bytes) workspace_ = AlignedBuffer(plan_->workspace_bytes, false);
  for (std::size_t i = 0; i < g.inputs.size(); ++i)
    if (saved[i].size())
      std::memcpy(arena_.data() + plan_->slots[g.inputs[i]].offset, saved[i].data(), saved[i].size());
  bind_views();
  return {};
}

ConstTensorView Executor::slot_view(int32_t v) const {
  const ValueSlot& s = plan_->slots[v];
  const void* data = s.kind == SlotKind::arena ? arena_.data() + s.offset : s.data;
  return ConstTensorView{data, s.dtype, s.dims};
}

void Executor::bind_views() {
  in_views_.clear();
  out_views_.clear();
  in_begin_.assign(1, 0);
  out_begin_.assign(1, 0);
  for (const PlanStep& step : plan_->steps) {
    for (int32_t v : step.inputs) in_views_.push_back(v == kNoValue ? ConstTensorView{} : slot_view(v));
    for (int32_t v : step.outputs) {
      if (v == kNoValue) {
        out_views_.push_back(TensorView{});
        continue;
      }
      ConstTensorView c = slot_view(v);
      out_views_.push_back(TensorView{const_cast<void*>(c.data), c.dtype, c.dims});
    }
    in_begin_.push_back(in_views_.size());
    out_begin_.push_back(out_views_.size());
  }
}

Status Executor::set_input(int index, ConstTensorView value) {
  if (index < 0 || index >= factory_->num_inputs())
    return make_error("set_input: index ", index, " out of range (the model has ", factory_->num_inputs(),
                      " inputs)");
  const TensorInfo& info = factory_->input_info(index);
  if (value.dtype != info.dtype)
    return make_error("set_input '", info.name, "': expected dtype ", dtype_name(info.dtype), ", got ",
                      dtype_name(value.dtype));
  if (value.dims.size() != info.shape.size())
    return make_error("set_input '", info.name, "': expected ", info.str(), ", got shape ",
                      shape_str(value.dims.span()));
  for (int k = 0; k < value.dims.rank(); ++k)
    if (info.shape[k] >= 0 && info.shape[k] != value.dims[k])
      return make_error("set_input '", info.name, "': expected ", info.str(), ", got shape ",
                        shape_str(value.dims.span()));
  if (value.numel() > 0 && !value.data) return make_error("set_input '", info.name, "': null data");

  pending_dims_[index] = value.dims;
  if (plan_ && plan_->input_dims[index] == value.dims) {
    const ValueSlot& s = plan_->slots[factory_->graph().inputs[index]];
    if (value.bytes()) std::memcpy(arena_.data() + s.offset, value.data, value.bytes());
    input_set_[index] = true;
    parked_[index] = Tensor();
    return {};
  }
  // New dims: keep a copy until run(), which plans once for the dims of all inputs together
  // (inputs that share a dynamic dim, like tokens and h0 sharing batch, change one at a time).
  parked_[index] = Tensor::copy_of(value);
  input_set_[index] = false;
  has_parked_ = true;
  return {};
}

Status Executor::set_input(std::string_view name, ConstTensorView value) {
  auto i = factory_->input_index(name);
  if (!i) return Error(i.message()).context("set_input");
  return set_input(*i, value);
}

Status Executor::run() {
  if (has_parked_) {
    auto plan = factory_->plan_for(pending_dims_);
    if (!plan) return plan.error();
    WEAVE_TRY(use_plan(*plan));
    const Graph& g = factory_->graph();
    for (std::size_t i = 0; i < parked_.size(); ++i) {
      if (parked_[i].dtype() == DType::undefined) continue;
      const ValueSlot& s = plan_->slots[g.inputs[i]];
      if (parked_[i].bytes()) std::memcpy(arena_.data() + s.offset, parked_[i].data(), parked_[i].bytes());
      input_set_[i] = true;
      parked_[i] = Tensor();
    }
    has_parked_ = false;
  }
  for (std::size_t i = 0; i < input_set_.size(); ++i)
    if (!input_set_[i])
      return make_error("run: input '", factory_->input_info(static_cast<int>(i)).name, "' was not set");
  // R12: this thread computes on one slot of the process-wide budget (waits while all are busy).
  const ComputeToken slot;
  const Parallel& par =
      options_.parallel ? *options_.parallel : ThreadBudget::global().parallel(options_.threads);
  const auto& steps = plan_->steps;
  const bool prof = options_.profile;
  if (prof) profile_.resize(steps.size());
  for (std::size_t s = 0; s < steps.size(); ++s) {
    RunContext rc{
        std::span<const ConstTensorView>(in_views_.data() + in_begin_[s], in_begin_[s + 1] - in_begin_[s]),
        std::span<const TensorView>(out_views_.data() + out_begin_[s], out_begin_[s + 1] - out_begin_[s]),
        workspace_.span(), par};
    if (!prof) {
      factory_->kernel(steps[s].node).run(rc);
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    factory_->kernel(steps[s].node).run(rc);
    auto t1 = std::chrono::steady_clock::now();
    OpProfile& p = profile_[s];
    if (p.op.empty()) {
      const Graph& g = factory_->graph();
      p.node = steps[s].node;
      p.op = g.nodes[p.node].op;
      p.label = g.node_label(p.node);
      for (const auto& v : rc.inputs)
        if (v.present()) p.shapes += (p.shapes.empty() ? "" : ",") + shape_str(v.dims.span());
      p.shapes += " -> ";
      for (const auto& v : rc.outputs)
        if (v.present()) p.shapes += shape_str(v.dims.span()) + " ";
    }
    p.ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  }
  ran_ = true;
  return {};
}

Expected<ConstTensorView> Executor::output(int index) const {
  if (index < 0 || index >= factory_->num_outputs())
    return make_error("output: index ", index, " out of range (the model has ", factory_->num_outputs(),
                      " outputs)");
  if (!ran_ || !plan_)
    return make_error("output '", factory_->output_info(index).name, "': run() has not been called");
  return slot_view(factory_->graph().outputs[index]);
}

Expected<ConstTensorView> Executor::output(std::string_view name) const {
  auto i = factory_->output_index(name);
  if (!i) return i.error();
  return output(*i);
}

Expected<std::vector<Tensor>> Executor::run(std::span<const ConstTensorView> inputs) {
  if (static_cast<int>(inputs.size()) != factory_->num_inputs())
    return make_error("run: the model takes ", factory_->num_inputs(), " inputs, got ", inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) WEAVE_TRY(set_input(static_cast<int>(i), inputs[i]));
  WEAVE_TRY(run());
  std::vector<Tensor> outs;
  outs.reserve(factory_->num_outputs());
  for (int i = 0; i < factory_->num_outputs(); ++i) outs.push_back(Tensor::copy_of(*output(i)));
  return outs;
}

}  // namespace weave
