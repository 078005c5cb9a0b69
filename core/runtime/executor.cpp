#include "core/runtime/executor.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>

#include "core/threads/thread_budget.h"

namespace weave {
namespace {

// Plans an executor remembers; alternating among this many shapes never asks the factory.
constexpr std::size_t kSeenPlans = 16;

std::size_t slot_bytes(const ValueSlot& s) {
  return static_cast<std::size_t>(s.dims.numel()) * dtype_size(s.dtype);
}

std::string dims_text(const Factory& f, std::span<const Dims> dims) {
  std::string s;
  for (int i = 0; i < f.num_inputs(); ++i)
    s += (s.empty() ? "" : " ") + f.input_info(i).name + "=" + shape_str(dims[i].span());
  return s;
}

// Checks of a caller-owned buffer (R7): null, size, alignment. `what` names the call and tensor.
Status check_buffer(const std::string& what, const void* data, DType dtype, std::size_t bytes,
                    std::size_t buffer_bytes) {
  if (buffer_bytes != Executor::kViewBytes && buffer_bytes < bytes)
    return make_error(what, ": buffer of ", buffer_bytes, " bytes is too small for ", bytes, " bytes of ",
                      dtype_name(dtype));
  if (bytes == 0) return {};
  if (data == nullptr) return make_error(what, ": null data");
  const std::size_t align = bind_alignment(dtype);
  if (reinterpret_cast<std::uintptr_t>(data) % align != 0)
    return make_error(what, ": buffer at ", data, " is not aligned to ", align, " bytes (one ",
                      dtype_name(dtype),
                      " element); align it (64 bytes is best) or copy it in with set_input");
  return {};
}

}  // namespace

std::size_t bind_alignment(DType dtype) {
  return std::max<std::size_t>(1, dtype_size(dtype));
}

Expected<Executor> Executor::create(std::shared_ptr<const Factory> factory, ExecutorOptions options) try {
  if (!factory) return make_error("Executor::create: no factory");
  Executor ex(factory, std::move(options));
  const Factory& f = *ex.factory_;
  const Graph& g = f.graph();
  const auto n_in = static_cast<std::size_t>(f.num_inputs());
  ex.input_state_.assign(n_in, InputState::unset);
  ex.park_.resize(n_in);
  ex.park_dims_.resize(n_in);
  ex.bound_in_.resize(n_in);
  ex.bound_out_.resize(static_cast<std::size_t>(f.num_outputs()));
  ex.value_ptr_.assign(g.values.size(), nullptr);
  ex.copy_out_.reserve(static_cast<std::size_t>(f.num_outputs()));
  if (ex.lending()) ex.own_out_.resize(static_cast<std::size_t>(f.num_outputs()));
  ex.seen_plans_.reserve(kSeenPlans);
  std::vector<Dims> dims;
  if (f.default_input_dims(dims))
    ex.pending_dims_ = dims;
  else
    ex.pending_dims_.assign(n_in, Dims{});
  if (auto bound = f.bound_plan()) {
    // Everything any in-bound shape needs is allocated now (R8): the arena and (in the slots) the
    // workspace of the bound, and room for every view. Own input and output buffers are sized for
    // the bound but made on first use (once), as a caller that binds them never needs them.
    ex.reserve_arena(bound->arena_bytes);
    ex.reserve_workspace(bound->workspace_bytes);
    ex.views_.reserve(*bound);
  }
  if (auto plan = f.default_plan()) {
    WEAVE_TRY(ex.use_plan(plan));
    ex.seen_plans_.push_back(plan);
  }
  return ex;
} catch (const std::bad_alloc&) {
  // A bound (max_shapes) far beyond memory: its arena and workspace are allocated here.
  const auto bound = factory->bound_plan();
  return make_error("Executor::create: cannot allocate the memory the model's plan needs (arena ",
                    bound ? bound->arena_bytes : 0, " bytes, workspace ", bound ? bound->workspace_bytes : 0,
                    " bytes for the bound ",
                    bound ? dims_text(*factory, bound->input_dims) : std::string("-"), ")");
}

void Executor::reserve_workspace(std::size_t bytes) {
  if (bytes <= ws_reserved_) return;
  const bool grew = ws_reserved_ > 0;
  ws_reserved_ = bytes;
  if (options_.parallel) {
    workspace_ = AlignedBuffer(bytes, /*zero=*/false);
  } else if (!ThreadBudget::global().reserve_workspace(bytes)) {
    return;  // the slots' scratch was big enough already (another executor needed as much)
  }
  if (grew) ++stats_.arena_growths;
}

void Executor::reserve_arena(std::size_t bytes) {
  if (lending()) {
    if (bytes <= lent_reserved_) return;
    const bool grew = lent_reserved_ > 0;
    lent_reserved_ = bytes;
    if (ThreadBudget::global().reserve_arena(bytes) && grew) ++stats_.arena_growths;
    return;
  }
  if (arena_.size() >= bytes) return;
  if (arena_.size() > 0) ++stats_.arena_growths;
  arena_ = AlignedBuffer(bytes, /*zero=*/false);
}

std::size_t Executor::bound_bytes(int32_t value) const {
  const auto bound = factory_->bound_plan();
  if (!bound || bound->slots[value].kind != SlotKind::arena) return 0;
  return slot_bytes(bound->slots[value]);
}

std::size_t Executor::io_bytes() const {
  std::size_t n = 0;
  for (const AlignedBuffer& b : park_) n += b.size();
  for (const AlignedBuffer& b : own_out_) n += b.size();
  return n;
}

void Executor::log(std::string_view message) const {
  if (options_.log) options_.log(message);
}

void Executor::count_input_copy(std::size_t bytes) {
  ++pending_copies_.input_copies;
  pending_copies_.bytes_copied += bytes;
}

void Executor::park(int index, const void* data, const Dims& dims) {
  const auto i = static_cast<std::size_t>(index);
  const std::size_t bytes =
      static_cast<std::size_t>(dims.numel()) * dtype_size(factory_->input_info(index).dtype);
  if (park_[i].size() < bytes)
    park_[i] = AlignedBuffer(std::max(bytes, bound_bytes(factory_->graph().inputs[i])), false);
  if (bytes) std::memcpy(park_[i].data(), data, bytes);
  park_dims_[i] = dims;
  input_state_[i] = InputState::parked;
  count_input_copy(bytes);
}

Status Executor::use_plan(std::shared_ptr<const ShapePlan> plan) {
  if (plan == plan_) return {};
  const Graph& g = factory_->graph();
  const bool grow_arena = !lending() && arena_.size() < plan->arena_bytes;
  if (plan_) {
    // Inputs already in the arena stay valid when the new plan keeps them at the same place
    // (always so for plans sharing the factory's bound layout); others are parked and placed
    // again by prepare().
    for (std::size_t i = 0; i < g.inputs.size(); ++i) {
      if (input_state_[i] != InputState::in_arena) continue;
      const ValueSlot& old = plan_->slots[g.inputs[i]];
      const ValueSlot& neu = plan->slots[g.inputs[i]];
      if (!(old.dims == neu.dims)) {
        input_state_[i] = InputState::unset;
        continue;
      }
      if (grow_arena || old.offset != neu.offset)
        park(static_cast<int>(i), arena_.data() + old.offset, old.dims);
    }
    ++stats_.plan_switches;
  }
  plan_ = std::move(plan);
  // The last run's outputs were laid out for the old plan (and may live in memory that grows
  // now): output() refuses them until the next run.
  ran_ = false;
  final_plan_ = nullptr;
  reserve_arena(plan_->arena_bytes);
  reserve_workspace(plan_->workspace_bytes);
  // Rows of another plan's steps would be mislabelled.
  profile_.clear();
  views_dirty_ = true;
  return {};
}

const std::byte* Executor::stage_base(int32_t stage) const {
  if (stage == 0) return arena_base();
  return stages_[static_cast<std::size_t>(stage) - 1].arena.data();
}

ConstTensorView Executor::slot_view(const ShapePlan& plan, int32_t v) const {
  const ValueSlot& s = plan.slots[v];
  // Bound buffers stand for values the run writes (or reads as inputs): arena values only.
  if (s.kind != SlotKind::arena) return ConstTensorView{s.data, s.dtype, s.dims};
  if (value_ptr_[v] != nullptr) return ConstTensorView{value_ptr_[v], s.dtype, s.dims};
  // A lending executor has no arena before its first run leases one: its views stay null until
  // run() re-points them at the lease.
  const std::byte* base = stage_base(s.stage);
  return ConstTensorView{base != nullptr ? base + s.offset : nullptr, s.dtype, s.dims};
}

void Executor::StepViews::reserve(const ShapePlan& plan) {
  std::size_t n_in = 0, n_out = 0;
  for (const PlanStep& s : plan.steps) {
    n_in += s.inputs.size();
    n_out += s.outputs.size();
  }
  in.reserve(n_in);
  out.reserve(n_out);
  in_begin.reserve(plan.steps.size() + 1);
  out_begin.reserve(plan.steps.size() + 1);
}

void Executor::bind_views(const ShapePlan& plan, StepViews& views) {
  // clear() keeps the capacity: after the largest plan was bound once, rebinding never allocates.
  views.in.clear();
  views.out.clear();
  views.in_begin.assign(1, 0);
  views.out_begin.assign(1, 0);
  for (const PlanStep& step : plan.steps) {
    for (int32_t v : step.inputs) views.in.push_back(v == kNoValue ? ConstTensorView{} : slot_view(plan, v));
    for (int32_t v : step.outputs) {
      if (v == kNoValue) {
        views.out.push_back(TensorView{});
        continue;
      }
      ConstTensorView c = slot_view(plan, v);
      views.out.push_back(TensorView{const_cast<void*>(c.data), c.dtype, c.dims});
    }
    views.in_begin.push_back(views.in.size());
    views.out_begin.push_back(views.out.size());
  }
}

Status Executor::check_input(const char* what, int index, const ConstTensorView& value) const {
  if (index < 0 || index >= factory_->num_inputs())
    return make_error(what, ": index ", index, " out of range (the model has ", factory_->num_inputs(),
                      " inputs)");
  const TensorInfo& info = factory_->input_info(index);
  if (value.dtype != info.dtype)
    return make_error(what, " '", info.name, "': expected dtype ", dtype_name(info.dtype), ", got ",
                      dtype_name(value.dtype));
  if (value.dims.size() != info.shape.size())
    return make_error(what, " '", info.name, "': expected ", info.str(), ", got shape ",
                      shape_str(value.dims.span()));
  for (int k = 0; k < value.dims.rank(); ++k)
    if ((info.shape[k] >= 0 && info.shape[k] != value.dims[k]) || value.dims[k] < 0)
      return make_error(what, " '", info.name, "': expected ", info.str(), ", got shape ",
                        shape_str(value.dims.span()));
  if (value.numel() > 0 && !value.data) return make_error(what, " '", info.name, "': null data");
  if (!factory_->replan_beyond_bound())
    if (Status st = factory_->check_bound(index, value.dims); !st) return st.error().context(what);
  return {};
}

Status Executor::set_input(int index, ConstTensorView value) {
  WEAVE_TRY(check_input("set_input", index, value));
  const auto i = static_cast<std::size_t>(index);
  if (input_state_[i] == InputState::bound) {
    bound_in_[i] = ConstTensorView{};
    views_dirty_ = true;
  }
  pending_dims_[i] = value.dims;
  if (lending()) {
    // No arena to copy into between runs: the input's own buffer, bound like bind_input.
    park(index, value.data, value.dims);
    input_state_[i] = InputState::bound;
    bound_in_[i] = ConstTensorView{park_[i].data(), value.dtype, value.dims};
    views_dirty_ = true;
    return {};
  }
  if (plan_ && plan_->input_dims[i] == value.dims) {
    const ValueSlot& s = plan_->slots[factory_->graph().inputs[i]];
    if (value.bytes()) std::memcpy(arena_.data() + s.offset, value.data, value.bytes());
    input_state_[i] = InputState::in_arena;
    count_input_copy(value.bytes());
    return {};
  }
  // New dims. With one input, or dims whose plan this executor already has, switch plans now
  // and copy once. Otherwise keep a copy until run(), which plans once for the dims of all
  // inputs together (inputs sharing a dynamic dim, like tokens and h0 sharing batch, change
  // one at a time, and the mixed dims in between may not plan at all).
  if (factory_->num_inputs() == 1 || known_plan(pending_dims_)) {
    auto plan = find_plan();
    if (!plan) {
      input_state_[i] = InputState::unset;
      return plan.error();
    }
    WEAVE_TRY(use_plan(*plan));
    const ValueSlot& s = plan_->slots[factory_->graph().inputs[i]];
    if (value.bytes()) std::memcpy(arena_.data() + s.offset, value.data, value.bytes());
    input_state_[i] = InputState::in_arena;
    count_input_copy(value.bytes());
    return {};
  }
  park(index, value.data, value.dims);
  return {};
}

bool Executor::known_plan(std::span<const Dims> dims) const {
  for (const auto& p : seen_plans_)
    if (std::equal(dims.begin(), dims.end(), p->input_dims.begin(), p->input_dims.end())) return true;
  return false;
}

Status Executor::set_input(std::string_view name, ConstTensorView value) {
  auto i = factory_->input_index(name);
  if (!i) return Error(i.message()).context("set_input");
  return set_input(*i, value);
}

Status Executor::bind_input(int index, ConstTensorView value, std::size_t buffer_bytes) {
  WEAVE_TRY(check_input("bind_input", index, value));
  const TensorInfo& info = factory_->input_info(index);
  WEAVE_TRY(
      check_buffer("bind_input '" + info.name + "'", value.data, value.dtype, value.bytes(), buffer_bytes));
  const auto i = static_cast<std::size_t>(index);
  pending_dims_[i] = value.dims;
  input_state_[i] = InputState::bound;
  bound_in_[i] = value;
  views_dirty_ = true;
  return {};
}

Status Executor::bind_input(std::string_view name, ConstTensorView value, std::size_t buffer_bytes) {
  auto i = factory_->input_index(name);
  if (!i) return Error(i.message()).context("bind_input");
  return bind_input(*i, value, buffer_bytes);
}

Status Executor::bind_output(int index, TensorView buffer, std::size_t buffer_bytes) {
  if (index < 0 || index >= factory_->num_outputs())
    return make_error("bind_output: index ", index, " out of range (the model has ", factory_->num_outputs(),
                      " outputs)");
  const TensorInfo& info = factory_->output_info(index);
  const Value& value = factory_->graph().values[factory_->graph().outputs[index]];
  if (buffer.dtype != info.dtype)
    return make_error("bind_output '", info.name, "': expected dtype ", dtype_name(info.dtype), ", got ",
                      dtype_name(buffer.dtype));
  for (int k = 0; k < buffer.dims.rank(); ++k)
    if (buffer.dims[k] < 0)
      return make_error("bind_output '", info.name, "': negative dim in ", shape_str(buffer.dims.span()));
  if (value.rank_known) {
    bool fits = buffer.dims.size() == info.shape.size();
    for (int k = 0; fits && k < buffer.dims.rank(); ++k)
      fits = info.shape[k] < 0 || info.shape[k] == buffer.dims[k];
    if (!fits)
      return make_error("bind_output '", info.name, "': expected ", info.str(), ", got shape ",
                        shape_str(buffer.dims.span()));
  }
  WEAVE_TRY(check_buffer("bind_output '" + info.name + "'", buffer.data, buffer.dtype, buffer.bytes(),
                         buffer_bytes));
  bound_out_[static_cast<std::size_t>(index)] = buffer;
  views_dirty_ = true;
  return {};
}

Status Executor::bind_output(std::string_view name, TensorView buffer, std::size_t buffer_bytes) {
  auto i = factory_->output_index(name);
  if (!i) return Error(i.message()).context("bind_output");
  return bind_output(*i, buffer, buffer_bytes);
}

void Executor::unbind_input(int index) {
  if (index < 0 || index >= factory_->num_inputs()) return;
  const auto i = static_cast<std::size_t>(index);
  if (input_state_[i] != InputState::bound) return;
  input_state_[i] = InputState::unset;
  bound_in_[i] = ConstTensorView{};
  views_dirty_ = true;
}

void Executor::unbind_output(int index) {
  if (index < 0 || index >= factory_->num_outputs()) return;
  bound_out_[static_cast<std::size_t>(index)] = TensorView{};
  views_dirty_ = true;
}

void Executor::unbind_all() {
  for (int i = 0; i < factory_->num_inputs(); ++i) unbind_input(i);
  for (int k = 0; k < factory_->num_outputs(); ++k) unbind_output(k);
}

Expected<std::shared_ptr<const ShapePlan>> Executor::find_plan() {
  for (auto it = seen_plans_.rbegin(); it != seen_plans_.rend(); ++it)
    if (std::equal(pending_dims_.begin(), pending_dims_.end(), (*it)->input_dims.begin(),
                   (*it)->input_dims.end()))
      return *it;
  // First use of these dims by this executor: the factory has the plan or makes it (once per
  // factory, shared). Only this path allocates.
  bool beyond = false;
  for (int i = 0; i < factory_->num_inputs(); ++i)
    beyond = beyond || !factory_->within_bound(i, pending_dims_[static_cast<std::size_t>(i)]);
  if (beyond)
    log("input dims " + dims_text(*factory_, pending_dims_) +
        " exceed the planned bound (max_shapes): re-planning (replan_beyond_bound)");
  else
    log("input dims " + dims_text(*factory_, pending_dims_) +
        ": first run with these dims, using the factory's plan");
  auto plan = factory_->plan_for(pending_dims_);
  if (!plan) return plan.error();
  if (seen_plans_.size() >= kSeenPlans) seen_plans_.erase(seen_plans_.begin());
  seen_plans_.push_back(*plan);
  return *plan;
}

Status Executor::prepare() {
  const Graph& g = factory_->graph();
  for (std::size_t i = 0; i < input_state_.size(); ++i)
    if (input_state_[i] == InputState::unset)
      return make_error("run: input '", factory_->input_info(static_cast<int>(i)).name, "' was not set");
  if (!plan_ || !std::equal(pending_dims_.begin(), pending_dims_.end(), plan_->input_dims.begin(),
                            plan_->input_dims.end())) {
    auto plan = find_plan();
    if (!plan) return plan.error();
    WEAVE_TRY(use_plan(*plan));
  }
  for (std::size_t i = 0; i < input_state_.size(); ++i) {
    if (input_state_[i] == InputState::unset)  // dropped by use_plan (dims changed under it)
      return make_error("run: input '", factory_->input_info(static_cast<int>(i)).name, "' was not set");
    if (input_state_[i] != InputState::parked) continue;
    const ValueSlot& s = plan_->slots[g.inputs[i]];
    const std::size_t bytes = slot_bytes(s);
    if (bytes) std::memcpy(arena_.data() + s.offset, park_[i].data(), bytes);
    input_state_[i] = InputState::in_arena;
    count_input_copy(bytes);
  }
  return {};
}

Status Executor::resolve_bindings() {
  const Graph& g = factory_->graph();
  for (int32_t v : g.inputs) value_ptr_[v] = nullptr;
  for (int32_t v : g.outputs) value_ptr_[v] = nullptr;
  for (std::size_t i = 0; i < input_state_.size(); ++i)
    if (input_state_[i] == InputState::bound && bound_in_[i].bytes() > 0)
      value_ptr_[g.inputs[i]] = bound_in_[i].data;
  copy_out_.clear();
  for (std::size_t k = 0; k < bound_out_.size(); ++k) {
    const TensorView& b = bound_out_[k];
    if (!b.present()) continue;
    const int32_t v = g.outputs[k];
    const ValueSlot& s = plan_->slots[v];
    if (s.kind == SlotKind::none) continue;  // made by a later stage: bind_stage_outputs
    if (!(s.dims == b.dims) || s.dtype != b.dtype)
      return make_error("run: output '", factory_->output_info(static_cast<int>(k)).name, "' is bound to a ",
                        dtype_name(b.dtype), "[", shape_str(b.dims.span()), "] buffer, but the inputs ",
                        dims_text(*factory_, pending_dims_), " make it ", dtype_name(s.dtype), "[",
                        shape_str(s.dims.span()), "]; bind_output again (see output_dims) or unbind_output");
    if (b.bytes() == 0) continue;
    // Produced in place only by a step of this plan, and only once per value.
    const bool in_place =
        s.kind == SlotKind::arena && g.values[v].kind != ValueKind::input && value_ptr_[v] == nullptr;
    if (in_place)
      value_ptr_[v] = b.data;
    else
      copy_out_.push_back(static_cast<int>(k));
  }
  if (lending()) {
    // The lent arena is gone after run(): outputs nobody bound live in the executor's own
    // buffers, written in place by their step (after the bound ones, which win a shared value).
    for (std::size_t k = 0; k < bound_out_.size(); ++k) {
      if (bound_out_[k].present()) continue;
      const int32_t v = g.outputs[k];
      const ValueSlot& s = plan_->slots[v];
      if (s.kind != SlotKind::arena || g.values[v].kind == ValueKind::input || value_ptr_[v] != nullptr ||
          slot_bytes(s) == 0)
        continue;
      if (own_out_[k].size() < slot_bytes(s))  // first unbound run (or a plan beyond the bound)
        own_out_[k] = AlignedBuffer(std::max(slot_bytes(s), bound_bytes(v)), /*zero=*/false);
      value_ptr_[v] = own_out_[k].data();
    }
  }
  bind_views(*plan_, views_);
  ++views_epoch_;  // stage views may point at values of plan_ or at bound buffers
  views_dirty_ = false;
  return {};
}

Status Executor::bind_stage_outputs(const ShapePlan& plan) {
  const Graph& g = factory_->graph();
  for (std::size_t k = 0; k < bound_out_.size(); ++k) {
    const TensorView& b = bound_out_[k];
    if (!b.present()) continue;
    const int32_t v = g.outputs[k];
    const ValueSlot& s = plan.slots[v];
    if (plan_->slots[v].kind != SlotKind::none || s.kind == SlotKind::none) continue;
    const bool mine = s.kind == SlotKind::arena && s.stage == plan.stage;
    if (!mine && (s.kind != SlotKind::known || plan.head->slots[v].kind != SlotKind::none)) continue;
    if (!(s.dims == b.dims) || s.dtype != b.dtype)
      return make_error("run: output '", factory_->output_info(static_cast<int>(k)).name, "' is bound to a ",
                        dtype_name(b.dtype), "[", shape_str(b.dims.span()),
                        "] buffer, but this run makes it ", dtype_name(s.dtype), "[",
                        shape_str(s.dims.span()),
                        "] (its shape depends on values computed in the run); bind_output again or "
                        "unbind_output");
    // Written in place by its step; a value known while planning is copied at the end.
    if (mine && b.bytes() > 0) value_ptr_[v] = b.data;
  }
  return {};
}

Expected<Dims> Executor::output_dims(int index) {
  if (index < 0 || index >= factory_->num_outputs())
    return make_error("output_dims: index ", index, " out of range (the model has ", factory_->num_outputs(),
                      " outputs)");
  WEAVE_TRY(prepare());
  const int32_t v = factory_->graph().outputs[index];
  if (plan_->slots[v].kind != SlotKind::none) return plan_->slots[v].dims;
  if (ran_ && final_plan_) return final_plan_->slots[v].dims;  // the last run's, same input dims
  return make_error("output_dims: output '", factory_->output_info(index).name,
                    "' has a shape that depends on values computed in the run (", plan_->cut_reason,
                    "); run once, or read it from output() after running");
}

void Executor::run_steps(const ShapePlan& plan, const StepViews& views, std::span<std::byte> workspace,
                         const Parallel& par, std::size_t& profile_row) {
  const auto& steps = plan.steps;
  const bool prof = options_.profile;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    RunContext rc{std::span<const ConstTensorView>(views.in.data() + views.in_begin[s],
                                                   views.in_begin[s + 1] - views.in_begin[s]),
                  std::span<const TensorView>(views.out.data() + views.out_begin[s],
                                              views.out_begin[s + 1] - views.out_begin[s]),
                  workspace, par, steps[s].state.get()};
    if (!prof) {
      factory_->kernel(steps[s].node).run(rc);
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    factory_->kernel(steps[s].node).run(rc);
    auto t1 = std::chrono::steady_clock::now();
    if (profile_.size() <= profile_row) profile_.resize(profile_row + 1);
    OpProfile& p = profile_[profile_row++];
    if (p.node != steps[s].node || p.op.empty()) {
      const Graph& g = factory_->graph();
      p = OpProfile{};
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
}

Executor::StagePlan& Executor::adopt_stage(std::size_t k, std::shared_ptr<const ShapePlan> head,
                                           std::shared_ptr<const ShapePlan> plan) {
  if (stages_.size() < k) stages_.resize(k);
  Stage& st = stages_[k - 1];
  if (st.arena.size() < plan->arena_bytes) {
    if (st.arena.size() > 0) ++stats_.arena_growths;
    st.arena = AlignedBuffer(plan->arena_bytes, /*zero=*/false);
    ++views_epoch_;  // views into the old buffer, of this stage's plans and later ones
  }
  reserve_workspace(plan->workspace_bytes);
  if (st.plans.size() >= kSeenPlans) st.plans.erase(st.plans.begin());
  ++stats_.plan_switches;
  StagePlan& sp = st.plans.emplace_back();
  sp.head = std::move(head);
  sp.plan = std::move(plan);
  sp.views.reserve(*sp.plan);
  return sp;
}

Status Executor::run_stages(const Parallel& par, std::size_t& profile_row) {
  const ShapePlan* cur = plan_.get();
  std::shared_ptr<const ShapePlan> cur_ref = plan_;
  for (std::size_t k = 1; !cur->complete(); ++k) {
    cut_views_.clear();
    for (int32_t v : cur->cut_values) cut_views_.push_back(slot_view(*cur, v));
    StagePlan* sp = nullptr;
    if (stages_.size() >= k)
      for (StagePlan& c : stages_[k - 1].plans)
        if (c.plan->head == cur && continues_for(*c.plan, cut_views_)) sp = &c;
    if (sp == nullptr) {
      // New values at this cut: plan the rest for them (shared through the head plan's cache).
      log("run: " + cur->cut_reason + ", computed in this run: planning the rest of the graph for them");
      auto next = factory_->continue_plan(*cur, cut_views_);
      if (!next) return next.error();
      sp = &adopt_stage(k, cur_ref, *next);
    }
    if (sp->views_epoch != views_epoch_) {
      WEAVE_TRY(bind_stage_outputs(*sp->plan));
      bind_views(*sp->plan, sp->views);
      sp->views_epoch = views_epoch_;
    }
    // This stage's scratch: the slot's, or the private one.
    if (options_.parallel) {
      run_steps(*sp->plan, sp->views, workspace_.span(), par, profile_row);
    } else {
      const SlotWorkspace ws(sp->plan->workspace_bytes);
      run_steps(*sp->plan, sp->views, ws.span(), par, profile_row);
    }
    cur = sp->plan.get();
    cur_ref = sp->plan;
  }
  final_plan_ = cur;
  return {};
}

Status Executor::run() {
  ran_ = false;  // a failed run leaves no outputs to read
  final_plan_ = nullptr;
  WEAVE_TRY(prepare());
  if (views_dirty_) WEAVE_TRY(resolve_bindings());
  // R12: this thread computes on one slot of the process-wide budget (waits while all are busy).
  const ComputeToken slot;
  const Parallel& par =
      options_.parallel ? *options_.parallel : ThreadBudget::global().parallel(options_.threads);
  std::size_t profile_row = 0;
  // The scratch of the slot this thread computes on (a spare when this run is nested in another
  // one's kernel or chunk), or the private one with a private `parallel`.
  const SlotWorkspace slot_ws(options_.parallel ? 0 : plan_->workspace_bytes);
  const std::span<std::byte> workspace = options_.parallel ? workspace_.span() : slot_ws.span();
  // With lend_arena: the slot's arena (a spare when nested). Views point into the last run's
  // lease, so they are re-pointed only when this lease is another buffer (no allocation).
  const SlotArena lent(lending() ? plan_->arena_bytes : 0);
  if (lending() && lent.span().data() != lent_base_) {
    lent_base_ = lent.span().data();
    bind_views(*plan_, views_);
    ++views_epoch_;
  }
  run_steps(*plan_, views_, workspace, par, profile_row);
  // Shapes known only at run time: the continuation stages (they read the lent arena too).
  if (plan_->complete())
    final_plan_ = plan_.get();
  else
    WEAVE_TRY(run_stages(par, profile_row));
  if (options_.profile) profile_.resize(profile_row);
  const Graph& g = factory_->graph();
  // Bound outputs no step could write in place (params, values known at plan time, ...).
  auto copy_out = [&](std::size_t k) {
    const TensorView& b = bound_out_[k];
    ConstTensorView src = slot_view(*final_plan_, g.outputs[k]);
    std::memcpy(b.data, src.data, b.bytes());
    ++pending_copies_.output_copies;
    pending_copies_.bytes_copied += b.bytes();
  };
  for (int k : copy_out_) copy_out(static_cast<std::size_t>(k));
  if (final_plan_ != plan_.get())
    for (std::size_t k = 0; k < bound_out_.size(); ++k) {
      const int32_t v = g.outputs[k];
      if (bound_out_[k].present() && bound_out_[k].bytes() > 0 && plan_->slots[v].kind == SlotKind::none &&
          (final_plan_->slots[v].kind != SlotKind::arena || value_ptr_[v] != bound_out_[k].data))
        copy_out(k);
    }
  ran_ = true;
  ++stats_.runs;
  stats_.last_run = pending_copies_;
  stats_.total.input_copies += pending_copies_.input_copies;
  stats_.total.output_copies += pending_copies_.output_copies;
  stats_.total.bytes_copied += pending_copies_.bytes_copied;
  pending_copies_ = CopyStats{};
  return {};
}

Expected<ConstTensorView> Executor::output(int index) const {
  if (index < 0 || index >= factory_->num_outputs())
    return make_error("output: index ", index, " out of range (the model has ", factory_->num_outputs(),
                      " outputs)");
  if (!ran_ || !plan_ || !final_plan_)
    return make_error("output '", factory_->output_info(index).name,
                      "': no outputs to read (run() has not succeeded since the executor was made or its "
                      "input dims changed)");
  return slot_view(*final_plan_, factory_->graph().outputs[index]);
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
  for (int i = 0; i < factory_->num_outputs(); ++i) {
    outs.push_back(Tensor::copy_of(*output(i)));
    // The owning copies belong to this run.
    ++stats_.last_run.output_copies;
    ++stats_.total.output_copies;
    stats_.last_run.bytes_copied += outs.back().bytes();
    stats_.total.bytes_copied += outs.back().bytes();
  }
  return outs;
}

}  // namespace weave
