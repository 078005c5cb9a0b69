#include "core/compiler/fold_channel_scale.h"

#include "core/compiler/graph_edit.h"
#include "core/kernels/fused_ops.h"

namespace weave::compiler {
namespace {

// Scaling the weights costs M x C multiplies a run, on one thread before the GEMM; the product
// it saves is H x W x C, spread over the threads. With T threads the scaling pays where the map
// has more than T x M pixels: folded from 16 x M on (16 cores). efficientnet_b0's maps of 28x28
// and more are folded, its 14x14 ones (80 and 112 outputs) keep their Mul.
constexpr int64_t kPixelsPerOutput = 16;

// Which of the Mul's operands is the map (the product's own NHWC shape) and which the scale
// ([N or 1, 1, 1, C], computed at run time); false when neither order fits.
bool split_mul(const Graph& g, const Node& m, int64_t channels, int32_t& x, int32_t& s) {
  if (m.op != "Mul" || m.inputs.size() != 2 || m.outputs.size() != 1) return false;
  const Shape& out = g.values[m.outputs[0]].shape;
  if (out.size() != 4 || out[3] != channels) return false;
  for (int first = 0; first < 2; ++first) {
    const int32_t a = m.inputs[first], b = m.inputs[1 - first];
    if (a == kNoValue || b == kNoValue || is_param(g, a) || is_param(g, b)) continue;
    const Value &va = g.values[a], &vb = g.values[b];
    if (va.dtype != DType::float32 || vb.dtype != DType::float32 || va.shape != out) continue;
    const Shape& sc = vb.shape;
    if (sc.size() != 4 || sc[1] != 1 || sc[2] != 1 || sc[3] != channels) continue;
    x = a, s = b;
    return true;
  }
  return false;
}

}  // namespace

Status fold_channel_scale(Graph& g, const KernelRegistry& registry) {
  if (!registry.supports(fused::kScaledConv)) return {};
  const std::vector<int> uses = use_counts(g);
  const std::vector<int32_t> prod = producers(g);
  std::vector<bool> dead(g.nodes.size(), false);
  for (Node& c : g.nodes) {
    if (!pointwise_nhwc_conv(g, c, true)) continue;
    const int32_t t = c.inputs[0];
    if (t < 0 || prod[t] < 0 || uses[t] != 1 || is_graph_output(g, t) || dead[prod[t]]) continue;
    const Shape& w = g.values[c.inputs[1]].shape;
    if (w[0] < 1 || w[1] < 1) continue;
    int32_t x = kNoValue, s = kNoValue;
    if (!split_mul(g, g.nodes[prod[t]], w[1], x, s)) continue;
    // The map (known statically; a dynamic one keeps its Mul) must have kPixelsPerOutput x M
    // pixels or more (see there).
    const Shape& map = g.values[t].shape;
    int64_t pixels = 0;
    if (map[1] < 1 || map[2] < 1) continue;
    if (!__builtin_mul_overflow(map[1], map[2], &pixels) && pixels < w[0] * kPixelsPerOutput) continue;
    Node f;
    f.op = fused::kScaledConv;
    f.inputs = {x, c.inputs[1], c.inputs.size() > 2 ? c.inputs[2] : kNoValue,
                c.inputs.size() > 3 ? c.inputs[3] : kNoValue, s};
    f.outputs = c.outputs;
    f.attrs = c.attrs;
    dead[prod[t]] = true;
    g.nodes[prod[t]].inputs.clear();
    g.nodes[prod[t]].outputs.clear();
    c = std::move(f);
  }
  g.compact(dead);
  return {};
}

}  // namespace weave::compiler
