#include "core/runtime/factory.h"

#include <algorithm>

#include "core/kernels/registry.h"
#include "core/runtime/param_store.h"

namespace weave {
namespace {
constexpr std::size_t kRecentPlans = 8;

std::string list_names(std::span<const TensorInfo> infos) {
  std::string s;
  for (const auto& i : infos) s += (s.empty() ? "'" : ", '") + i.name + "'";
  return s.empty() ? "none" : s;
}
}  // namespace

Expected<std::shared_ptr<const Factory>> Factory::create(Graph graph, const FactoryOptions& options) {
  WEAVE_TRY(graph.validate());
  std::shared_ptr<Factory> f(new Factory());
  f->graph_ = std::move(graph);
  // R6: before any kernel sees the params, so kernels and plans point at the shared bytes.
  if (options.dedup_params) ParamStore::global().intern(f->graph_);
  const Graph& g = f->graph_;
  const KernelRegistry& reg = options.registry ? *options.registry : KernelRegistry::global();
  const int opset = g.kernel_opset();

  // Create every kernel, collecting all failures so one pass reports every bad node.
  std::string errors;
  f->kernels_.resize(g.nodes.size());
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
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
    KernelSetup setup{node, g.node_label(static_cast<int32_t>(n)), ins, consts, opset};
    auto k = reg.create(setup);
    if (!k) {
      errors += (errors.empty() ? "" : "\n") + k.message();
      continue;
    }
    f->kernels_[n] = std::move(*k);
  }
  if (!errors.empty()) return Error(errors);

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
  if (f->has_default_dims_) {
    auto plan = make_shape_plan(g, f->kernels_, f->default_dims_);
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
  auto plan = make_shape_plan(graph_, kernels_, input_dims);
  if (!plan) return plan.error();
  std::lock_guard<std::mutex> lock(plans_mutex_);
  if (recent_plans_.size() >= kRecentPlans) recent_plans_.erase(recent_plans_.begin());
  recent_plans_.push_back(*plan);
  return *plan;
}

}  // namespace weave
