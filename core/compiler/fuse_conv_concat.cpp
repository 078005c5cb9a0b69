#include "core/compiler/fuse_conv_concat.h"

#include <cstdlib>
#include <cstring>

#include "core/compiler/graph_edit.h"
#include "core/kernels/fused_ops.h"

namespace weave::compiler {
namespace {

// An NHWC Conv the fused node can take: the fast kernel's, not depthwise (its output pixels
// cannot be strided); a residual is read as the Conv reads it alone.
bool fusable_conv(const Graph& g, const Node& c, const KernelRegistry& registry) {
  if (c.op != "Conv" || c.outputs.size() != 1 || c.inputs.size() < 2 ||
      c.inputs.size() > fused::kConvConcatInputs)
    return false;
  if (c.attrs.get_string("weave_layout") != "NHWC") return false;
  auto value = [&](std::size_t i) -> const Value* {
    return i < c.inputs.size() && c.inputs[i] != kNoValue ? &g.values[c.inputs[i]] : nullptr;
  };
  if (!registry.takes_nhwc(g, c)) return false;
  const Shape& w = value(1)->shape;
  return !(w[1] == 1 && c.attrs.get_int("group", 1) == w[0]);
}

}  // namespace

Status fuse_conv_concat(Graph& g, const KernelRegistry& registry) {
  if (!registry.supports(fused::kConvConcat)) return {};
  const char* env = std::getenv("WEAVE_FUSE_CONV_CONCAT");
  if (env != nullptr && std::strcmp(env, "0") == 0) return {};
  const std::vector<int> uses = use_counts(g);
  const std::vector<int32_t> prod = producers(g);
  std::vector<bool> dead(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& cat = g.nodes[i];
    if (cat.op != "Concat" || cat.outputs.size() != 1 || cat.inputs.size() < 2) continue;
    const Value& joined = g.values[cat.outputs[0]];
    if (!joined.rank_known || joined.shape.size() != 4 || joined.dtype != DType::float32 ||
        cat.attrs.get_int("axis", 0) != 3)
      continue;
    if (cat.inputs.size() > static_cast<std::size_t>(fused::kConvConcatMembers)) continue;
    bool ok = true;
    for (int32_t v : cat.inputs) {
      const int32_t p = v < 0 ? -1 : prod[v];
      ok = ok && p >= 0 && !dead[p] && uses[v] == 1 && !is_graph_output(g, v) &&
           fusable_conv(g, g.nodes[p], registry);
    }
    if (!ok) continue;
    Node f;
    f.op = fused::kConvConcat;
    f.outputs = cat.outputs;
    for (std::size_t k = 0; k < cat.inputs.size(); ++k) {
      Node& c = g.nodes[prod[cat.inputs[k]]];
      for (std::size_t j = 0; j < fused::kConvConcatInputs; ++j)
        f.inputs.push_back(j < c.inputs.size() ? c.inputs[j] : kNoValue);
      for (const auto& [name, a] : c.attrs.items()) f.attrs.set(fused::conv_prefix(k) + name, a);
      dead[prod[cat.inputs[k]]] = true;
      c.inputs.clear();
      c.outputs.clear();
    }
    f.attrs.set("convs", static_cast<int64_t>(cat.inputs.size()));
    cat = std::move(f);
  }
  g.compact(dead);
  return {};
}

}  // namespace weave::compiler
