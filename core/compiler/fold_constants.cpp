#include "core/compiler/fold_constants.h"

#include <array>
#include <cstddef>
#include <string_view>

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

namespace {

// Steps a folded node may take (ShapeContext::work): ~0.1 s in a release build.
constexpr int64_t kMaxFoldWork = int64_t{1} << 27;

bool nondeterministic(std::string_view op) {
  static constexpr std::array<std::string_view, 6> kOps = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial"};
  for (auto o : kOps)
    if (o == op) return true;
  return false;
}

// Where an empty tensor's view points: kernels may pass its data to memcpy and the like with a
// length of 0, which must still be a valid pointer (an empty constant or output has none).
alignas(64) std::byte g_empty[64];

template <class View>
void point_empty_at_storage(View& v) {
  if (v.data == nullptr && v.dtype != DType::undefined && shape_numel(v.dims.span()) == 0) v.data = g_empty;
}

// Evaluates node `id` whose inputs are all params. Returns its outputs (one Tensor per node
// output; undefined for omitted ones) or an empty vector when the node cannot be folded.
std::vector<Tensor> evaluate(const Graph& g, int32_t id, const KernelRegistry& registry, int64_t max_bytes) {
  const Node& n = g.nodes[id];
  std::vector<const Value*> in_values;
  std::vector<ConstTensorView> in_views;
  for (int32_t in : n.inputs) {
    if (in == kNoValue) {
      in_values.push_back(nullptr);
      in_views.emplace_back();
      continue;
    }
    in_values.push_back(&g.values[in]);
    in_views.push_back(param_view(g, in));
    point_empty_at_storage(in_views.back());
  }
  const std::string label = g.node_label(id);
  KernelSetup setup{n, label, in_values, in_views, g.kernel_opset()};
  auto kernel = registry.create(setup);
  if (!kernel || !*kernel) return {};

  std::vector<TensorView> out_views(n.outputs.size());
  ShapeContext sc{in_views, out_views, 0, label};
  if (!(*kernel)->infer(sc)) return {};
  int64_t total = 0;
  for (const TensorView& v : out_views) {
    if (v.dtype == DType::undefined) continue;
    // The plan's bound on dims too: a folded empty constant of 2^62 x 2^62 x 0 would reach the
    // next node's infer, which may multiply its dims (fuzz_onnx); the plan refuses it by name.
    if (dtype_size(v.dtype) == 0 || v.dims.rank() > kMaxRank || !dims_within_plan(v.dims.span())) return {};
    const int64_t bytes = checked_bytes(v.dims.span(), dtype_size(v.dtype));
    if (bytes < 0 || bytes > max_bytes - total) return {};
    total += bytes;
  }
  if (sc.workspace > static_cast<std::size_t>(max_bytes)) return {};
  // A node that takes long (a pool over a huge window, a big product) is left to run time: the
  // compile must stay quick whatever the model (hostile windows made it take minutes).
  if (sc.work > kMaxFoldWork) return {};

  std::vector<Tensor> outs;
  outs.reserve(out_views.size());
  for (TensorView& v : out_views) {
    if (v.dtype == DType::undefined) {
      outs.emplace_back();
      continue;
    }
    outs.emplace_back(v.dtype, v.dims);
    v = outs.back().view();
    point_empty_at_storage(v);
  }
  // Outputs that are all empty are all there is to know: running the kernel would only walk
  // an empty tensor's shape, whose other dims may not multiply (the fuzzers' favourite).
  bool all_empty = true;
  for (const TensorView& v : out_views)
    all_empty = all_empty && (v.dtype == DType::undefined || v.numel() == 0);
  if (all_empty) return outs;
  AlignedBuffer workspace(sc.workspace);
  RunContext rc{in_views, out_views, workspace.span(), SerialParallel::instance(), sc.state.get()};
  (*kernel)->run(rc);
  return outs;
}

}  // namespace

Status fold_constants(Graph& g, const KernelRegistry& registry, int64_t max_bytes) {
  ValueAliases alias(g.values.size());
  std::vector<bool> dead(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    alias.apply(n);
    if (n.inputs.empty() || nondeterministic(n.op) || !registry.supports(n.op)) continue;
    bool all_params = true;
    for (int32_t in : n.inputs) all_params = all_params && (in == kNoValue || is_param(g, in));
    bool any_input = false;
    for (int32_t in : n.inputs) any_input = any_input || in != kNoValue;
    if (!all_params || !any_input) continue;
    bool writes_output = false;
    for (int32_t out : n.outputs)
      writes_output = writes_output || (out != kNoValue && is_graph_output(g, out));
    if (writes_output) continue;

    std::vector<Tensor> outs = evaluate(g, static_cast<int32_t>(i), registry, max_bytes);
    if (outs.size() != n.outputs.size()) continue;
    bool complete = true;
    for (std::size_t k = 0; k < outs.size(); ++k)
      complete = complete && (n.outputs[k] == kNoValue || outs[k].dtype() != DType::undefined);
    if (!complete) continue;
    // add_param grows g.values; `n` refers into g.nodes, which does not change here.
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const int32_t out = n.outputs[k];
      if (out == kNoValue) continue;
      int32_t p =
          g.add_param(outs[k].dtype(), outs[k].dims().to_shape(), SharedBytes::copy_of(outs[k].raw()));
      auto name = g.names.values.find(out);
      if (name != g.names.values.end()) g.names.values[p] = name->second;
      alias.set(out, p);
    }
    dead[i] = true;
  }
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (dead[i]) g.nodes[i].inputs.clear();
  g.compact(dead);
  return {};
}

}  // namespace weave
