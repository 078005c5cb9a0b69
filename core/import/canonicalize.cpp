#include "core/import/canonicalize.h"

#include <cstring>
#include <initializer_list>
#include <map>
#include <optional>

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

namespace {

// A constant integer scalar (or one-element tensor) input, else nullopt.
std::optional<int64_t> const_int(const Graph& g, int32_t value) {
  if (value < 0 || value >= static_cast<int32_t>(g.values.size())) return std::nullopt;
  const Value& v = g.values[value];
  if (v.kind != ValueKind::param || v.param < 0) return std::nullopt;
  const SharedBytes& b = g.params[v.param].data;
  if (v.dtype == DType::int64 && b.size() == sizeof(int64_t)) {
    int64_t x;
    std::memcpy(&x, b.data(), sizeof x);
    return x;
  }
  if (v.dtype == DType::int32 && b.size() == sizeof(int32_t)) {
    int32_t x;
    std::memcpy(&x, b.data(), sizeof x);
    return x;
  }
  return std::nullopt;
}

bool is_sequence_op(const std::string& op) {
  return op == "SequenceEmpty" || op == "SequenceConstruct" || op == "SequenceInsert" ||
         op == "SequenceErase" || op == "SequenceAt" || op == "SequenceLength" ||
         op == "ConcatFromSequence" || op == "SplitToSequence";
}

// Rewrites the nodes of one graph, lowering sequence ops onto tensor ops (see lower_sequences).
class SequenceLowering {
 public:
  explicit SequenceLowering(Graph& g) : g_(g) {}

  Status run() {
    std::vector<Node> old = std::move(g_.nodes);
    std::map<int32_t, std::string> old_names = std::move(g_.names.nodes);
    g_.nodes.clear();
    g_.names.nodes.clear();
    for (std::size_t i = 0; i < old.size(); ++i) {
      const std::string label = label_of(old, old_names, i);
      Node n = std::move(old[i]);
      for (int32_t v : n.inputs)
        if (v != kNoValue && seqs_.count(v) && !is_sequence_op(n.op))
          return make_error(label,
                            ": takes a sequence, which only the sequence ops can (sequences are lowered "
                            "onto tensors when their positions are constants)");
      if (!is_sequence_op(n.op)) {
        emit(std::move(n), old_names, i);
        continue;
      }
      WEAVE_TRY(lower(n, label, old_names, i));
    }
    for (int32_t v : g_.outputs)
      if (seqs_.count(v)) return make_error(g_.value_label(v), ": a sequence output is not supported");
    return {};
  }

 private:
  static std::string label_of(const std::vector<Node>& nodes, const std::map<int32_t, std::string>& names,
                              std::size_t i) {
    auto it = names.find(static_cast<int32_t>(i));
    return "node " + std::to_string(i) + " (" + nodes[i].op +
           (it == names.end() ? "" : " '" + it->second + "'") + ")";
  }

  void emit(Node n, const std::map<int32_t, std::string>& names, std::size_t old_id) {
    auto it = names.find(static_cast<int32_t>(old_id));
    if (it != names.end()) g_.names.nodes[static_cast<int32_t>(g_.nodes.size())] = it->second;
    g_.nodes.push_back(std::move(n));
  }

  // Passes each of `items` through a new Squeeze / Unsqueeze node at `axis`; items become the
  // nodes' outputs.
  void each_through(const char* op, std::vector<int32_t>& items, int64_t axis) {
    const int32_t axes = add_vector_param(g_, std::vector<int64_t>{axis});
    for (int32_t& v : items) {
      Node u;
      u.op = op;
      u.inputs = {v, axes};
      v = fresh(v);
      u.outputs = {v};
      g_.nodes.push_back(std::move(u));
    }
  }

  // A new intermediate value of `like`'s dtype, rank unknown (the planner infers it).
  int32_t fresh(int32_t like) {
    Value v;
    v.dtype = g_.values[like].dtype;
    v.rank_known = false;
    return g_.add_value(std::move(v));
  }

  Expected<std::vector<int32_t>*> list(int32_t v, const std::string& label) {
    auto it = seqs_.find(v);
    if (it == seqs_.end()) return make_error(label, ": input 0 is not a sequence made in this graph");
    return &it->second;
  }

  // Position input k of n in [0, size) (or [0, size] when inserting); `fallback` when absent.
  Expected<int64_t> position(const Node& n, std::size_t k, int64_t size, int64_t fallback, bool insert,
                             const std::string& label) {
    if (k >= n.inputs.size() || n.inputs[k] == kNoValue) return fallback;
    auto p = const_int(g_, n.inputs[k]);
    if (!p)
      return make_error(label,
                        ": the position must be a constant integer (sequences are lowered onto tensors)");
    int64_t at = *p < 0 ? *p + size : *p;
    if (at < 0 || at > size || (!insert && at == size))
      return make_error(label, ": position ", *p, " is out of range for a sequence of ", size, " tensors");
    return at;
  }

  Status lower(Node& n, const std::string& label, const std::map<int32_t, std::string>& names,
               std::size_t id) {
    const int32_t out = n.outputs.empty() ? kNoValue : n.outputs[0];
    if (out == kNoValue) return make_error(label, ": has no output");
    if (n.op == "SequenceEmpty") {
      seqs_[out] = {};
      return {};
    }
    if (n.op == "SequenceConstruct") {
      seqs_[out] = n.inputs;
      return {};
    }
    if (n.op == "SplitToSequence") return split(n, label, names, id);
    if (n.inputs.empty()) return make_error(label, ": needs a sequence input");
    auto l = list(n.inputs[0], label);
    if (!l) return l.error();
    std::vector<int32_t> items = **l;
    const auto size = static_cast<int64_t>(items.size());
    if (n.op == "SequenceInsert") {
      if (n.inputs.size() < 2 || n.inputs[1] == kNoValue)
        return make_error(label, ": needs a tensor to insert");
      auto at = position(n, 2, size, size, true, label);
      if (!at) return at.error();
      items.insert(items.begin() + *at, n.inputs[1]);
      seqs_[out] = std::move(items);
      return {};
    }
    if (n.op == "SequenceErase") {
      if (size == 0) return make_error(label, ": erases from an empty sequence");
      auto at = position(n, 1, size, size - 1, false, label);
      if (!at) return at.error();
      items.erase(items.begin() + *at);
      seqs_[out] = std::move(items);
      return {};
    }
    Node r;
    r.outputs = {out};
    if (n.op == "SequenceAt") {
      if (n.inputs.size() < 2) return make_error(label, ": needs a position");
      auto at = position(n, 1, size, 0, false, label);
      if (!at) return at.error();
      r.op = "Identity";
      r.inputs = {items[static_cast<std::size_t>(*at)]};
    } else if (n.op == "SequenceLength") {
      r.op = "Identity";
      r.inputs = {add_scalar_param<int64_t>(g_, size)};
    } else {  // ConcatFromSequence
      if (items.empty()) return make_error(label, ": concatenates an empty sequence");
      const int64_t axis = n.attrs.get_int("axis", 0);
      r.op = "Concat";
      r.attrs.set("axis", axis);
      if (n.attrs.get_int("new_axis", 0) != 0) each_through("Unsqueeze", items, axis);
      r.inputs = items;
    }
    emit(std::move(r), names, id);
    return {};
  }

  // SplitToSequence -> Split into as many outputs as the split input or the axis's dim tells,
  // then (keepdims=0, no split input) Squeeze of each.
  // A sequence is lowered into one tensor per element: at most this many.
  static constexpr int64_t kMaxParts = 4096;

  Status split(Node& n, const std::string& label, const std::map<int32_t, std::string>& names,
               std::size_t id) {
    if (n.inputs.empty() || n.inputs[0] == kNoValue) return make_error(label, ": needs an input");
    const int32_t x = n.inputs[0];
    const Value& xv = g_.values[x];
    int64_t axis = n.attrs.get_int("axis", 0);
    const int rank = xv.rank_known ? static_cast<int>(xv.shape.size()) : -1;
    if (rank >= 0 && axis < 0) axis += rank;
    const int64_t dim = rank > axis && axis >= 0 ? xv.shape[static_cast<std::size_t>(axis)] : -1;
    const bool has_split = n.inputs.size() > 1 && n.inputs[1] != kNoValue;
    Node s;
    s.op = "Split";
    s.attrs.set("axis", axis);
    s.inputs = {x};
    int64_t parts = 0;
    if (has_split) {
      const Value& sv = g_.values[n.inputs[1]];
      const std::vector<int64_t> sizes = const_ints(n.inputs[1]);
      if (auto chunk = const_int(g_, n.inputs[1]); chunk && sv.shape.empty()) {
        if (*chunk <= 0 || dim < 0)
          return make_error(label, ": a scalar split needs a positive chunk and a known dim");
        parts = dim / *chunk + (dim % *chunk != 0 ? 1 : 0);  // no dim + chunk: both can be near 2^63
        if (parts < 1 || parts > kMaxParts)
          return make_error(label, ": splits into ", parts, " tensors (1 to ", kMaxParts, ")");
        std::vector<int64_t> chunks(static_cast<std::size_t>(parts), *chunk);
        chunks.back() = dim - *chunk * (parts - 1);
        s.attrs.set("split", std::move(chunks));
      } else if (sv.rank_known && sv.shape.size() == 1 && sv.shape[0] >= 0) {
        parts = sv.shape[0];
        if (static_cast<int64_t>(sizes.size()) == parts) {
          s.attrs.set("split", sizes);
        } else {
          // Sizes known only at run time: the Split kernel reads them from its input from opset
          // 13 on; before, the split must go unused (SequenceLength alone), checked in run().
          s.inputs.push_back(n.inputs[1]);
          run_time_splits_.push_back(g_.nodes.size());
        }
      } else {
        return make_error(label,
                          ": the split input's length must be known (sequences are lowered onto tensors)");
      }
    } else {
      if (dim < 0) return make_error(label, ": the dim to split along must be known");
      parts = dim;
    }
    if (parts < 1 || parts > kMaxParts)
      return make_error(label, ": splits into ", parts, " tensors (1 to ", kMaxParts, ")");
    std::vector<int32_t> items;
    for (int64_t i = 0; i < parts; ++i) s.outputs.push_back(fresh(x));
    items = s.outputs;
    emit(std::move(s), names, id);
    if (!has_split && n.attrs.get_int("keepdims", 1) == 0) each_through("Squeeze", items, axis);
    seqs_[n.outputs[0]] = std::move(items);
    return {};
  }

  // The values of a constant int64 1-D input, else empty.
  [[nodiscard]] std::vector<int64_t> const_ints(int32_t value) const {
    const Value& v = g_.values[value];
    if (v.kind != ValueKind::param || v.param < 0 || v.dtype != DType::int64) return {};
    const SharedBytes& b = g_.params[v.param].data;
    std::vector<int64_t> out(b.size() / sizeof(int64_t));
    if (!out.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(int64_t));
    return out;
  }

 public:
  // Split nodes whose sizes arrive at run time: dropped when nothing reads their outputs (only
  // the sequence's length was used), an error before opset 13 when something does.
  Status settle_run_time_splits(int opset, std::vector<bool>& dead) {
    dead.assign(g_.nodes.size(), false);
    for (std::size_t i : run_time_splits_) {
      bool used = false;
      for (int32_t o : g_.nodes[i].outputs) {
        for (const Node& m : g_.nodes)
          for (int32_t v : m.inputs) used = used || v == o;
        for (int32_t v : g_.outputs) used = used || v == o;
      }
      if (!used)
        dead[i] = true;
      else if (opset < 13)
        return make_error(g_.node_label(static_cast<int32_t>(i)),
                          ": SplitToSequence with sizes known only at run time needs opset 13 or newer");
    }
    return {};
  }

 private:
  Graph& g_;
  std::map<int32_t, std::vector<int32_t>> seqs_;  // sequence value -> its tensors, in order
  std::vector<std::size_t> run_time_splits_;      // indexes into g_.nodes
};

}  // namespace

Status lower_sequences(Graph& g, int opset) {
  bool any = false;
  for (const Node& n : g.nodes) any = any || is_sequence_op(n.op);
  if (!any) return {};
  SequenceLowering lowering(g);
  WEAVE_TRY(lowering.run());
  std::vector<bool> dead;
  WEAVE_TRY(lowering.settle_run_time_splits(opset, dead));
  g.compact(dead);  // also drops the sequence values
  return {};
}

}  // namespace weave
