#include "core/import/canonicalize.h"

#include <cstring>
#include <initializer_list>

#include "core/import/propagate_ranks.h"

namespace weave {

namespace {

template <class T>
int32_t add_vector_param(Graph& g, const std::vector<T>& v) {
  AlignedBuffer buf(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(buf.data(), v.data(), v.size() * sizeof(T));
  return g.add_param(dtype_of_v<T>, Shape{static_cast<int64_t>(v.size())}, SharedBytes::from(std::move(buf)));
}

template <class T>
int32_t add_scalar_param(Graph& g, T v) {
  AlignedBuffer buf(sizeof(T));
  std::memcpy(buf.data(), &v, sizeof(T));
  return g.add_param(dtype_of_v<T>, Shape{}, SharedBytes::from(std::move(buf)));
}

Attributes without(const Attributes& a, std::initializer_list<std::string_view> drop) {
  Attributes out;
  for (const auto& [k, v] : a.items()) {
    bool skip = false;
    for (auto d : drop) skip = skip || k == d;
    if (!skip) out.set(k, v);
  }
  return out;
}

// Rank of a node input when shape inference knew it, else -1.
int known_rank(const Graph& g, int32_t value) {
  if (value < 0 || value >= static_cast<int32_t>(g.values.size())) return -1;
  const Value& v = g.values[value];
  return v.rank_known ? static_cast<int>(v.shape.size()) : -1;
}

void set_input(Node& n, std::size_t i, int32_t value) {
  if (n.inputs.size() <= i) n.inputs.resize(i + 1, kNoValue);
  n.inputs[i] = value;
}

Status canonicalize_slice(Graph& g, Node& n, const std::string& label) {
  if (!n.attrs.has("starts") || !n.attrs.has("ends"))
    return make_error(label, ": opset < 10 Slice needs 'starts' and 'ends' attributes");
  auto starts = n.attrs.get_ints("starts");
  auto ends = n.attrs.get_ints("ends");
  if (starts.size() != ends.size()) return make_error(label, ": 'starts' and 'ends' differ in length");
  bool has_axes = n.attrs.has("axes");
  auto axes = n.attrs.get_ints("axes");
  if (has_axes && axes.size() != starts.size())
    return make_error(label, ": 'axes' and 'starts' differ in length");
  if (n.inputs.empty()) return make_error(label, ": Slice has no data input");
  n.inputs.erase(n.inputs.begin() + 1, n.inputs.end());
  // Add the params after the node's own edits: add_param may reallocate g.values only.
  int32_t s = add_vector_param(g, starts);
  int32_t e = add_vector_param(g, ends);
  n.inputs.push_back(s);
  n.inputs.push_back(e);
  if (has_axes) n.inputs.push_back(add_vector_param(g, axes));
  n.attrs = without(n.attrs, {"starts", "ends", "axes"});
  return {};
}

void canonicalize_clip(Graph& g, Node& n) {
  const bool has_min = n.attrs.has("min"), has_max = n.attrs.has("max");
  DType t = DType::float32;
  if (!n.inputs.empty() && n.inputs[0] >= 0 && n.inputs[0] < static_cast<int32_t>(g.values.size()) &&
      g.values[n.inputs[0]].dtype == DType::float64)
    t = DType::float64;
  auto make = [&](float v) {
    return t == DType::float64 ? add_scalar_param<double>(g, v) : add_scalar_param<float>(g, v);
  };
  if (n.inputs.empty()) return;
  n.inputs.erase(n.inputs.begin() + 1, n.inputs.end());
  if (has_min) set_input(n, 1, make(n.attrs.get_float("min", 0.f)));
  if (has_max) set_input(n, 2, make(n.attrs.get_float("max", 0.f)));
  n.attrs = without(n.attrs, {"min", "max"});
}

Status canonicalize_axes_input(Graph& g, Node& n, const std::string& label) {
  if (!n.attrs.has("axes")) {
    if (n.op == "Unsqueeze")
      return make_error(label, ": Unsqueeze needs an 'axes' attribute before opset 13");
    return {};
  }
  if (n.inputs.empty()) return make_error(label, ": ", n.op, " has no data input");
  n.inputs.erase(n.inputs.begin() + 1, n.inputs.end());
  n.inputs.push_back(add_vector_param(g, n.attrs.get_ints("axes")));
  n.attrs = without(n.attrs, {"axes"});
  return {};
}

Status canonicalize_upsample(Graph& g, Node& n, const std::string& label, int opset) {
  if (n.inputs.empty()) return make_error(label, ": ", n.op, " has no data input");
  int32_t scales = kNoValue;
  if (n.inputs.size() >= 2) {
    scales = n.inputs[1];
  } else if (n.attrs.has("scales")) {  // Upsample opset 7/8
    scales = add_vector_param(g, n.attrs.get_floats("scales"));
  } else {
    return make_error(label, ": ", n.op, " has no scales (opset ", opset, ")");
  }
  std::string mode = n.attrs.get_string("mode", "nearest");
  n.op = "Resize";
  n.inputs = {n.inputs[0], kNoValue, scales};
  n.attrs = without(n.attrs, {"scales", "mode"});
  n.attrs.set("mode", mode);
  n.attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
  if (mode == "nearest") n.attrs.set("nearest_mode", std::string("floor"));
  return {};
}

// Pad before opset 11: pads (opset 1: paddings) and value attributes -> inputs 1 and 2.
Status canonicalize_pad(Graph& g, Node& n, const std::string& label) {
  if (n.inputs.empty()) return make_error(label, ": Pad has no data input");
  const char* name = n.attrs.has("pads") ? "pads" : "paddings";
  if (!n.attrs.has(name)) return make_error(label, ": Pad before opset 11 needs the 'pads' attribute");
  const auto pads = n.attrs.get_ints(name);
  const float value = n.attrs.get_float("value", 0.f);
  const DType t = n.inputs[0] >= 0 && n.inputs[0] < static_cast<int32_t>(g.values.size())
                      ? g.values[n.inputs[0]].dtype
                      : DType::float32;
  n.inputs.erase(n.inputs.begin() + 1, n.inputs.end());
  n.attrs = without(n.attrs, {"pads", "paddings", "value"});
  n.inputs.push_back(add_vector_param(g, pads));
  // The constant only when it matters and its dtype is known; zero is the default.
  if (value != 0.f && t == DType::float64) n.inputs.push_back(add_scalar_param<double>(g, value));
  if (value != 0.f && t != DType::float64) n.inputs.push_back(add_scalar_param<float>(g, value));
  return {};
}

// PRelu before opset 7: a 1-D constant slope of X's channel count applies per channel (what
// PyTorch's opset-6 exports mean); it becomes [C, 1, ...] so that it broadcasts on axis 1.
void canonicalize_prelu(Graph& g, Node& n) {
  if (n.inputs.size() != 2 || n.inputs[1] < 0 || n.inputs[1] >= static_cast<int32_t>(g.values.size())) return;
  const int rank = known_rank(g, n.inputs[0]);
  const Value& slope = g.values[n.inputs[1]];
  if (rank < 3 || slope.kind != ValueKind::param || !slope.rank_known || slope.shape.size() != 1) return;
  const Shape& xs = g.values[n.inputs[0]].shape;
  if (xs[1] >= 0 && xs[1] != slope.shape[0]) return;
  Shape shape(static_cast<std::size_t>(rank - 1), 1);
  shape[0] = slope.shape[0];
  const DType t = slope.dtype;
  SharedBytes bytes = g.params[slope.param].data;
  n.inputs[1] = g.add_param(t, std::move(shape), std::move(bytes));
}

void canonicalize_softmax(const Graph& g, Node& n) {
  const int64_t axis = n.attrs.get_int("axis", 1);
  const int rank = n.inputs.empty() ? -1 : known_rank(g, n.inputs[0]);
  bool last = axis == -1;
  if (rank >= 0) last = last || (axis >= 0 ? axis == rank - 1 : axis + rank == rank - 1);
  if (last) {
    n.attrs.set("axis", int64_t{-1});
  } else {
    n.attrs.set("axis", axis);
    n.attrs.set("coerce_2d", int64_t{1});
  }
}

}  // namespace

Status canonicalize_opset(Graph& g, int opset) {
  // Indexing (not references) because add_param grows g.values, never g.nodes.
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const std::string& op = g.nodes[i].op;
    Node& n = g.nodes[i];
    if (op == "Slice" && opset < 10) {
      WEAVE_TRY(canonicalize_slice(g, n, g.node_label(static_cast<int32_t>(i))));
    } else if (op == "Clip" && opset < 11) {
      canonicalize_clip(g, n);
    } else if ((op == "Squeeze" || op == "Unsqueeze") && opset < 13) {
      WEAVE_TRY(canonicalize_axes_input(g, n, g.node_label(static_cast<int32_t>(i))));
    } else if (op == "PRelu" && opset < 7) {
      canonicalize_prelu(g, n);
    } else if (op == "Pad" && opset < 11) {
      WEAVE_TRY(canonicalize_pad(g, n, g.node_label(static_cast<int32_t>(i))));
    } else if (op == "Upsample" || (op == "Resize" && opset < 11)) {
      WEAVE_TRY(canonicalize_upsample(g, n, g.node_label(static_cast<int32_t>(i)), opset));
    }
  }
  // Softmax needs ranks, which the rewritten Slice/Squeeze forms above help propagate.
  propagate_ranks(g);
  if (opset < 13)
    for (Node& n : g.nodes)
      if (n.op == "Softmax" || n.op == "LogSoftmax" || n.op == "Hardmax") canonicalize_softmax(g, n);
  return {};
}

}  // namespace weave
