#include "core/runtime/factory.h"

#include <algorithm>
#include <atomic>

#include "core/common/buffer.h"
#include "core/compiler/for_kernels.h"
#include "core/kernels/registry.h"
#include "core/params/param_store.h"
#include "core/threads/thread_budget.h"

namespace weave {
namespace {
constexpr std::size_t kRecentPlans = 8;

// Node indices by the bytes of the params they read, most first (ties in graph order).
std::vector<int> heaviest_first(const Graph& g) {
  std::vector<std::size_t> weight(g.nodes.size(), 0);
  for (std::size_t n = 0; n < g.nodes.size(); ++n)
    for (int32_t v : g.nodes[n].inputs)
      if (v != kNoValue && g.values[v].kind == ValueKind::param)
        weight[n] += g.params[g.values[v].param].data.size();
  std::vector<int> order(g.nodes.size());
  for (std::size_t n = 0; n < order.size(); ++n) order[n] = static_cast<int>(n);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weight[a] > weight[b]; });
  return order;
}

std::string list_names(std::span<const TensorInfo> infos) {
  std::string s;
  for (const auto& i : infos) s += (s.empty() ? "'" : ", '") + i.name + "'";
  return s.empty() ? "none" : s;
}
}  // namespace

// Params go as soon as every reader has packed them (no graph output, unless options keep
// them): the memory they free is what the next kernels pack into, which on a virtual machine
// costs far less than pages touched for the first time.
class Factory::ParamRelease {
 public:
  ParamRelease(Graph& g, const FactoryOptions& options)
      : g_(g), left_(g.values.size()), keep_(g.values.size()), off_(options.keep_packed_params) {
    for (const Node& node : g.nodes)
      for (int32_t v : node.inputs)
        if (v != kNoValue && g.values[v].kind == ValueKind::param)
          left_[v].fetch_add(1, std::memory_order_relaxed);
    for (int32_t v : g.outputs) keep_[v].store(true, std::memory_order_relaxed);
  }
  // Node n's kernel was made: its params that nobody else still needs are dropped.
  void done(int n, const Kernel& kernel) {
    if (off_) return;
    const Node& node = g_.nodes[n];
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      const int32_t v = node.inputs[k];
      if (v == kNoValue || g_.values[v].kind != ValueKind::param) continue;
      if (!kernel.packs_input(k)) keep_[v].store(true, std::memory_order_relaxed);
      // The last reader to finish sees every other reader's keep_ (acq_rel on the count).
      if (left_[v].fetch_sub(1, std::memory_order_acq_rel) == 1 && !keep_[v].load(std::memory_order_relaxed))
        g_.params[g_.values[v].param].data = SharedBytes();
    }
  }

 private:
  Graph& g_;
  std::vector<std::atomic<int>> left_;
  std::vector<std::atomic<bool>> keep_;
  bool off_;
};

Expected<std::shared_ptr<const Factory>> Factory::create(Graph graph, const FactoryOptions& options) {
  WEAVE_TRY(graph.validate());
  std::shared_ptr<Factory> f(new Factory());
  f->graph_ = std::move(graph);
  const KernelRegistry& reg = options.registry ? *options.registry : KernelRegistry::global();
  // The rewrites for this registry's kernels (the fast path's layout and fusions) come first:
  // its kernels are created from the graph they leave.
  WEAVE_TRY(compiler::rewrite_for_kernels(f->graph_, reg));
  // R6: before any kernel sees the params, so kernels and plans point at the shared bytes.
  if (options.dedup_params) ParamStore::global().intern(f->graph_);
  const Graph& g = f->graph_;
  const int opset = g.kernel_opset();

  // Create every kernel, collecting all failures so one pass reports every bad node. Kernels
  // are independent and creating them packs weights (most of a fast factory's load time), so
  // they are made on the process's compute slots, each lane taking the next node left. Nodes
  // go heaviest first (by the bytes of their params), so that the big layers at the end of a
  // network start early and the lanes finish together. A lane also interns the blocks its
  // kernels packed: hashing them is the other big part of packing.
  f->kernels_.resize(g.nodes.size());
  f->impls_.resize(g.nodes.size());
  std::vector<std::string> node_errors(g.nodes.size());
  std::vector<std::size_t> node_packed(g.nodes.size(), 0);
  const auto nodes = static_cast<int64_t>(g.nodes.size());
  std::vector<int> order = heaviest_first(g);
  std::atomic<int64_t> next{0};
  ParamRelease release(f->graph_, options);
  const Parallel& par = ThreadBudget::global().parallel(0);
  const int64_t lanes = std::min<int64_t>(par.threads(), std::max<int64_t>(nodes, 1));
  const PageRecycling recycle;  // the pages of dropped params become packed blocks
  par.for_range(lanes, 1, [&](int64_t, int64_t) {
    for (int64_t i = next.fetch_add(1); i < nodes; i = next.fetch_add(1)) {
      const int n = order[static_cast<std::size_t>(i)];
      f->create_kernel(reg, n, opset, node_errors[n]);
      if (!node_errors[n].empty()) continue;
      node_packed[n] = f->share_packed(*f->kernels_[n], options);
      release.done(n, *f->kernels_[n]);
    }
  });
  std::string errors;
  for (const std::string& e : node_errors)
    if (!e.empty()) errors += (errors.empty() ? "" : "\n") + e;
  if (!errors.empty()) return Error(errors);
  for (std::size_t b : node_packed) f->packed_bytes_ += b;

  // Default dims: options, then "plan_shape.<name>" metadata, then batch 1 for dim-0-only dynamics.
  f->default_dims_.resize(g.inputs.size());
  f->has_default_dims_ = true;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const TensorInfo& info = g.input_infos[i];
    Shape s = info.shape;
    if (auto it = options.plan_shapes.find(info.name); it != options.plan_shapes.end()) {
      s = it->second;
    } else if (auto m = g.metadata.find("plan_shape." + info.name); m != g.metadata.end()) {
      Shape parsed;
      if (parse_shape(m->second, parsed)) s = parsed;
    } else if (!s.empty() && s[0] < 0) {
      s[0] = 1;
    }
    if (!shape_is_static(s) || s.size() > static_cast<std::size_t>(kMaxRank)) {
      f->has_default_dims_ = false;
      continue;
    }
    f->default_dims_[i] = Dims(s);
  }
  WEAVE_TRY(f->setup_bounds(options));
  if (f->has_default_dims_) {
    auto plan = make_shape_plan(g, f->kernels_, f->default_dims_, f->bound_for(f->default_dims_));
    if (!plan) return plan.error();
    f->default_plan_ = *plan;
    f->recent_plans_.push_back(*plan);
  }
  return std::shared_ptr<const Factory>(std::move(f));
}

Expected<int> Factory::input_index(std::string_view name) const {
  for (std::size_t i = 0; i < graph_.input_infos.size(); ++i)
    if (graph_.input_infos[i].name == name) return static_cast<int>(i);
  return make_error("no input named '", name, "'; the inputs are ", list_names(graph_.input_infos));
}

Expected<int> Factory::output_index(std::string_view name) const {
  for (std::size_t i = 0; i < graph_.output_infos.size(); ++i)
    if (graph_.output_infos[i].name == name) return static_cast<int>(i);
  return make_error("no output named '", name, "'; the outputs are ", list_names(graph_.output_infos));
}

bool Factory::default_input_dims(std::vector<Dims>& out) const {
  if (!has_default_dims_) return false;
  out = default_dims_;
  return true;
}

Expected<std::shared_ptr<const ShapePlan>> Factory::plan_for(std::span<const Dims> input_dims) const {
  {
    std::lock_guard<std::mutex> lock(plans_mutex_);
    for (const auto& p : recent_plans_)
      if (std::equal(p->input_dims.begin(), p->input_dims.end(), input_dims.begin(), input_dims.end()))
        return p;
  }
  // Planning runs outside the lock; two threads planning the same new dims both succeed and
  // the cache keeps one.
  auto plan = make_shape_plan(graph_, kernels_, input_dims, bound_for(input_dims));
  if (!plan) return plan.error();
  std::lock_guard<std::mutex> lock(plans_mutex_);
  if (recent_plans_.size() >= kRecentPlans) recent_plans_.erase(recent_plans_.begin());
  recent_plans_.push_back(*plan);
  return *plan;
}

Expected<std::shared_ptr<const ShapePlan>> Factory::continue_plan(
    const ShapePlan& head, std::span<const ConstTensorView> values) const {
  {
    std::lock_guard<std::mutex> lock(head.continuations_mutex);
    for (const auto& p : head.continuations)
      if (continues_for(*p, values)) return p;
  }
  // Planned outside the lock, like plan_for.
  auto plan = make_continuation(graph_, kernels_, head, values);
  if (!plan) return plan.error();
  std::lock_guard<std::mutex> lock(head.continuations_mutex);
  if (head.continuations.size() >= kRecentPlans) head.continuations.erase(head.continuations.begin());
  head.continuations.push_back(*plan);
  return *plan;
}

std::size_t Factory::share_packed(Kernel& k, const FactoryOptions& options) {
  std::size_t bytes = 0;
  k.visit_packed([&](SharedBytes& b) {
    if (b.size() == 0) return;
    if (options.dedup_params) {
      const int64_t n = static_cast<int64_t>(b.size());
      b = ParamStore::global().intern(DType::uint8, std::span<const int64_t>(&n, 1), b);
    }
    bytes += b.size();
  });
  return bytes;
}

std::size_t Factory::resident_param_bytes() const {
  std::size_t n = 0;
  for (const Param& p : graph_.params) n += p.data.size();
  return n;
}

void Factory::create_kernel(const KernelRegistry& reg, int n, int opset, std::string& error) {
  const Graph& g = graph_;
  const Node& node = g.nodes[n];
  std::vector<const Value*> ins(node.inputs.size(), nullptr);
  std::vector<ConstTensorView> consts(node.inputs.size());
  for (std::size_t k = 0; k < node.inputs.size(); ++k) {
    int32_t v = node.inputs[k];
    if (v == kNoValue) continue;
    ins[k] = &g.values[v];
    if (g.values[v].kind == ValueKind::param)
      consts[k] = ConstTensorView{g.params[g.values[v].param].data.data(), g.values[v].dtype,
                                  Dims(g.values[v].shape)};
  }
  KernelSetup setup{node, g.node_label(n), ins, consts, opset};
  auto k = reg.create(setup, &impls_[n]);
  if (!k) {
    error = k.message();
    return;
  }
  kernels_[n] = std::move(*k);
}

}  // namespace weave

namespace weave {

Status Factory::setup_bounds(const FactoryOptions& options) {
  const Graph& g = graph_;
  max_dims_.assign(g.inputs.size(), Dims{});
  replan_beyond_bound_ = options.replan_beyond_bound;
  if (options.max_shapes.empty()) return {};
  std::vector<Dims> bound_dims(g.inputs.size());
  for (const auto& [name, shape] : options.max_shapes) {
    auto i = input_index(name);
    if (!i) return Error(i.message()).context("max_shapes");
    const TensorInfo& info = g.input_infos[*i];
    if (shape.size() != info.shape.size() || shape.size() > static_cast<std::size_t>(kMaxRank))
      return make_error("max_shapes: input '", name, "' is ", info.str(), ", bound ", shape_str(shape),
                        " has another rank");
    for (std::size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] < 1)
        return make_error("max_shapes: input '", name, "': bound ", shape_str(shape), " has a dim below 1");
      if (info.shape[k] >= 0 && info.shape[k] != shape[k])
        return make_error("max_shapes: input '", name, "' is ", info.str(), ", bound ", shape_str(shape),
                          " changes a static dim");
    }
    max_dims_[*i] = Dims(shape);
  }
  // Unbounded inputs take their default dims for the bound plan.
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    if (max_dims_[i].rank() > 0) {
      bound_dims[i] = max_dims_[i];
    } else if (has_default_dims_) {
      bound_dims[i] = default_dims_[i];
    } else if (shape_is_static(g.input_infos[i].shape)) {
      bound_dims[i] = Dims(g.input_infos[i].shape);
    } else {
      return make_error("max_shapes: input '", g.input_infos[i].name, "' (", g.input_infos[i].str(),
                        ") has dynamic dims but no bound; give max_shapes for it too");
    }
  }
  auto plan = make_shape_plan(g, kernels_, bound_dims);
  if (!plan) return Error(plan.message()).context("max_shapes");
  bound_plan_ = *plan;
  recent_plans_.push_back(bound_plan_);
  // Default dims beyond the bound would make every new executor fail: say so now.
  if (has_default_dims_)
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      if (!within_bound(static_cast<int>(i), default_dims_[i]))
        return make_error("max_shapes: input '", g.input_infos[i].name, "': default dims ",
                          shape_str(default_dims_[i].span()), " exceed the bound ",
                          shape_str(max_dims_[i].span()));
  return {};
}

bool Factory::within_bound(int input, const Dims& dims) const {
  const Dims& b = max_dims_[input];
  if (b.rank() == 0) return true;
  if (b.rank() != dims.rank()) return false;
  for (int k = 0; k < b.rank(); ++k)
    if (dims[k] > b[k]) return false;
  return true;
}

Status Factory::check_bound(int input, const Dims& dims) const {
  if (within_bound(input, dims)) return {};
  return make_error("input '", graph_.input_infos[input].name, "': dims ", shape_str(dims.span()),
                    " exceed the planned bound ", shape_str(max_dims_[input].span()),
                    " (max_shapes); raise the bound or allow re-planning (replan_beyond_bound)");
}

const ShapePlan* Factory::bound_for(std::span<const Dims> input_dims) const {
  if (!bound_plan_ || input_dims.size() != max_dims_.size()) return nullptr;
  for (std::size_t i = 0; i < input_dims.size(); ++i) {
    // Unbounded inputs must have the dims the bound plan was made with.
    if (max_dims_[i].rank() == 0 && !(bound_plan_->input_dims[i] == input_dims[i])) return nullptr;
    if (!within_bound(static_cast<int>(i), input_dims[i])) return nullptr;
  }
  return bound_plan_.get();
}

}  // namespace weave
