// Executor: the mutable half of running a model — an arena, bound inputs, outputs and an
// optional profile. One per thread or element; creating one from a Factory whose plan exists
// costs a plan lookup and one arena allocation (R3). Not thread-safe: use one per thread (many
// executors of one shared Factory may run at once on different threads).
//
// Stateful use (R9):          ex.set_input("x", view); ex.run(); ex.output("logits");
// Stateless use (R9):         auto outs = ex.run({view_x});   // owning copies of every output
//
// Changing input dims re-plans (plans are cached in the Factory and shared); run() itself never
// allocates.
#pragma once

#include <chrono>
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
  // The most threads run() may use from the process-wide budget (core/runtime/thread_budget.h),
  // the calling thread included: 0 = as many as the budget has, 1 = the calling thread only.
  // A cap, not a pool: run() holds one slot of the budget (waiting while all are taken) and
  // kernels borrow up to threads - 1 more only if they are idle.
  int threads = 0;
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
  [[nodiscard]] static Expected<Executor> create(std::shared_ptr<const Factory> factory,
                                                 ExecutorOptions options = {});

  [[nodiscard]] const Factory& factory() const { return *factory_; }
  [[nodiscard]] const std::shared_ptr<const Factory>& factory_ptr() const { return factory_; }

  // Copies the tensor into the executor. Errors name the input and both shapes/dtypes.
  [[nodiscard]] Status set_input(int index, ConstTensorView value);
  [[nodiscard]] Status set_input(std::string_view name, ConstTensorView value);
  [[nodiscard]] Status run();
  // Views into the executor's memory, valid until the next set_input/run.
  [[nodiscard]] Expected<ConstTensorView> output(int index) const;
  [[nodiscard]] Expected<ConstTensorView> output(std::string_view name) const;
  // Stateless: binds all inputs (in input order), runs, returns owning copies of all outputs.
  [[nodiscard]] Expected<std::vector<Tensor>> run(std::span<const ConstTensorView> inputs);

  [[nodiscard]] const std::vector<OpProfile>& profile() const { return profile_; }
  [[nodiscard]] std::size_t arena_bytes() const { return arena_.size(); }
  [[nodiscard]] const ShapePlan* plan() const { return plan_.get(); }

 private:
  explicit Executor(std::shared_ptr<const Factory> f, ExecutorOptions o)
      : factory_(std::move(f)), options_(std::move(o)) {}
  [[nodiscard]] Status use_plan(std::shared_ptr<const ShapePlan> plan);
  void bind_views();
  [[nodiscard]] ConstTensorView slot_view(int32_t value) const;

  std::shared_ptr<const Factory> factory_;
  ExecutorOptions options_;
  std::shared_ptr<const ShapePlan> plan_;
  std::vector<Dims> pending_dims_;  // dims of inputs set since the plan was last chosen
  std::vector<bool> input_set_;
  std::vector<Tensor> parked_;  // inputs whose dims differ from the plan's, until run() re-plans
  bool has_parked_ = false;
  AlignedBuffer arena_;
  AlignedBuffer workspace_;
  // Per step, resolved views; step s uses in_views_[in_begin_[s] .. in_begin_[s+1]).
  std::vector<ConstTensorView> in_views_;
  std::vector<TensorView> out_views_;
  std::vector<std::size_t> in_begin_, out_begin_;
  std::vector<OpProfile> profile_;
  bool ran_ = false;
};

}  // namespace weave
