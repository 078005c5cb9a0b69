// Factory: everything about a model that never changes while it runs — the graph, its params,
// one kernel per node (weights packed once) and the shape plans made so far. It is immutable
// once created and shared (std::shared_ptr<const Factory>) by every Executor of every thread
// and element that runs the model (R3). All methods are thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/graph/graph.h"
#include "core/kernels/kernel.h"
#include "core/params/share_params.h"
#include "core/runtime/plan.h"

namespace weave {

class KernelRegistry;

struct FactoryOptions {
  // Shapes to plan for up front, by input name ("x" -> {1,3,640,640}). Inputs whose static
  // shape is only dynamic in dim 0 default to batch 1; other dynamic inputs are planned at the
  // first set_input (or taken from the graph's "plan_shape.<input>" metadata written by
  // `weave compile --shape`).
  std::map<std::string, Shape> plan_shapes;
  // R8: the upper bound of every dim, by input name ("x" -> {1,3,960,960}). The factory plans
  // once for the bound; any dims within it then reuse that arena layout, so an executor sized
  // at creation runs every in-bound shape without allocating (the first run of a new shape
  // still builds its plan once: shapes, folded values, steps). Inputs not named here are
  // unbounded and planned as before. Dims beyond the bound are an error naming the input, the
  // dims and the bound, unless `replan_beyond_bound` is set: then they get a plan of their own
  // (the executor's arena may grow; Executor reports it through its log callback and stats).
  std::map<std::string, Shape> max_shapes;
  bool replan_beyond_bound = false;
  const KernelRegistry* registry = nullptr;  // default: KernelRegistry::global()
  // R6: store params of identical content (dtype, shape, bytes) once per process, across
  // factories and models, through ParamStore::global() (core/params/param_store.h). Costs one
  // hash pass over the params at creation. false keeps every param where it was loaded (e.g.
  // in the artifact's mmap) and out of the store.
  bool dedup_params = true;
  // Kernels that pack a param's bytes at create (the fast path's convolutions) no longer read
  // the param at run time; once every reader of a param has packed it, the factory drops its
  // bytes (the graph keeps the param's dtype and shape, Param::data becomes empty), so the
  // model's weights are held once, packed. true keeps every param's bytes (e.g. to share them
  // into another graph with share_params).
  bool keep_packed_params = false;
};

class Factory {
 public:
  [[nodiscard]] static Expected<std::shared_ptr<const Factory>> create(Graph graph,
                                                                       const FactoryOptions& options = {});

  // R1: real inputs only; params are counted apart.
  [[nodiscard]] int num_inputs() const { return static_cast<int>(graph_.inputs.size()); }
  [[nodiscard]] int num_outputs() const { return static_cast<int>(graph_.outputs.size()); }
  [[nodiscard]] int num_params() const { return static_cast<int>(graph_.params.size()); }
  [[nodiscard]] int64_t param_bytes() const { return graph_.param_bytes(); }
  // Bytes of packed weights the kernels hold (shared across factories with dedup_params), and
  // bytes of params still held (params every reader packed are dropped, keep_packed_params).
  [[nodiscard]] std::size_t packed_bytes() const { return packed_bytes_; }
  [[nodiscard]] std::size_t resident_param_bytes() const;
  // R2: the model's own names; an unknown name is an error listing the names that exist.
  [[nodiscard]] Expected<int> input_index(std::string_view name) const;
  [[nodiscard]] Expected<int> output_index(std::string_view name) const;
  [[nodiscard]] const TensorInfo& input_info(int i) const { return graph_.input_infos[i]; }
  [[nodiscard]] const TensorInfo& output_info(int i) const { return graph_.output_infos[i]; }
  [[nodiscard]] std::span<const TensorInfo> inputs() const { return graph_.input_infos; }
  [[nodiscard]] std::span<const TensorInfo> outputs() const { return graph_.output_infos; }
  [[nodiscard]] const std::map<std::string, std::string>& metadata() const { return graph_.metadata; }
  [[nodiscard]] const Graph& graph() const { return graph_; }
  [[nodiscard]] const Kernel& kernel(int node) const { return *kernels_[node]; }
  // The implementation that runs node `node` ("fast", "reference", or a custom registry's).
  [[nodiscard]] const std::string& kernel_impl(int node) const { return impls_[node]; }

  // The plan made at creation, or nullptr when some input dims are only known at run time.
  [[nodiscard]] std::shared_ptr<const ShapePlan> default_plan() const { return default_plan_; }
  // The plan for these input dims, made once and then shared (a small cache of recent shapes).
  [[nodiscard]] Expected<std::shared_ptr<const ShapePlan>> plan_for(std::span<const Dims> input_dims) const;
  // The continuation of `head` (a plan cut before a node whose shapes need values known only at
  // run time, see plan.h) for `values` of its cut_values: made once per distinct values, then
  // shared (a small cache of recent values per head plan).
  [[nodiscard]] Expected<std::shared_ptr<const ShapePlan>> continue_plan(
      const ShapePlan& head, std::span<const ConstTensorView> values) const;
  // Default input dims: from the options or metadata; false if some dim is unknown.
  [[nodiscard]] bool default_input_dims(std::vector<Dims>& out) const;

  // R8 bounds. The plan for the upper bound (nullptr without max_shapes); every executor sizes
  // its arena and workspace for it at creation.
  [[nodiscard]] std::shared_ptr<const ShapePlan> bound_plan() const { return bound_plan_; }
  // Per input: the bound (rank 0 when the input is unbounded).
  [[nodiscard]] const Dims& max_dims(int input) const { return max_dims_[input]; }
  [[nodiscard]] bool replan_beyond_bound() const { return replan_beyond_bound_; }
  // Ok when `dims` lie within the bound of input `input` (always for unbounded inputs);
  // otherwise an error naming the input, its dims and the bound.
  [[nodiscard]] Status check_bound(int input, const Dims& dims) const;
  [[nodiscard]] bool within_bound(int input, const Dims& dims) const;

  Factory(const Factory&) = delete;
  Factory& operator=(const Factory&) = delete;

 private:
  Factory() = default;
  // Validates options.max_shapes and plans for the bound (called at the end of create).
  [[nodiscard]] Status setup_bounds(const FactoryOptions& options);
  // The bound plan when `input_dims` lie within it, else nullptr.
  [[nodiscard]] const ShapePlan* bound_for(std::span<const Dims> input_dims) const;
  // Creates node n's kernel (or sets `error`); safe to run for several nodes at once.
  void create_kernel(const KernelRegistry& reg, int n, int opset, std::string& error);
  // Interns the blocks kernel k packed (dedup); their bytes. Safe for several kernels at once.
  [[nodiscard]] std::size_t share_packed(Kernel& k, const FactoryOptions& options);
  // Drops params that only kernels which packed them read, as those kernels are made.
  class ParamRelease;
  Graph graph_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<std::string> impls_;
  std::size_t packed_bytes_ = 0;
  std::vector<Dims> default_dims_;
  bool has_default_dims_ = false;
  std::shared_ptr<const ShapePlan> default_plan_;
  std::vector<Dims> max_dims_;  // per input; rank 0 = unbounded
  std::shared_ptr<const ShapePlan> bound_plan_;
  bool replan_beyond_bound_ = false;
  mutable std::mutex plans_mutex_;
  mutable std::vector<std::shared_ptr<const ShapePlan>> recent_plans_;
};

// Explicit param sharing (core/params/share_params.h) from a model already loaded: its params'
// bytes as its factory keeps them (FactoryOptions::keep_packed_params for packed ones).
[[nodiscard]] inline Status share_params(Graph& g, const Factory& from, std::span<const ParamLink> links) {
  return share_params(g, from.graph(), links);
}
[[nodiscard]] inline Expected<int> share_common_params(Graph& g, const Factory& from) {
  return share_common_params(g, from.graph());
}

}  // namespace weave
