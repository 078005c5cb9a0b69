#include "core/import/propagate_ranks.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

namespace weave {

namespace {

bool one_of(std::string_view op, std::initializer_list<std::string_view> ops) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// Rank of an input slot, or -1.
int rank_of(const Graph& g, const Node& n, std::size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return -1;
  const Value& v = g.values[n.inputs[i]];
  return v.rank_known ? static_cast<int>(v.shape.size()) : -1;
}

// Number of axes of a Squeeze/Unsqueeze: from the attribute (old opsets) or a 1-D axes input
// of known length.
int axes_count(const Graph& g, const Node& n) {
  if (n.attrs.has("axes")) return static_cast<int>(n.attrs.get_ints("axes").size());
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return -1;
  const Value& a = g.values[n.inputs[1]];
  return a.rank_known && a.shape.size() == 1 && a.shape[0] >= 0 ? static_cast<int>(a.shape[0]) : -1;
}

int output_rank(const Graph& g, const Node& n) {
  const std::string& op = n.op;
  const int r0 = rank_of(g, n, 0);
  if (one_of(op, {"Relu",
                  "Sigmoid",
                  "HardSigmoid",
                  "Tanh",
                  "Clip",
                  "Cast",
                  "Sqrt",
                  "Exp",
                  "Log",
                  "Neg",
                  "Abs",
                  "Softmax",
                  "LogSoftmax",
                  "Identity",
                  "Dropout",
                  "BatchNormalization",
                  "Transpose",
                  "Slice",
                  "Conv",
                  "ConvTranspose",
                  "MaxPool",
                  "AveragePool",
                  "GlobalAveragePool",
                  "GlobalMaxPool",
                  "Resize",
                  "Upsample",
                  "Concat",
                  "LeakyRelu",
                  "HardSwish",
                  "Erf",
                  "Reciprocal",
                  "Floor",
                  "Ceil",
                  "Round",
                  "InstanceNormalization",
                  "LayerNormalization",
                  "Not"}))
    return r0;
  if (one_of(op, {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Where", "Equal", "Less", "Greater", "And",
                  "Or", "Mod", "PRelu"})) {
    int r = 0;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] < 0) continue;
      const int ri = rank_of(g, n, i);
      if (ri < 0) return -1;
      r = std::max(r, ri);
    }
    return r;
  }
  if (op == "MatMul") {
    const int r1 = rank_of(g, n, 1);
    if (r0 < 1 || r1 < 1) return -1;
    if (r0 == 1 && r1 == 1) return 0;
    if (r0 == 1) return r1 - 1;
    if (r1 == 1) return r0 - 1;
    return std::max(r0, r1);
  }
  if (op == "Reshape" && n.inputs.size() >= 2 && n.inputs[1] >= 0) {
    const Value& s = g.values[n.inputs[1]];
    return s.rank_known && s.shape.size() == 1 && s.shape[0] >= 0 ? static_cast<int>(s.shape[0]) : -1;
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    const int k = axes_count(g, n);
    if (r0 < 0 || k < 0) return -1;
    return op == "Squeeze" ? r0 - k : r0 + k;
  }
  if (one_of(op, {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"})) {
    if (r0 < 0) return -1;
    if (n.attrs.get_int("keepdims", 1) != 0) return r0;
    return n.attrs.has("axes") ? r0 - static_cast<int>(n.attrs.get_ints("axes").size()) : 0;
  }
  if (op == "Gather") {
    const int r1 = rank_of(g, n, 1);
    return r0 < 0 || r1 < 0 ? -1 : r0 - 1 + r1;
  }
  if (op == "Shape") return 1;
  if (op == "Gemm" || op == "Flatten") return 2;
  return -1;
}

// Element count of a 1-element int64 param, or nullopt.
std::optional<int64_t> scalar_param(const Graph& g, int32_t id) {
  if (id < 0) return std::nullopt;
  const Value& v = g.values[id];
  if (v.kind != ValueKind::param || v.dtype != DType::int64 || shape_numel(v.shape) != 1) return std::nullopt;
  int64_t x;
  std::memcpy(&x, g.params[v.param].data.data(), sizeof x);
  return x;
}

// Length of a 1-D Slice (opset-13 form) of a 1-D input of known length, or -1. This is the
// Shape -> Slice pattern that computes Reshape targets.
int64_t slice_length(const Graph& g, const Node& n) {
  if (n.inputs.size() < 3 || n.inputs[0] < 0) return -1;  // an absent data input is checked later
  const Value& in = g.values[n.inputs[0]];
  if (!in.rank_known || in.shape.size() != 1 || in.shape[0] < 0) return -1;
  if (n.inputs.size() > 3 && n.inputs[3] >= 0) {
    auto axis = scalar_param(g, n.inputs[3]);
    if (!axis || (*axis != 0 && *axis != -1)) return -1;
  }
  if (n.inputs.size() > 4 && n.inputs[4] >= 0) {
    auto step = scalar_param(g, n.inputs[4]);
    if (!step || *step != 1) return -1;
  }
  auto start = scalar_param(g, n.inputs[1]);
  auto end = scalar_param(g, n.inputs[2]);
  if (!start || !end) return -1;
  const int64_t d = in.shape[0];
  auto clamp = [d](int64_t x) {
    if (x < 0) x += d;
    return std::clamp<int64_t>(x, 0, d);
  };
  return std::max<int64_t>(0, clamp(*end) - clamp(*start));
}

}  // namespace

void propagate_ranks(Graph& g) {
  for (const Node& n : g.nodes) {
    if (n.outputs.empty() || n.outputs[0] < 0) continue;
    const int32_t out_id = n.outputs[0];
    if (g.values[out_id].rank_known && shape_is_static(g.values[out_id].shape)) continue;
    Shape known;  // dims we can tell beyond the rank
    const int r0 = rank_of(g, n, 0);
    if (n.op == "Shape" && r0 >= 0) {
      known = {r0};
    } else if (n.op == "Slice") {
      const int64_t len = slice_length(g, n);
      if (len >= 0) known = {len};
    } else if (one_of(n.op, {"Cast", "Relu", "Sigmoid", "Identity", "Neg", "Abs", "Sqrt"}) && r0 >= 0) {
      known = g.values[n.inputs[0]].shape;
    } else if (n.op == "Concat") {
      int64_t sum = 0;
      for (std::size_t i = 0; i < n.inputs.size() && sum >= 0; ++i) {
        if (n.inputs[i] < 0) continue;
        const Value& v = g.values[n.inputs[i]];
        // A sum past int64 (hostile dims) is no length either.
        const bool ok = v.rank_known && v.shape.size() == 1 && v.shape[0] >= 0 &&
                        v.shape[0] <= std::numeric_limits<int64_t>::max() - sum;
        sum = ok ? sum + v.shape[0] : -1;
      }
      if (sum >= 0) known = {sum};
    }
    Value& out = g.values[out_id];
    if (!known.empty()) {
      if (!out.rank_known || out.shape.size() == known.size()) {
        out.shape = known;
        out.rank_known = true;
      }
      continue;
    }
    if (out.rank_known) continue;
    const int r = output_rank(g, n);
    if (r < 0 || r > kMaxRank) continue;
    out.shape.assign(static_cast<std::size_t>(r), kDynamic);
    out.rank_known = true;
  }
}

}  // namespace weave
