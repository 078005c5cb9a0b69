#include "core/compiler/fuse_hardswish.h"

#include <cmath>

#include "core/compiler/pattern.h"

namespace weave {

using namespace compiler;

namespace {

// v = Clip(x + 3, 0, 6): returns x or kNoValue.
int32_t relu6_plus3(Pattern& p, int32_t v) {
  const std::size_t m = p.mark();
  const Node* clip = p.take(v, "Clip");
  if (!clip || clip->inputs.size() != 3 || !p.is_const(clip->inputs[1], 0.0) ||
      !p.is_const(clip->inputs[2], 6.0))
    return p.reset(m), kNoValue;
  const Node* add = p.take(clip->inputs[0], "Add");
  if (add && add->inputs.size() == 2) {
    if (p.is_const(add->inputs[1], 3.0)) return add->inputs[0];
    if (p.is_const(add->inputs[0], 3.0)) return add->inputs[1];
  }
  p.reset(m);
  return kNoValue;
}

// v = relu6(x + 3) / 6 or * (1/6), or HardSigmoid(x, 1/6, 0.5): returns x or kNoValue.
int32_t scaled(Pattern& p, int32_t v) {
  const std::size_t m = p.mark();
  if (const Node* d = p.take(v, "Div"); d && d->inputs.size() == 2 && p.is_const(d->inputs[1], 6.0)) {
    const int32_t x = relu6_plus3(p, d->inputs[0]);
    if (x != kNoValue) return x;
  }
  p.reset(m);
  if (const Node* mul = p.take(v, "Mul"); mul && mul->inputs.size() == 2) {
    for (int s = 0; s < 2; ++s)
      if (p.is_const(mul->inputs[1 - s], 1.0 / 6.0)) {
        const int32_t x = relu6_plus3(p, mul->inputs[s]);
        if (x != kNoValue) return x;
      }
  }
  p.reset(m);
  if (const Node* h = p.take(v, "HardSigmoid");
      h && h->inputs.size() == 1 && std::fabs(h->attrs.get_float("alpha", 0.2f) - 1.0 / 6.0) < 1e-6 &&
      std::fabs(h->attrs.get_float("beta", 0.5f) - 0.5) < 1e-6)
    return h->inputs[0];
  p.reset(m);
  return kNoValue;
}

// The root `n`: returns x when n computes hard-swish of x.
int32_t root(Pattern& p, const Node& n) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1) return kNoValue;
  const std::size_t m = p.mark();
  // Div(x * relu6(x+3), 6) or Mul(x * relu6(x+3), 1/6)
  for (int s = 0; s < 2; ++s) {
    const bool div6 = n.op == "Div" && s == 0 && p.is_const(n.inputs[1], 6.0);
    const bool mul6 = n.op == "Mul" && p.is_const(n.inputs[1 - s], 1.0 / 6.0);
    if (!div6 && !mul6) continue;
    const Node* prod = p.take(n.inputs[s], "Mul");
    if (prod && prod->inputs.size() == 2)
      for (int t = 0; t < 2; ++t) {
        const std::size_t mt = p.mark();
        const int32_t x = relu6_plus3(p, prod->inputs[1 - t]);
        if (x != kNoValue && x == prod->inputs[t]) return x;
        p.reset(mt);
      }
    p.reset(m);
  }
  // Mul(x, relu6(x+3)/6) or Mul(x, HardSigmoid(x))
  if (n.op == "Mul") {
    for (int s = 0; s < 2; ++s) {
      const int32_t x = scaled(p, n.inputs[1 - s]);
      if (x != kNoValue && x == n.inputs[s]) return x;
      p.reset(m);
    }
  }
  return kNoValue;
}

}  // namespace

Status fuse_hardswish(Graph& g) {
  Pattern p(g);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op != "Div" && n.op != "Mul") continue;
    const int32_t x = root(p, n);
    if (x != kNoValue) p.replace(g, i, "HardSwish", {x}, Attributes{});
  }
  p.finish(g);
  return {};
}

}  // namespace weave
