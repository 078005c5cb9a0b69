#include "core/compiler/fold_conv_affine.h"

#include <cstring>

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

namespace {

struct ConvShape {
  int64_t m = 0;      // output channels
  int64_t group = 1;  // group
  bool transposed = false;
};

// Output channels of a Conv/ConvTranspose whose weights are a float32 param, or m = 0.
ConvShape conv_shape(const Graph& g, const Node& conv) {
  ConvShape s;
  if (conv.inputs.size() < 2 || conv.outputs.size() != 1 || !is_param(g, conv.inputs[1])) return s;
  const Value& w = g.values[conv.inputs[1]];
  if (w.dtype != DType::float32 || w.shape.size() < 3) return s;
  s.group = conv.attrs.get_int("group", 1);
  s.transposed = conv.op == "ConvTranspose";
  if (s.group < 1 || (s.transposed && w.shape[0] % s.group != 0)) return s;
  s.m = s.transposed ? w.shape[1] * s.group : w.shape[0];
  return s;
}

// Per-channel values of `value` for a conv output of rank `rank` with `m` channels (a scalar
// is broadcast), or empty when the param is not of that form.
std::vector<double> per_channel(const Graph& g, int32_t value, int64_t m, std::size_t rank) {
  if (!is_param(g, value) || g.values[value].dtype != DType::float32) return {};
  const Shape& s = g.values[value].shape;
  if (s.size() > rank) return {};
  const int64_t n = shape_numel(s);
  if (n != 1 && n != m) return {};
  if (n == m && m != 1) {
    // Right-aligned against the conv output, param axis j is output axis j + rank - size;
    // the one holding m must be the channel axis 1.
    if (s.size() + 1 < rank || s[s.size() + 1 - rank] != m) return {};
  }
  const float* p = param_view(g, value).as<float>();
  std::vector<double> out(static_cast<std::size_t>(m));
  for (int64_t c = 0; c < m; ++c) out[c] = p[n == 1 ? 0 : c];
  return out;
}

int32_t add_floats(Graph& g, const Shape& shape, const std::vector<float>& v) {
  AlignedBuffer buf(v.size() * sizeof(float));
  std::memcpy(buf.data(), v.data(), buf.size());
  return g.add_param(DType::float32, shape, SharedBytes::from(std::move(buf)));
}

// Applies y = conv * scale + shift to node `ci`'s weights and bias (new params).
void apply(Graph& g, int32_t ci, const ConvShape& cs, const std::vector<double>& scale,
           const std::vector<double>& shift) {
  Node& conv = g.nodes[ci];
  const int32_t w_id = conv.inputs[1];
  const Shape w_shape = g.values[w_id].shape;
  const int64_t numel = shape_numel(w_shape);
  const float* w = param_view(g, w_id).as<float>();
  std::vector<float> nw(static_cast<std::size_t>(numel));
  if (!cs.transposed) {
    const int64_t per = numel / cs.m;
    for (int64_t c = 0; c < cs.m; ++c)
      for (int64_t k = 0; k < per; ++k) nw[c * per + k] = static_cast<float>(w[c * per + k] * scale[c]);
  } else {
    const int64_t cin = w_shape[0], mg = w_shape[1], per = numel / (cin * mg), cin_g = cin / cs.group;
    for (int64_t i = 0; i < cin; ++i)
      for (int64_t j = 0; j < mg; ++j) {
        const double f = scale[(i / cin_g) * mg + j];
        const int64_t base = (i * mg + j) * per;
        for (int64_t k = 0; k < per; ++k) nw[base + k] = static_cast<float>(w[base + k] * f);
      }
  }
  const bool has_b = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
  const float* b = has_b ? param_view(g, conv.inputs[2]).as<float>() : nullptr;
  std::vector<float> nb(static_cast<std::size_t>(cs.m));
  for (int64_t c = 0; c < cs.m; ++c) nb[c] = static_cast<float>((b ? b[c] : 0.0) * scale[c] + shift[c]);
  const int32_t w2 = add_floats(g, w_shape, nw);
  const int32_t b2 = add_floats(g, Shape{cs.m}, nb);
  Node& c2 = g.nodes[ci];
  c2.inputs[1] = w2;
  if (c2.inputs.size() < 3) c2.inputs.resize(3, kNoValue);
  c2.inputs[2] = b2;
}

}  // namespace

Status fold_conv_affine(Graph& g) {
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = true;
  while (changed) {
    changed = false;
    const std::vector<int> uses = use_counts(g);
    const std::vector<int32_t> prod = producers(g);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& op = g.nodes[i];
      if (dead[i] || op.inputs.size() != 2 || op.outputs.size() != 1 || op.outputs[0] == kNoValue) continue;
      const bool mul = op.op == "Mul", div = op.op == "Div", add = op.op == "Add", sub = op.op == "Sub";
      if (!mul && !div && !add && !sub) continue;
      // The conv side: either input for the commutative ops, the first for Sub and Div.
      for (int side = 0; side < 2; ++side) {
        if (side == 1 && (div || sub)) break;
        const int32_t x = op.inputs[side], k = op.inputs[1 - side];
        if (x < 0 || prod[x] < 0 || uses[x] != 1 || is_graph_output(g, x)) continue;
        const int32_t ci = prod[x];
        const Node& conv = g.nodes[ci];
        if ((conv.op != "Conv" && conv.op != "ConvTranspose") || dead[ci] || conv.attrs.has("activation"))
          continue;
        if (conv.inputs.size() > 3) continue;      // a fused residual is added after the bias
        const ConvShape cs = conv_shape(g, conv);  // m = 0 unless it has weights (2+ inputs)
        if (cs.m <= 0 || conv.inputs[0] < 0) continue;
        // The output's rank is the data input's (the output value may carry no static shape).
        const Value& in = g.values[conv.inputs[0]];
        if (!in.rank_known || in.shape.size() < 3) continue;
        if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue &&
            (!is_param(g, conv.inputs[2]) || shape_numel(g.values[conv.inputs[2]].shape) != cs.m))
          continue;
        std::vector<double> v = per_channel(g, k, cs.m, in.shape.size());
        if (v.empty()) continue;
        std::vector<double> scale(cs.m, 1.0), shift(cs.m, 0.0);
        bool finite = true;
        for (int64_t c = 0; c < cs.m; ++c) {
          if (mul) scale[c] = v[c];
          if (div) finite = finite && v[c] != 0.0, scale[c] = 1.0 / v[c];
          if (add) shift[c] = v[c];
          if (sub) shift[c] = -v[c];
        }
        if (!finite) continue;
        apply(g, ci, cs, scale, shift);
        g.nodes[ci].outputs[0] = g.nodes[i].outputs[0];
        dead[i] = true;
        g.nodes[i].inputs.clear();
        g.nodes[i].outputs.clear();
        changed = true;
        break;
      }
    }
  }
  g.compact(dead);
  return {};
}

}  // namespace weave
