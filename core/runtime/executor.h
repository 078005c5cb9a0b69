// Executor: the mutable half of running a model — an arena, bound inputs, outputs and an
// optional profile. One per thread or element; creating one from a Factory whose plan exists
// costs a plan lookup and one arena allocation (R3). Not thread-safe: use one per thread (many
// executors of one shared Factory may run at once on different threads).
//
// Stateful use (R9):          ex.set_input("x", view); ex.run(); ex.output("logits");
// Stateless use (R9):         auto outs = ex.run({view_x});   // owning copies of every output
//
// Changing input dims re-plans (plans are cached in the Factory and shared); run() itself never
// allocates when every shape follows from the input dims. A model whose shapes depend on values
// computed at run time (a Reshape whose shape is computed from input data, NonZero, ...) runs in
// stages (core/runtime/plan.h): run() plans the rest of the graph the first time it meets new
// such values (allocating then), and reuses that plan, allocation-free, while they repeat.
//
// Memory: an executor owns its arena (planned tensors). Kernel scratch (im2col, ...) is not
// its own: run() leases the scratch of the compute slot it runs on from the process-wide budget
// (SlotWorkspace in core/threads/thread_budget.h), which create() and re-planning size up front.
// Only an executor with a private `parallel` keeps a scratch buffer of its own.
// With ExecutorOptions::lend_arena the arena is not its own either: run() leases the slot's
// arena (SlotArena) the same way, and the executor keeps only its inputs' and outputs' buffers.
//
// Zero-copy (R7):  ex.bind_input("x", caller_view);  ex.bind_output("y", caller_view);  ex.run();
// Kernels then read the caller's input and write the caller's output buffer directly. See
// bind_input / bind_output for the rules, and stats() for the copies that still happen.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/parallel.h"
#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/runtime/factory.h"
#include "core/runtime/plan.h"

namespace weave {

struct ExecutorOptions {
  // A Parallel of your own for kernels (e.g. a private ThreadPool pinned to N threads in a
  // benchmark); nullptr (the default) uses the process-wide budget, see `threads`.
  std::shared_ptr<const Parallel> parallel;
  bool profile = false;  // time every step (R11); read with profile()
  // Told about rare, costly events on the run path: planning for new input dims, and a re-plan
  // beyond the factory's bound (FactoryOptions::replan_beyond_bound). Empty: silent.
  std::function<void(std::string_view)> log;
  // The most threads run() may use from the process-wide budget (core/threads/thread_budget.h),
  // the calling thread included: 0 = as many as the budget has, 1 = the calling thread only.
  // A cap, not a pool: run() holds one slot of the budget (waiting while all are taken) and
  // kernels borrow up to threads - 1 more only if they are idle.
  int threads = 0;
  // Lend the arena instead of owning one, so that idle executors cost almost nothing: the
  // executor owns no arena of intermediates (arena_bytes() == 0); run() leases one from the
  // compute slot it runs on (SlotArena in core/threads/thread_budget.h, reserved up front by
  // create() and re-planning, so run() still never allocates) and gives it back when it returns.
  // So set_input copies into the executor's per-input buffers (bound like bind_input), and
  // outputs nobody bound are written in place into executor-owned output buffers, so output()
  // stays valid after run(). Bound inputs and outputs work as without it. Those own buffers are
  // made on first use only (first set_input of the input, first run leaving the output
  // unbound), sized for the factory's bound, so an executor whose inputs and outputs are always
  // bound (weaveinfer) holds none at all: io_bytes() == 0.
  // With a private `parallel` (no budget slot) the executor falls back to an owned arena.
  bool lend_arena = false;
};

// Tensor copies the executor made (R7). Copies of the caller's tensors are what zero-copy
// binding avoids, so they are counted rather than hidden.
struct CopyStats {
  // set_input copies. New dims on a model of several inputs, for which this executor has no
  // plan yet, copy twice: parked, then placed once run() has planned for all inputs.
  uint64_t input_copies = 0;
  uint64_t output_copies = 0;  // bound outputs that could not be written in place (see bind_output)
  uint64_t bytes_copied = 0;
};

struct ExecutorStats {
  uint64_t runs = 0;
  uint64_t plan_switches = 0;  // times the executor changed plans (new input dims)
  uint64_t arena_growths = 0;  // times the arena or workspace had to be reallocated after creation
  CopyStats last_run;          // copies that fed or finished the last successful run()
  CopyStats total;             // since creation
};

// One row per executed step of the last run() with profiling on.
struct OpProfile {
  int32_t node = 0;
  std::string op;
  std::string label;   // node label with its name when the name map has one
  std::string shapes;  // "1x3x224x224 -> 1x64x112x112"
  double ms = 0;
};

class Executor {
 public:
  // Default `buffer_bytes` of bind_input/bind_output: the buffer is exactly the view.
  static constexpr std::size_t kViewBytes = static_cast<std::size_t>(-1);

  [[nodiscard]] static Expected<Executor> create(std::shared_ptr<const Factory> factory,
                                                 ExecutorOptions options = {});

  [[nodiscard]] const Factory& factory() const { return *factory_; }
  [[nodiscard]] const std::shared_ptr<const Factory>& factory_ptr() const { return factory_; }

  // Copies the tensor into the executor. Errors name the input and both shapes/dtypes.
  [[nodiscard]] Status set_input(int index, ConstTensorView value);
  [[nodiscard]] Status set_input(std::string_view name, ConstTensorView value);

  // Zero-copy input (R7): later runs read the caller's memory directly, until the input is
  // bound again, set_input is called for it, or unbind_input. The caller keeps the memory
  // alive and unchanged while runs use it. Checked like set_input (dtype, rank, static dims,
  // the max_shapes bound) plus: `buffer_bytes` (the caller's buffer size; default: exactly the
  // view's bytes) must hold the view, data must be non-null when the tensor is not empty, and
  // data must be aligned to the element size (bind_alignment). 64-byte alignment is
  // recommended (SIMD loads never split cache lines) but not required. Errors name the input.
  // New dims pick another plan at the next run, exactly as set_input does.
  [[nodiscard]] Status bind_input(int index, ConstTensorView value, std::size_t buffer_bytes = kViewBytes);
  [[nodiscard]] Status bind_input(std::string_view name, ConstTensorView value,
                                  std::size_t buffer_bytes = kViewBytes);
  // Zero-copy output (R7): the step producing the output writes straight into the caller's
  // buffer, and later steps reading that value read it from there. Checked like bind_input
  // (dtype, rank, static dims, size, alignment) at bind time; the dims must also equal the dims
  // the current inputs give that output, checked by run() (so bind after setting inputs whose
  // dims changed, or ask output_dims()). Bindings survive re-planning: a run whose dims no
  // longer match a bound output fails with an error naming the output and both shapes; bind
  // again or unbind. An output that is a param, a value computed while planning, a model
  // input, or a second output of the same value cannot be produced in place: run() copies it
  // into the buffer at the end and counts it in stats().last_run.output_copies.
  [[nodiscard]] Status bind_output(int index, TensorView buffer, std::size_t buffer_bytes = kViewBytes);
  [[nodiscard]] Status bind_output(std::string_view name, TensorView buffer,
                                   std::size_t buffer_bytes = kViewBytes);
  // After unbind_input the input must be set or bound again before the next run.
  void unbind_input(int index);
  void unbind_output(int index);
  void unbind_all();
  // Dims of output `index` for the inputs set or bound so far (plans for them if needed), so a
  // caller can size the buffer it binds before running.
  [[nodiscard]] Expected<Dims> output_dims(int index);

  [[nodiscard]] Status run();
  // Views into the executor's memory (or the bound buffer), valid until the next set_input,
  // bind_input or run. An error before the first successful run, after a failed one, and once
  // new input dims were planned (set_input / bind_input / output_dims with other dims).
  [[nodiscard]] Expected<ConstTensorView> output(int index) const;
  [[nodiscard]] Expected<ConstTensorView> output(std::string_view name) const;
  // Stateless: binds all inputs (in input order), runs, returns owning copies of all outputs.
  [[nodiscard]] Expected<std::vector<Tensor>> run(std::span<const ConstTensorView> inputs);

  [[nodiscard]] const ExecutorStats& stats() const { return stats_; }
  [[nodiscard]] const std::vector<OpProfile>& profile() const { return profile_; }
  [[nodiscard]] std::size_t arena_bytes() const { return arena_.size(); }
  // Bytes of the executor's own input and output buffers: where set_input copies to when the
  // arena is lent or the dims wait for a re-plan, and where a lending executor writes outputs
  // nobody bound. Made on first use and kept, so 0 for an executor whose inputs and outputs
  // have always been bound.
  [[nodiscard]] std::size_t io_bytes() const;
  // Kernel scratch this executor owns: 0 on the process-wide budget (it uses the slots'
  // scratch), the plan's workspace with a private ExecutorOptions::parallel.
  [[nodiscard]] std::size_t workspace_bytes() const { return workspace_.size(); }
  [[nodiscard]] const ShapePlan* plan() const { return plan_.get(); }
  // Plans of the continuation stages the last run went through (shapes known only at run
  // time, see plan.h); empty when plan() covers the whole graph.
  [[nodiscard]] std::size_t stages() const {
    return final_plan_ ? static_cast<std::size_t>(final_plan_->stage) : 0;
  }

 private:
  enum class InputState : uint8_t { unset, in_arena, parked, bound };

  explicit Executor(std::shared_ptr<const Factory> f, ExecutorOptions o)
      : factory_(std::move(f)), options_(std::move(o)) {}
  [[nodiscard]] Status use_plan(std::shared_ptr<const ShapePlan> plan);
  [[nodiscard]] ConstTensorView slot_view(const ShapePlan& plan, int32_t value) const;
  // Shared checks of set_input and bind_input: index, dtype, rank, static dims, bound.
  [[nodiscard]] Status check_input(const char* what, int index, const ConstTensorView& value) const;
  // Copies into the input's parking buffer (grown only when too small).
  void park(int index, const void* data, const Dims& dims);
  // Chooses the plan for the pending dims, places parked inputs, resolves bindings.
  [[nodiscard]] Status prepare();
  [[nodiscard]] Expected<std::shared_ptr<const ShapePlan>> find_plan();
  [[nodiscard]] bool known_plan(std::span<const Dims> dims) const;
  [[nodiscard]] Status resolve_bindings();
  void count_input_copy(std::size_t bytes);
  void log(std::string_view message) const;

  std::shared_ptr<const Factory> factory_;
  ExecutorOptions options_;
  std::shared_ptr<const ShapePlan> plan_;
  std::vector<Dims> pending_dims_;  // dims of inputs set since the plan was last chosen
  std::vector<InputState> input_state_;
  // Inputs whose dims differ from the plan's (or every set_input of a lending executor) wait
  // here until run(). Made on first use, at least as big as the factory's bound (bound_bytes),
  // and only grown, so switching shapes within the bound does not allocate again.
  std::vector<AlignedBuffer> park_;
  std::vector<Dims> park_dims_;
  // Plans this executor used, most recent last: switching back to one is a lookup.
  std::vector<std::shared_ptr<const ShapePlan>> seen_plans_;
  // Zero-copy bindings: per input / output; a view with dtype undefined is unbound.
  std::vector<ConstTensorView> bound_in_;
  std::vector<TensorView> bound_out_;
  std::vector<const void*> value_ptr_;  // per value: caller memory that replaces its slot, or nullptr
  std::vector<int> copy_out_;           // bound outputs copied at the end of run()
  bool views_dirty_ = true;
  ExecutorStats stats_;
  CopyStats pending_copies_;  // copies made since the last run, charged to the next
  // Grows the scratch the plan's kernels need: the slots' (budget) or the private one.
  void reserve_workspace(std::size_t bytes);
  // Whether the arena is lent by the budget (lend_arena on the budget, not a private pool).
  [[nodiscard]] bool lending() const { return options_.lend_arena && !options_.parallel; }
  // Owns the arena of `bytes`, or with lending() makes sure the budget's arenas are that big.
  void reserve_arena(std::size_t bytes);
  // Bytes of `value` in the factory's bound plan (0 without a bound or outside the arena): the
  // least an own input/output buffer is made with, so in-bound shapes never grow it.
  [[nodiscard]] std::size_t bound_bytes(int32_t value) const;
  std::size_t lent_reserved_ = 0;  // arena bytes this lending executor made sure of
  // Start of the arena the views point into: the owned one, or the one leased by the last run.
  [[nodiscard]] const std::byte* arena_base() const { return lending() ? lent_base_ : arena_.data(); }

  AlignedBuffer arena_;
  std::byte* lent_base_ = nullptr;      // with lending(): the arena leased by the current/last run
  std::vector<AlignedBuffer> own_out_;  // with lending(): where unbound outputs are written
  AlignedBuffer workspace_;             // private scratch, only with options_.parallel
  std::size_t ws_reserved_ = 0;         // scratch bytes this executor made sure of
  // Per step of a plan, resolved views; step s uses in[in_begin[s] .. in_begin[s+1]).
  struct StepViews {
    std::vector<ConstTensorView> in;
    std::vector<TensorView> out;
    std::vector<std::size_t> in_begin, out_begin;
    void reserve(const ShapePlan& plan);
  };
  StepViews views_;  // of plan_
  // Continuation stages (plan.h: shapes known only at run time). stages_[k - 1] is stage k: one
  // arena for every plan of that stage, and the plans this executor ran there (a few, most
  // recent last), each with its views. While the cut values repeat (or alternate among a few),
  // the same plans run again without planning or allocating.
  struct StagePlan {
    std::shared_ptr<const ShapePlan> plan;
    std::shared_ptr<const ShapePlan> head;  // keeps plan->head alive (and its address unique)
    StepViews views;
    uint64_t views_epoch = 0;  // views_epoch_ the views were resolved for
  };
  struct Stage {
    AlignedBuffer arena;
    std::vector<StagePlan> plans;
  };
  std::vector<Stage> stages_;
  uint64_t views_epoch_ = 1;               // bumped whenever views into other stages may be stale
  const ShapePlan* final_plan_ = nullptr;  // the last stage of the last successful run
  std::vector<ConstTensorView> cut_views_;
  // Runs the continuation stages after plan_'s steps; `ws` is re-leased when a stage needs more.
  [[nodiscard]] Status run_stages(const Parallel& par, std::size_t& profile_row);
  // Adds `plan` (continuing `head`) to stage k (1-based), sizing its arena and workspace.
  StagePlan& adopt_stage(std::size_t k, std::shared_ptr<const ShapePlan> head,
                         std::shared_ptr<const ShapePlan> plan);
  void bind_views(const ShapePlan& plan, StepViews& views);
  void run_steps(const ShapePlan& plan, const StepViews& views, std::span<std::byte> workspace,
                 const Parallel& par, std::size_t& profile_row);
  // Bound outputs produced by `plan` (a stage): written in place when their dims match.
  [[nodiscard]] Status bind_stage_outputs(const ShapePlan& plan);
  [[nodiscard]] const std::byte* stage_base(int32_t stage) const;
  std::vector<OpProfile> profile_;
  bool ran_ = false;
};

// Alignment bind_input / bind_output require for `dtype`: the element size (what kernels
// need for aligned element access). 64 (kAlignment) is better still.
[[nodiscard]] std::size_t bind_alignment(DType dtype);

}  // namespace weave
