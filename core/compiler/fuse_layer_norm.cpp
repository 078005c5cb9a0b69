#include "core/compiler/fuse_layer_norm.h"

#include <cstring>
#include <optional>

#include "core/common/buffer.h"
#include "core/compiler/pattern.h"

namespace weave {

using namespace compiler;

namespace {

struct Match {
  int32_t x = kNoValue;
  int64_t axis = 0;  // first normalized axis (non-negative), or -1: the last axis of a rank not known
  float eps = 0.f;
};

// The first axis of a ReduceMean over x's trailing axes (keepdims), or nullopt. Where shape
// inference lost x's rank (models that compute shapes at run time, e.g. windowed attention), a
// mean over axis -1 alone is still a row norm: -1.
std::optional<int64_t> trailing_axis(const Graph& g, const Node& r, int32_t x) {
  const Value& xv = g.values[x];
  if ((xv.rank_known && xv.shape.empty()) || r.attrs.get_int("keepdims", 1) != 1) return std::nullopt;
  std::vector<int64_t> axes = r.attrs.get_ints("axes");
  if (r.inputs.size() > 1 && r.inputs[1] != kNoValue) {  // opset 18: axes as an input
    if (!is_param(g, r.inputs[1]) || g.values[r.inputs[1]].dtype != DType::int64) return std::nullopt;
    const ConstTensorView v = param_view(g, r.inputs[1]);
    axes.assign(v.as<int64_t>(), v.as<int64_t>() + v.numel());
  }
  if (axes.empty()) return std::nullopt;  // all axes, or noop_with_empty_axes: not a row norm
  if (!xv.rank_known) return axes == std::vector<int64_t>{-1} ? std::optional<int64_t>(-1) : std::nullopt;
  const auto rank = static_cast<int64_t>(xv.shape.size());
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    seen[a < 0 ? a + rank : a] = true;
  }
  const int64_t first = rank - static_cast<int64_t>(axes.size());
  for (int64_t i = 0; i < rank; ++i)
    if (seen[i] != (i >= first)) return std::nullopt;  // not exactly the trailing axes (or repeated)
  return first;
}

// div = (x - mean) / Sqrt(var + eps) (the Div node itself is not taken): the match, or nullopt.
std::optional<Match> normalized(Pattern& p, const Graph& g, const Node& div) {
  const std::size_t m = p.mark();
  auto fail = [&]() -> std::optional<Match> {
    p.reset(m);
    return std::nullopt;
  };
  if (div.op != "Div" || div.inputs.size() != 2) return fail();
  const int32_t d = div.inputs[0];
  const Node* sq_root = p.take(div.inputs[1], "Sqrt");
  if (sq_root == nullptr || sq_root->inputs.size() != 1) return fail();
  const Node* add = p.take(sq_root->inputs[0], "Add");
  if (add == nullptr || add->inputs.size() != 2) return fail();
  const int s = p.scalar(add->inputs[1]) ? 0 : p.scalar(add->inputs[0]) ? 1 : -1;
  if (s < 0) return fail();
  const float eps = *p.scalar(add->inputs[1 - s]);
  const Node* var = p.take(add->inputs[s], "ReduceMean");
  if (var == nullptr || var->inputs.empty()) return fail();
  // d^2, then d itself: read by the square (once as Pow's base, twice as Mul's operands) and
  // by the Div.
  int d_uses = 0;
  const std::size_t ms = p.mark();
  if (const Node* pw = p.take(var->inputs[0], "Pow");
      pw && pw->inputs.size() == 2 && pw->inputs[0] == d && p.is_const(pw->inputs[1], 2.0)) {
    d_uses = 2;
  } else {
    p.reset(ms);
    if (const Node* mul = p.take(var->inputs[0], "Mul");
        mul && mul->inputs.size() == 2 && mul->inputs[0] == d && mul->inputs[1] == d)
      d_uses = 3;
  }
  if (d_uses == 0) return fail();
  const Node* sub = p.take(d, "Sub", d_uses);
  if (sub == nullptr || sub->inputs.size() != 2) return fail();
  const int32_t x = sub->inputs[0];
  const Node* mean = p.take(sub->inputs[1], "ReduceMean");
  if (mean == nullptr || mean->inputs.empty() || x < 0 || mean->inputs[0] != x ||
      g.values[x].dtype != DType::float32)
    return fail();
  const std::optional<int64_t> a1 = trailing_axis(g, *mean, x), a2 = trailing_axis(g, *var, x);
  if (!a1 || !a2 || *a1 != *a2 || !(eps >= 0.f)) return fail();
  return Match{x, *a1, eps};
}

// Elements of one normalized row of x from `axis` on, when static.
std::optional<int64_t> row_length(const Value& x, int64_t axis) {
  if (axis < 0) return std::nullopt;
  int64_t n = 1;
  for (std::size_t i = static_cast<std::size_t>(axis); i < x.shape.size(); ++i) {
    if (x.shape[i] < 0) return std::nullopt;
    n *= x.shape[i];
  }
  return n;
}

// A float32 param that, broadcast against x, varies along the normalized axes only and covers
// them: it then reads as LayerNormalization's flat Scale or B of the row's length.
bool per_row_param(const Graph& g, int32_t v, const Value& x, int64_t axis, int64_t n) {
  if (!is_param(g, v) || g.values[v].dtype != DType::float32) return false;
  const Shape& s = g.values[v].shape;
  if (s.size() > x.shape.size() || shape_numel(s) != n) return false;
  const std::size_t off = x.shape.size() - s.size();
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto xi = static_cast<int64_t>(off + i);
    if (xi < axis ? s[i] != 1 : s[i] != x.shape[xi]) return false;
  }
  return true;
}

// A float32 param of shape [1, .., 1, n] (n > 1) of no higher rank than x (1 when x's rank is
// not known: the product must keep x's dims), read against a row length not known before run
// time: LayerNormalization's kernel checks n against it when it plans the shapes.
bool last_axis_param(const Graph& g, int32_t v, const Value& x) {
  if (!is_param(g, v) || g.values[v].dtype != DType::float32) return false;
  const Shape& s = g.values[v].shape;
  if (s.empty() || s.back() < 2 || s.size() > (x.rank_known ? x.shape.size() : 1)) return false;
  for (std::size_t i = 0; i + 1 < s.size(); ++i)
    if (s[i] != 1) return false;
  return true;
}

// The other operand of binary `n` when one of them is `y` and the other a per-row param.
int32_t per_row_operand(const Graph& g, const Node& n, int32_t y, const Match& mt) {
  const Value& x = g.values[mt.x];
  const std::optional<int64_t> len = row_length(x, mt.axis);
  const bool last_axis = mt.axis < 0 || (x.rank_known && mt.axis + 1 == static_cast<int64_t>(x.shape.size()));
  if (n.inputs.size() != 2 || (!len && !last_axis)) return kNoValue;
  for (int s = 0; s < 2; ++s) {
    if (n.inputs[s] != y) continue;
    const int32_t p = n.inputs[1 - s];
    if (len ? per_row_param(g, p, x, mt.axis, *len) : last_axis_param(g, p, x)) return p;
  }
  return kNoValue;
}

int32_t ones(Graph& g, int64_t n) {
  AlignedBuffer buf(static_cast<std::size_t>(n) * sizeof(float));
  auto* f = reinterpret_cast<float*>(buf.data());
  for (int64_t i = 0; i < n; ++i) f[i] = 1.f;
  return g.add_param(DType::float32, Shape{n}, SharedBytes::from(std::move(buf)));
}

struct Found {
  Match mt;
  int32_t scale = kNoValue, bias = kNoValue;
};

// Root Div: the normalization alone.
std::optional<Found> norm_only(Pattern& p, const Graph& g, const Node& n) {
  const std::optional<Match> mt = normalized(p, g, n);
  if (!mt || !row_length(g.values[mt->x], mt->axis)) return std::nullopt;
  return Found{*mt};
}

// Root Mul(norm, scale).
std::optional<Found> norm_scaled(Pattern& p, const Graph& g, const Node& n) {
  if (n.op != "Mul" || n.inputs.size() != 2) return std::nullopt;
  for (int s = 0; s < 2; ++s) {
    const std::size_t m = p.mark();
    const Node* div = p.take(n.inputs[s], "Div");
    if (div != nullptr) {
      if (const std::optional<Match> mt = normalized(p, g, *div)) {
        const int32_t scale = per_row_operand(g, n, n.inputs[s], *mt);
        if (scale != kNoValue) return Found{*mt, scale};
      }
    }
    p.reset(m);
  }
  return std::nullopt;
}

// Root Add(Mul(norm, scale), bias).
std::optional<Found> norm_affine(Pattern& p, const Graph& g, const Node& n) {
  if (n.op != "Add" || n.inputs.size() != 2) return std::nullopt;
  for (int s = 0; s < 2; ++s) {
    const std::size_t m = p.mark();
    const Node* mul = p.take(n.inputs[s], "Mul");
    if (mul != nullptr) {
      if (std::optional<Found> f = norm_scaled(p, g, *mul)) {
        f->bias = per_row_operand(g, n, n.inputs[s], f->mt);
        if (f->bias != kNoValue) return f;
      }
    }
    p.reset(m);
  }
  return std::nullopt;
}

// One sweep with roots of one form (the longest first, so that an affine is not left behind
// by a match of the normalization alone).
void sweep(Graph& g, std::optional<Found> (*match)(Pattern&, const Graph&, const Node&)) {
  Pattern p(g);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].outputs.size() != 1) continue;
    const std::optional<Found> f = match(p, g, g.nodes[i]);
    if (!f) continue;
    const int32_t scale =
        f->scale != kNoValue ? f->scale : ones(g, *row_length(g.values[f->mt.x], f->mt.axis));
    std::vector<int32_t> inputs{f->mt.x, scale};
    if (f->bias != kNoValue) inputs.push_back(f->bias);
    Attributes a;
    a.set("axis", f->mt.axis);
    a.set("epsilon", f->mt.eps);
    p.replace(g, i, "LayerNormalization", std::move(inputs), std::move(a));
  }
  p.finish(g);
}

}  // namespace

Status fuse_layer_norm(Graph& g) {
  sweep(g, &norm_affine);
  sweep(g, &norm_scaled);
  sweep(g, &norm_only);
  return {};
}

}  // namespace weave
