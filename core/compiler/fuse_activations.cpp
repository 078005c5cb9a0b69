#include "core/compiler/fuse_activations.h"

#include <array>
#include <cmath>

#include "core/compiler/pattern.h"

namespace weave {

using namespace compiler;

namespace {

constexpr double kSqrt2 = 1.41421356237309505;
constexpr double kSqrt2OverPi = 0.79788456080286536;

// The factors of a product of at most three: Mul(a, b), where a or b may itself be a Mul that
// feeds only this one (taken). Returns how many factors (2 or 3) it found.
int factors(Pattern& p, const Node& root, std::array<int32_t, 3>& out) {
  if (root.op != "Mul" || root.inputs.size() != 2) return 0;
  for (int s = 0; s < 2; ++s) {
    const std::size_t m = p.mark();
    if (const Node* in = p.take(root.inputs[s], "Mul"); in && in->inputs.size() == 2) {
      out = {in->inputs[0], in->inputs[1], root.inputs[1 - s]};
      return 3;
    }
    p.reset(m);
  }
  out = {root.inputs[0], root.inputs[1], kNoValue};
  return 2;
}

// v = x * x * x or Pow(x, 3): x, or kNoValue.
int32_t cube(Pattern& p, int32_t v) {
  const std::size_t m = p.mark();
  if (const Node* pw = p.take(v, "Pow"); pw && pw->inputs.size() == 2 && p.is_const(pw->inputs[1], 3.0))
    return pw->inputs[0];
  p.reset(m);
  if (const Node* outer = p.take(v, "Mul"); outer && outer->inputs.size() == 2) {
    for (int s = 0; s < 2; ++s) {
      const std::size_t ms = p.mark();
      const int32_t x = outer->inputs[1 - s];
      if (const Node* sq = p.take(outer->inputs[s], "Mul");
          sq && sq->inputs.size() == 2 && sq->inputs[0] == x && sq->inputs[1] == x)
        return x;
      p.reset(ms);
    }
  }
  p.reset(m);
  return kNoValue;
}

// v = 1 + Erf(x / sqrt 2) (erf = true) or 1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3)): x, or kNoValue.
int32_t gelu_bracket(Pattern& p, int32_t v, bool erf) {
  const std::size_t m = p.mark();
  const Node* add = p.take(v, "Add");
  if (add == nullptr || add->inputs.size() != 2) return p.reset(m), kNoValue;
  const int s = p.is_const(add->inputs[0], 1.0) ? 1 : p.is_const(add->inputs[1], 1.0) ? 0 : -1;
  const Node* f = s < 0 ? nullptr : p.take(add->inputs[s], erf ? "Erf" : "Tanh");
  if (f == nullptr || f->inputs.size() != 1) return p.reset(m), kNoValue;
  const int32_t arg = f->inputs[0];
  const std::size_t ma = p.mark();
  if (erf) {
    // x / sqrt 2 or x * (1 / sqrt 2)
    if (const Node* d = p.take(arg, "Div");
        d && d->inputs.size() == 2 && p.is_const(d->inputs[1], kSqrt2, 1e-5))
      return d->inputs[0];
    p.reset(ma);
    if (const Node* mul = p.take(arg, "Mul"); mul && mul->inputs.size() == 2)
      for (int t = 0; t < 2; ++t)
        if (p.is_const(mul->inputs[1 - t], 1.0 / kSqrt2, 1e-5)) return mul->inputs[t];
    return p.reset(m), kNoValue;
  }
  // sqrt(2/pi) * (x + 0.044715 * x^3)
  const Node* scale = p.take(arg, "Mul");
  if (scale == nullptr || scale->inputs.size() != 2) return p.reset(m), kNoValue;
  for (int t = 0; t < 2; ++t) {
    if (!p.is_const(scale->inputs[1 - t], kSqrt2OverPi, 1e-5)) continue;
    const std::size_t mt = p.mark();
    const Node* sum = p.take(scale->inputs[t], "Add");
    if (sum == nullptr || sum->inputs.size() != 2) break;
    for (int u = 0; u < 2; ++u) {
      const std::size_t mu = p.mark();
      const int32_t x = sum->inputs[u];
      const Node* k = p.take(sum->inputs[1 - u], "Mul");
      if (k && k->inputs.size() == 2)
        for (int w = 0; w < 2; ++w)
          if (p.is_const(k->inputs[1 - w], 0.044715, 1e-5) && cube(p, k->inputs[w]) == x) return x;
      p.reset(mu);
    }
    p.reset(mt);
  }
  p.reset(m);
  return kNoValue;
}

// Root Mul of a Gelu: x, or kNoValue. The factors are x, 0.5 and the bracket, grouped either
// way; with two factors, one of them is x * 0.5 or bracket * 0.5 (taken as a Mul).
int32_t gelu(Pattern& p, const Node& root, bool erf) {
  const std::size_t m = p.mark();
  std::array<int32_t, 3> f{};
  const int n = factors(p, root, f);
  if (n != 3) return p.reset(m), kNoValue;
  for (int half = 0; half < 3; ++half) {
    if (!p.is_const(f[half], 0.5)) continue;
    const int32_t a = f[(half + 1) % 3], b = f[(half + 2) % 3];
    for (const auto& [x, bracket] : {std::pair{a, b}, std::pair{b, a}}) {
      const std::size_t mb = p.mark();
      if (gelu_bracket(p, bracket, erf) == x) return x;
      p.reset(mb);
    }
  }
  p.reset(m);
  return kNoValue;
}

// Root Mul(x, Sigmoid(x)): x, or kNoValue.
int32_t swish(Pattern& p, const Node& root) {
  if (root.op != "Mul" || root.inputs.size() != 2) return kNoValue;
  for (int s = 0; s < 2; ++s) {
    const std::size_t m = p.mark();
    const Node* sig = p.take(root.inputs[1 - s], "Sigmoid");
    if (sig && sig->inputs.size() == 1 && sig->inputs[0] == root.inputs[s]) return root.inputs[s];
    p.reset(m);
  }
  return kNoValue;
}

}  // namespace

Status fuse_activations(Graph& g) {
  Pattern p(g);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op != "Mul" || n.outputs.size() != 1) continue;
    if (const int32_t x = swish(p, n); x != kNoValue) {
      Attributes a;
      a.set("alpha", 1.f);
      p.replace(g, i, "Swish", {x}, std::move(a));
    } else if (const int32_t x = gelu(p, n, true); x != kNoValue) {
      p.replace(g, i, "Gelu", {x}, Attributes{});
    } else if (const int32_t x = gelu(p, n, false); x != kNoValue) {
      Attributes a;
      a.set("approximate", std::string("tanh"));
      p.replace(g, i, "Gelu", {x}, std::move(a));
    }
  }
  p.finish(g);
  return {};
}

}  // namespace weave
