#include "core/compiler/layout_nhwc.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>
#include <span>
#include <string>

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

namespace {

// Physical axis i of an NHWC tensor is logical (NCHW) axis kToNhwc[i].
constexpr int64_t kToNhwc[4] = {0, 2, 3, 1};
constexpr int64_t kToNchw[4] = {0, 3, 1, 2};
constexpr const char* kReorderAttr = "weave_layout_reorder";
// Channel shuffles of more channels than this keep their NCHW form.
constexpr int64_t kMaxShuffleChannels = int64_t{1} << 20;

const std::set<std::string>& unary_ops() {
  static const std::set<std::string> s = {"Relu",      "LeakyRelu",
                                          "Sigmoid",   "HardSigmoid",
                                          "HardSwish", "Tanh",
                                          "Elu",       "Selu",
                                          "Exp",       "Log",
                                          "Abs",       "Neg",
                                          "Sqrt",      "Reciprocal",
                                          "Floor",     "Ceil",
                                          "Round",     "Erf",
                                          "Softplus",  "Softsign",
                                          "Sin",       "Cos",
                                          "Sign",      "Mish",
                                          "Celu",      "ThresholdedRelu",
                                          "Gelu",      "Clip",
                                          "Swish"};
  return s;
}
const std::set<std::string>& broadcast_ops() {
  static const std::set<std::string> s = {"Add", "Sub", "Mul",  "Div",   "Pow",  "Max",
                                          "Min", "Sum", "Mean", "PRelu", "Where"};
  return s;
}
bool layout_sensitive(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "MaxPool" || op == "AveragePool" ||
         op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "BatchNormalization";
}

Shape to_nhwc(const Shape& s) {
  if (s.size() != 4) return s;
  return Shape{s[0], s[2], s[3], s[1]};
}

class LayoutPass {
 public:
  LayoutPass(Graph& g, const KernelRegistry& r) : g_(g), registry_(r) {}

  Status run() {
    const std::size_t n_values = g_.values.size();
    nhwc_.assign(n_values, kNoValue);
    nchw_ok_.assign(n_values, true);
    renamed_.assign(n_values, kNoValue);
    uses_ = use_counts(g_);
    std::vector<Node> old = std::move(g_.nodes);
    g_.nodes.clear();
    std::map<int32_t, std::string> old_names = std::move(g_.names.nodes);
    g_.names.nodes.clear();
    old_names_ = &old_names;
    static_inputs_ = inputs_static(g_);
    // Who reads each value (one reader: its node index; none: -1; several: -2), for patterns
    // that span nodes (a channel shuffle).
    reader_.assign(n_values, -1);
    for (std::size_t i = 0; i < old.size(); ++i)
      for (int32_t v : old[i].inputs)
        if (v >= 0 && v < static_cast<int32_t>(n_values))
          reader_[v] = reader_[v] == -1 ? static_cast<int32_t>(i) : -2;
    skip_.assign(old.size(), false);
    old_ = &old;
    for (std::size_t i = 0; i < old.size(); ++i) {
      if (skip_[i]) continue;  // taken by a pattern of an earlier node
      Node n = std::move(old[i]);
      const auto name = old_names.find(static_cast<int32_t>(i));
      if (channel_shuffle(n) || split_transpose(n)) continue;
      visit(std::move(n), name == old_names.end() ? nullptr : &name->second);
    }
    old_ = nullptr;
    old_names_ = nullptr;
    for (int32_t v : g_.outputs) need_nchw(v);
    return {};
  }

 private:
  [[nodiscard]] bool rank4(int32_t v) const {
    return v >= 0 && v < static_cast<int32_t>(g_.values.size()) && g_.values[v].rank_known &&
           g_.values[v].shape.size() == 4;
  }
  [[nodiscard]] bool has_nhwc(int32_t v) const {
    return v >= 0 && v < static_cast<int32_t>(nhwc_.size()) && nhwc_[v] != kNoValue;
  }

  void emit(Node n, const std::string* name) {
    for (int32_t& v : n.inputs) v = resolve(v);
    if (name != nullptr) g_.names.nodes[static_cast<int32_t>(g_.nodes.size())] = *name;
    g_.nodes.push_back(std::move(n));
  }

  Node transpose(int32_t in, int32_t out, const int64_t (&perm)[4]) {
    Node t;
    t.op = "Transpose";
    t.inputs = {in};
    t.outputs = {out};
    t.attrs.set("perm", std::vector<int64_t>(perm, perm + 4));
    t.attrs.set(kReorderAttr, int64_t{1});
    return t;
  }

  // The value whose data v's readers read: v itself, or what it was renamed to (a Transpose
  // that composed to the identity).
  [[nodiscard]] int32_t resolve(int32_t v) const {
    if (v < 0 || v >= static_cast<int32_t>(renamed_.size())) return v;
    return renamed_[v] != kNoValue ? renamed_[v] : v;
  }

  // The NHWC twin of value v, made by a Transpose when v has none yet.
  int32_t get_nhwc(int32_t v) {
    if (has_nhwc(v)) return nhwc_[v];
    Value nv = g_.values[v];
    nv.kind = ValueKind::intermediate;
    nv.param = -1;
    nv.shape = to_nhwc(nv.shape);
    const int32_t id = g_.add_value(nv);
    emit(transpose(v, id, kToNhwc), nullptr);
    grow();
    nhwc_[v] = id;
    return id;
  }

  // Makes sure v holds its NCHW data before a reader that needs it.
  void need_nchw(int32_t v) {
    if (v < 0 || v >= static_cast<int32_t>(nchw_ok_.size()) || nchw_ok_[v]) return;
    emit(transpose(nhwc_[v], v, kToNchw), nullptr);
    nchw_ok_[v] = true;
  }

  void grow() {
    nhwc_.resize(g_.values.size(), kNoValue);
    nchw_ok_.resize(g_.values.size(), true);
    renamed_.resize(g_.values.size(), kNoValue);
  }

  // A param permuted into NHWC order (padded to rank 4 first, numpy-style), cached per param.
  int32_t permuted_param(int32_t v) {
    if (auto it = permuted_.find(v); it != permuted_.end()) return it->second;
    const Value& val = g_.values[v];
    Shape s = val.shape;
    while (s.size() < 4) s.insert(s.begin(), 1);
    const ConstTensorView src = param_view(g_, v);
    const std::size_t es = dtype_size(val.dtype);
    const Shape ns = to_nhwc(s);
    AlignedBuffer buf(static_cast<std::size_t>(shape_numel(s)) * es);
    const auto* in = static_cast<const std::byte*>(src.data);
    // dst[n][h][w][c] = src[n][c][h][w]
    std::size_t k = 0;
    for (int64_t n = 0; n < s[0]; ++n)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w)
          for (int64_t c = 0; c < s[1]; ++c, ++k) {
            const int64_t from = ((n * s[1] + c) * s[2] + h) * s[3] + w;
            std::memcpy(buf.data() + k * es, in + from * es, es);
          }
    const int32_t id = g_.add_param(val.dtype, ns, SharedBytes::from(std::move(buf)));
    grow();
    permuted_[v] = id;
    return id;
  }

  // An operand of a layout-agnostic op in NHWC mode (a param of rank <= 4 or a 4-D value):
  // its NHWC form.
  int32_t operand(int32_t v) {
    if (v == kNoValue) return v;
    if (is_param(g_, v)) return shape_numel(g_.values[v].shape) == 1 ? v : permuted_param(v);
    return get_nhwc(v);
  }

  // Outputs of an NHWC node: fresh NHWC values; the originals are NCHW only once transposed.
  void redirect_outputs(Node& n) {
    for (int32_t& o : n.outputs) {
      if (o == kNoValue) continue;
      Value nv = g_.values[o];
      nv.shape = to_nhwc(nv.shape);
      const int32_t id = g_.add_value(nv);
      grow();
      nhwc_[o] = id;
      nchw_ok_[o] = false;
      o = id;
    }
  }

  // Which layout the node runs in; true = NHWC (and rewrites its inputs/attributes).
  bool try_nhwc(Node& n) {
    if (layout_sensitive(n.op)) {
      if (n.inputs.empty() || !rank4(n.inputs[0]) || !registry_.takes_nhwc(g_, n)) return false;
      // A BatchNormalization goes channels-last only after another NHWC op: alone between NCHW
      // ops it would cost two reorders for nothing.
      if (n.op == "BatchNormalization" && !has_nhwc(n.inputs[0])) return false;
      const bool residual = n.op == "Conv" && n.inputs.size() > 3 && n.inputs[3] != kNoValue;
      if (residual && !rank4(n.inputs[3])) return false;
      n.inputs[0] = get_nhwc(n.inputs[0]);
      if (residual) n.inputs[3] = get_nhwc(n.inputs[3]);
      n.attrs.set("weave_layout", std::string("NHWC"));
      return true;
    }
    const bool unary = unary_ops().count(n.op) > 0, bcast = broadcast_ops().count(n.op) > 0;
    const bool concat = n.op == "Concat", resize = n.op == "Resize" || n.op == "Upsample";
    const bool slice = n.op == "Slice", split = n.op == "Split";
    if (!unary && !bcast && !concat && !resize && !slice && !split) return false;
    // Split: its parts along one axis, each an NHWC value (YOLOv8's C2f halves its channels).
    if (split ? n.outputs.empty() : n.outputs.size() != 1) return false;
    // Data inputs: all for broadcasting ops and Concat; the first for unary ops, Resize, Slice, Split.
    const std::size_t data = (unary || resize || slice || split) ? 1 : n.inputs.size();
    bool any_nhwc = false;
    for (std::size_t k = 0; k < data && k < n.inputs.size(); ++k) {
      const int32_t v = n.inputs[k];
      if (v == kNoValue) continue;
      if (is_param(g_, v)) {
        if (concat || resize || g_.values[v].shape.size() > 4) return false;
        continue;
      }
      if (!rank4(v)) return false;
      any_nhwc = any_nhwc || has_nhwc(v);
    }
    if (!any_nhwc) return false;
    if (unary && n.op == "Clip") {
      for (std::size_t k = 1; k < n.inputs.size(); ++k)
        if (n.inputs[k] != kNoValue &&
            (!is_param(g_, n.inputs[k]) || shape_numel(g_.values[n.inputs[k]].shape) != 1))
          return false;
    }
    // Resize runs NHWC only where the channels-last kernel takes it (linear resizes of the
    // middle axes are beyond the reference kernel); its permuted params are checked by the query.
    if (resize) {
      if (!resize_params_nhwc(n) || !registry_.takes_nhwc(g_, n)) return false;
      n.attrs.set("weave_layout", std::string("NHWC"));
    }
    if (slice && !slice_axes_nhwc(n)) return false;
    if (concat || split) {
      int64_t axis = n.attrs.get_int("axis", split ? 0 : 1);
      if (axis < 0) axis += 4;
      if (axis < 0 || axis > 3) return false;
      const int64_t phys = std::find(kToNhwc, kToNhwc + 4, axis) - kToNhwc;
      n.attrs.set("axis", phys);
    }
    // Every operand was checked above, so none of these fails.
    for (std::size_t k = 0; k < data && k < n.inputs.size(); ++k) n.inputs[k] = operand(n.inputs[k]);
    return true;
  }

  // The node reading v when it is v's only use (no graph output), else -1.
  [[nodiscard]] int32_t only_reader(int32_t v) const {
    if (v < 0 || v >= static_cast<int32_t>(reader_.size()) || uses_[v] != 1 || is_graph_output(g_, v))
      return -1;
    return reader_[v] >= 0 ? reader_[v] : -1;
  }
  [[nodiscard]] bool static_shape(int32_t v, std::size_t rank) const {
    if (v < 0 || v >= static_cast<int32_t>(g_.values.size())) return false;
    const Value& val = g_.values[v];
    if (!val.rank_known || val.shape.size() != rank) return false;
    return std::all_of(val.shape.begin(), val.shape.end(), [](int64_t d) { return d >= 0; });
  }

  // Reshape -> Transpose -> Reshape of an NHWC value that only permutes its channels (a channel
  // shuffle: [N,C,H,W] -> [N,g,C/g,H,W] -> swap the two -> [N,C,H,W]) becomes one Gather of
  // the NHWC twin along its last axis; the Transpose and the second Reshape are skipped. Going
  // through NCHW instead cost a reorder each way around the shuffle.
  bool channel_shuffle(const Node& r1) {
    if (r1.op != "Reshape" || r1.inputs.size() != 2 || r1.outputs.size() != 1 || !has_nhwc(r1.inputs[0]) ||
        !rank4(r1.inputs[0]))
      return false;
    const int32_t ti = only_reader(r1.outputs[0]);
    if (ti < 0) return false;
    const Node& t = (*old_)[static_cast<std::size_t>(ti)];
    if (t.op != "Transpose" || t.inputs.size() != 1 || t.outputs.size() != 1) return false;
    const int32_t r2i = only_reader(t.outputs[0]);
    if (r2i < 0) return false;
    const Node& r2 = (*old_)[static_cast<std::size_t>(r2i)];
    // The shuffle's result has x's dims. Shape inference often lost x's own (a Concat of
    // computed Slices): the result's static dims stand for them, those of x it knows must agree,
    // and the Gather checks the rest when it is planned (weave_expect_dims).
    if (r2.op != "Reshape" || r2.inputs.size() != 2 || r2.outputs.size() != 1 ||
        r2.inputs[0] != t.outputs[0] || !static_shape(r2.outputs[0], 4))
      return false;
    const Shape x = g_.values[r2.outputs[0]].shape;
    const Shape& known = g_.values[r1.inputs[0]].shape;
    for (std::size_t k = 0; k < 4; ++k)
      if (known[k] >= 0 && known[k] != x[k]) return false;
    const Shape& s1 = g_.values[r1.outputs[0]].shape;
    const std::size_t r = s1.size();
    if (r < 5 || r > static_cast<std::size_t>(kMaxRank) || !static_shape(r1.outputs[0], r) || s1[0] != x[0] ||
        s1[r - 2] != x[2] || s1[r - 1] != x[3])
      return false;
    // The channel count bounds the table (a hostile static shape must not size it).
    int64_t c = 1;
    for (std::size_t k = 1; k + 2 < r; ++k)
      if (__builtin_mul_overflow(c, s1[k], &c) || c > kMaxShuffleChannels) return false;
    if (c != x[1] || c <= 0) return false;
    std::vector<int64_t> perm = t.attrs.get_ints("perm");
    if (perm.size() != r || perm[0] != 0 || perm[r - 2] != static_cast<int64_t>(r - 2) ||
        perm[r - 1] != static_cast<int64_t>(r - 1))
      return false;
    std::vector<bool> seen(r, false);
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(r) || seen[static_cast<std::size_t>(p)]) return false;
      seen[static_cast<std::size_t>(p)] = true;
    }
    // Output channel j (row-major over the transposed middle dims) reads input channel idx[j].
    const std::size_t m = r - 3;  // middle dims: 1 .. r-3
    std::vector<int64_t> in_stride(m, 1), out_dims(m);
    for (std::size_t k = m; k-- > 1;) in_stride[k - 1] = in_stride[k] * s1[k + 1];
    for (std::size_t k = 0; k < m; ++k) out_dims[k] = s1[static_cast<std::size_t>(perm[k + 1])];
    std::vector<int64_t> idx(static_cast<std::size_t>(c));
    std::vector<int64_t> pos(m, 0);
    for (int64_t j = 0; j < c; ++j) {
      int64_t from = 0;
      for (std::size_t k = 0; k < m; ++k)
        from += pos[k] * in_stride[static_cast<std::size_t>(perm[k + 1] - 1)];
      idx[static_cast<std::size_t>(j)] = from;
      for (std::size_t k = m; k-- > 0;) {
        if (++pos[k] < out_dims[k]) break;
        pos[k] = 0;
      }
    }
    const int32_t src = get_nhwc(r1.inputs[0]);
    const int32_t order = g_.add_param(DType::int64, Shape{c},
                                       SharedBytes::copy_of(std::as_bytes(std::span<const int64_t>(idx))));
    Value out = g_.values[r2.outputs[0]];
    out.shape = to_nhwc(out.shape);
    const int32_t id = g_.add_value(out);
    Node gather;
    gather.op = "Gather";
    gather.inputs = {src, order};
    gather.outputs = {id};
    gather.attrs.set("axis", int64_t{3});
    gather.attrs.set("weave_expect_dims", std::vector<int64_t>(out.shape.begin(), out.shape.end()));
    emit(std::move(gather), nullptr);
    grow();
    nhwc_[r2.outputs[0]] = id;
    nchw_ok_[r2.outputs[0]] = false;
    skip_[static_cast<std::size_t>(ti)] = true;
    skip_[static_cast<std::size_t>(r2i)] = true;
    return true;
  }

  // Whether a Reshape's shape input `said` gives `out` from an input of dims `in` of as many
  // elements: out's own dims, 0 for an input dim kept (without allowzero), one -1 for the rest.
  static bool reshape_says(const std::vector<int64_t>& said, const Shape& in, const Shape& out,
                           bool allowzero) {
    if (said.size() != out.size()) return false;
    int rest = 0;
    for (std::size_t k = 0; k < said.size(); ++k) {
      if (said[k] == -1)
        ++rest;
      else if (said[k] == 0 && !allowzero)
        rest += k < in.size() && in[k] == out[k] ? 0 : 2;
      else if (said[k] != out[k])
        return false;
    }
    return rest <= 1;
  }

  // Reshape of an NHWC value that splits its channels ([N, C, H, W] -> [N, c1, .., ck, H, W])
  // read only by a Transpose: a detector's head (YOLO: [N, 255, H, W] -> [N, 3, 85, H, W] ->
  // [N, 3, H, W, 85]). The same split of the twin's last axis ([N, H, W, c1, .., ck], the same
  // memory) and one Transpose of it, perm composed: without it, a reorder of the whole map to
  // NCHW, then the model's Transpose, each a strided copy of every float (the YOLO-style model's
  // 80x80 head: 2.4 + 1.7 ms of its 127). Static shapes only (graph inputs included, so that the
  // dims that steer the copy are the ones the run sees), and the Reshape's shape must say them
  // (SSD's head: [1, -1, 91, H, W]).
  bool split_transpose(const Node& r) {
    if (r.op != "Reshape" || r.inputs.size() != 2 || r.outputs.size() != 1 || !has_nhwc(r.inputs[0]) ||
        !static_inputs_ || !static_shape(r.inputs[0], 4))
      return false;
    const int32_t ti = only_reader(r.outputs[0]);
    if (ti < 0) return false;
    const Node& t = (*old_)[static_cast<std::size_t>(ti)];
    if (t.op != "Transpose" || t.inputs.size() != 1 || t.outputs.size() != 1 || t.inputs[0] != r.outputs[0])
      return false;
    const Shape& x = g_.values[r.inputs[0]].shape;  // NCHW
    const Shape& s = g_.values[r.outputs[0]].shape;
    const std::size_t rank = s.size();
    if (rank < 5 || rank > static_cast<std::size_t>(kMaxRank) || !static_shape(r.outputs[0], rank) ||
        s[0] != x[0] || s[rank - 2] != x[2] || s[rank - 1] != x[3])
      return false;
    int64_t c = 1;
    for (std::size_t k = 1; k + 2 < rank; ++k)
      if (s[k] < 1 || __builtin_mul_overflow(c, s[k], &c) || c > x[1]) return false;
    std::vector<int64_t> said;
    if (c != x[1] || !param_ints(r.inputs[1], said) ||
        !reshape_says(said, x, s, r.attrs.get_int("allowzero", 0) != 0))
      return false;
    std::vector<int64_t> perm = t.attrs.get_ints("perm");
    if (perm.empty())
      for (std::size_t k = rank; k-- > 0;) perm.push_back(static_cast<int64_t>(k));
    std::vector<bool> seen(rank, false);
    if (perm.size() != rank) return false;
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<std::size_t>(p)]) return false;
      seen[static_cast<std::size_t>(p)] = true;
    }
    // Axis k of the split NCHW tensor is axis at[k] of the split twin [N, H, W, c1, .., ck].
    std::vector<int64_t> at(rank);
    at[0] = 0, at[rank - 2] = 1, at[rank - 1] = 2;
    for (std::size_t k = 1; k + 2 < rank; ++k) at[k] = static_cast<int64_t>(k) + 2;
    Shape split{x[0], x[2], x[3]};
    split.insert(split.end(), s.begin() + 1, s.end() - 2);
    // The twin's N, H and W as the run has them (0: kept), the channels split as the model says.
    std::vector<int64_t> kept = split;
    std::fill(kept.begin(), kept.begin() + 3, 0);
    std::vector<int64_t> composed(rank);
    for (std::size_t k = 0; k < rank; ++k) composed[k] = at[static_cast<std::size_t>(perm[k])];
    Value sv = g_.values[r.outputs[0]];
    sv.shape = split;
    const int32_t split_id = g_.add_value(sv);
    const int32_t dims = g_.add_param(DType::int64, Shape{static_cast<int64_t>(rank)},
                                      SharedBytes::copy_of(std::as_bytes(std::span<const int64_t>(kept))));
    grow();
    Node reshape;
    reshape.op = "Reshape";
    reshape.inputs = {nhwc_[r.inputs[0]], dims};
    reshape.outputs = {split_id};
    emit(std::move(reshape), nullptr);
    skip_[static_cast<std::size_t>(ti)] = true;
    // The identity (SSD's head: [N, 6, 91, H, W] -> [N, H, W, 6, 91] is the twin's own order):
    // readers read the split twin, no copy; a graph output keeps its own buffer.
    std::vector<int64_t> identity(rank);
    std::iota(identity.begin(), identity.end(), int64_t{0});
    if (composed == identity && !is_graph_output(g_, t.outputs[0])) {
      renamed_[t.outputs[0]] = split_id;
      return true;
    }
    Node tr = t;
    tr.inputs = {split_id};
    tr.attrs.set("perm", composed);
    const auto name = old_names_->find(ti);
    emit(std::move(tr), name == old_names_->end() ? nullptr : &name->second);
    return true;
  }

  // The values of a 1-D int64 or int32 param (axes); false for anything else.
  [[nodiscard]] bool param_ints(int32_t v, std::vector<int64_t>& out) const {
    if (!is_param(g_, v) || g_.values[v].shape.size() != 1) return false;
    const ConstTensorView a = param_view(g_, v);
    if (a.dtype == DType::int64)
      out.assign(a.as<int64_t>(), a.as<int64_t>() + a.numel());
    else if (a.dtype == DType::int32)
      out.assign(a.as<int32_t>(), a.as<int32_t>() + a.numel());
    else
      return false;
    return true;
  }

  // The spatial axes of a ReduceMean / ReduceMax, from the `axes` attribute or a constant input
  // 1: whether they are exactly H and W of a 4-D value.
  [[nodiscard]] bool reduces_hw(const Node& n) const {
    std::vector<int64_t> axes;
    if (n.attrs.has("axes")) {
      axes = n.attrs.get_ints("axes");
    } else if (n.inputs.size() > 1 && n.inputs[1] != kNoValue && !param_ints(n.inputs[1], axes)) {
      return false;
    }
    if (axes.size() != 2) return false;
    for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
    std::sort(axes.begin(), axes.end());
    return axes[0] == 2 && axes[1] == 3;
  }

  // ReduceMean / ReduceMax over H and W of an NHWC-only value (a classifier's global pooling
  // written as x.mean([2, 3])): the channels-last GlobalAveragePool / GlobalMaxPool, then, without
  // keepdims, a Flatten of its [N,1,1,C] to [N,C], which is the same memory. Reading the NCHW
  // value instead cost a reorder of the whole map and the generic reduction.
  bool spatial_reduce(const Node& n, const std::string* name) {
    if ((n.op != "ReduceMean" && n.op != "ReduceMax") || n.inputs.empty() || n.outputs.size() != 1 ||
        !rank4(n.inputs[0]) || !has_nhwc(n.inputs[0]) || nchw_ok_[n.inputs[0]] || !reduces_hw(n))
      return false;
    Node pool;
    pool.op = n.op == "ReduceMean" ? "GlobalAveragePool" : "GlobalMaxPool";
    pool.inputs = {n.inputs[0]};
    pool.outputs = {n.outputs[0]};
    if (!registry_.takes_nhwc(g_, pool)) return false;
    const bool keep = n.attrs.get_int("keepdims", 1) != 0;
    const Value& in = g_.values[n.inputs[0]];
    Value pooled = in;
    pooled.kind = ValueKind::intermediate;
    pooled.param = -1;
    pooled.shape = Shape{in.shape[0], 1, 1, in.shape[1]};  // NHWC
    const int32_t pv = g_.add_value(pooled);
    grow();
    pool.inputs[0] = nhwc_[n.inputs[0]];
    pool.outputs[0] = pv;
    pool.attrs.set("weave_layout", std::string("NHWC"));
    emit(std::move(pool), keep ? name : nullptr);
    const int32_t out = n.outputs[0];
    if (keep) {  // [N,C,1,1]: pv is its NHWC twin
      nhwc_[out] = pv;
      nchw_ok_[out] = false;
      return true;
    }
    Node flat;  // [N,1,1,C] -> [N,C], the same memory (also for N = 0, which a Reshape to [0,-1] refuses)
    flat.op = "Flatten";
    flat.inputs = {pv};
    flat.outputs = {out};
    flat.attrs.set("axis", int64_t{1});
    emit(std::move(flat), name);
    return true;
  }

  // Slice of an NHWC value with constant axes (or none: the first len(starts) axes): the same
  // Slice of the twin, axes mapped to their physical places. Starts and ends may be computed
  // (a channel split's half is Shape arithmetic, which the plan folds).
  bool slice_axes_nhwc(Node& n) {
    if (n.inputs.size() < 3 || n.inputs[1] < 0 || n.inputs[2] < 0) return false;
    std::vector<int64_t> axes;
    if (n.inputs.size() > 3 && n.inputs[3] != kNoValue) {
      if (!param_ints(n.inputs[3], axes)) return false;
    } else {
      const Value& st = g_.values[n.inputs[1]];
      if (!st.rank_known || st.shape.size() != 1 || st.shape[0] < 0 || st.shape[0] > 4) return false;
      for (int64_t k = 0; k < st.shape[0]; ++k) axes.push_back(k);
    }
    for (int64_t& a : axes) {
      if (a < -4 || a > 3) return false;
      if (a < 0) a += 4;
      a = std::find(kToNhwc, kToNhwc + 4, a) - kToNhwc;
    }
    const int32_t mapped = g_.add_param(DType::int64, Shape{static_cast<int64_t>(axes.size())},
                                        SharedBytes::copy_of(std::as_bytes(std::span<const int64_t>(axes))));
    grow();
    if (n.inputs.size() < 4) n.inputs.resize(4, kNoValue);
    n.inputs[3] = mapped;
    return true;
  }

  // Resize's roi / scales / sizes must be params (or omitted); they are permuted.
  bool resize_params_nhwc(Node& n) {
    for (std::size_t k = 1; k < n.inputs.size(); ++k) {
      const int32_t v = n.inputs[k];
      if (v == kNoValue) continue;
      if (!is_param(g_, v)) return false;
      const int64_t count = shape_numel(g_.values[v].shape);
      if (count == 0) continue;  // an empty placeholder
      const bool roi = k == 1;
      if (count != (roi ? 8 : 4)) return false;
    }
    for (std::size_t k = 1; k < n.inputs.size(); ++k) {
      const int32_t v = n.inputs[k];
      if (v == kNoValue || shape_numel(g_.values[v].shape) == 0) continue;
      const Value val = g_.values[v];
      const ConstTensorView src = param_view(g_, v);
      const std::size_t es = dtype_size(val.dtype);
      AlignedBuffer buf(static_cast<std::size_t>(shape_numel(val.shape)) * es);
      const auto* in = static_cast<const std::byte*>(src.data);
      const int64_t halves = k == 1 ? 2 : 1;
      for (int64_t h = 0; h < halves; ++h)
        for (int64_t i = 0; i < 4; ++i)
          std::memcpy(buf.data() + (h * 4 + i) * es, in + (h * 4 + kToNhwc[i]) * es, es);
      n.inputs[k] = g_.add_param(val.dtype, val.shape, SharedBytes::from(std::move(buf)));
      grow();
    }
    return true;
  }

  void visit(Node n, const std::string* name) {
    // Transpose of an NHWC-only value: compose with the layout's permutation.
    if (n.op == "Transpose" && n.inputs.size() == 1 && has_nhwc(n.inputs[0]) && !nchw_ok_[n.inputs[0]]) {
      std::vector<int64_t> perm = n.attrs.get_ints("perm");
      if (perm.empty()) perm = {3, 2, 1, 0};
      // Composed only when perm is a permutation of 0..3; anything else goes to the Transpose
      // kernel (below, on the NCHW data), which names the node and the perm.
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      if (sorted == std::vector<int64_t>{0, 1, 2, 3}) {
        std::vector<int64_t> q(4);
        for (int i = 0; i < 4; ++i) q[i] = kToNchw[perm[i]];
        n.inputs[0] = nhwc_[n.inputs[0]];
        // The identity (ConvNeXt's permute to channels-last after its depthwise convolution,
        // which already wrote NHWC): readers read the twin, no copy. A graph output keeps its
        // own buffer.
        if (q == std::vector<int64_t>{0, 1, 2, 3} && n.outputs.size() == 1 && n.outputs[0] >= 0 &&
            !is_graph_output(g_, n.outputs[0])) {
          renamed_[n.outputs[0]] = resolve(n.inputs[0]);
          return;
        }
        n.attrs.set("perm", q);
        emit(std::move(n), name);
        return;
      }
    }
    // A Transpose [0, 3, 1, 2] of a value that holds its data (a channels-last tensor of the
    // model's own: ConvNeXt's permute back after its MLP): that data is the output's NHWC twin.
    // The NCHW output is made only if a reader needs it (need_nchw: the same Transpose).
    if (n.op == "Transpose" && n.inputs.size() == 1 && n.outputs.size() == 1 && rank4(n.inputs[0]) &&
        rank4(n.outputs[0]) && nchw_ok_[n.inputs[0]] && !is_param(g_, n.inputs[0]) &&
        n.attrs.get_ints("perm") == std::vector<int64_t>(kToNchw, kToNchw + 4)) {
      nhwc_[n.outputs[0]] = resolve(n.inputs[0]);
      nchw_ok_[n.outputs[0]] = false;
      return;
    }
    // Shape of an NHWC-only value: the physical dims gathered back into NCHW order.
    if (n.op == "Shape" && n.inputs.size() == 1 && n.outputs.size() == 1 && has_nhwc(n.inputs[0]) &&
        !nchw_ok_[n.inputs[0]] && !n.attrs.has("start") && !n.attrs.has("end")) {
      const int32_t out = n.outputs[0];
      Value sv;
      sv.dtype = DType::int64;
      sv.shape = {4};
      const int32_t phys = g_.add_value(sv);
      std::vector<int64_t> idx(kToNchw, kToNchw + 4);
      const int32_t order = g_.add_param(DType::int64, Shape{4},
                                         SharedBytes::copy_of(std::as_bytes(std::span<const int64_t>(idx))));
      grow();
      n.inputs[0] = nhwc_[n.inputs[0]];
      n.outputs[0] = phys;
      emit(std::move(n), name);
      Node gather;
      gather.op = "Gather";
      gather.inputs = {phys, order};
      gather.outputs = {out};
      gather.attrs.set("axis", int64_t{0});
      emit(std::move(gather), nullptr);
      return;
    }
    if (spatial_reduce(n, name)) return;
    // try_nhwc emits input reorders only once it has decided for NHWC.
    Node trial = n;
    if (try_nhwc(trial)) {
      redirect_outputs(trial);
      emit(std::move(trial), name);
      return;
    }
    for (int32_t v : n.inputs) need_nchw(v);
    emit(std::move(n), name);
  }

  Graph& g_;
  const KernelRegistry& registry_;
  std::vector<int> uses_;        // per original value: node inputs and graph outputs reading it
  std::vector<int32_t> reader_;  // per original value: its one reading node, -1 none, -2 several
  std::vector<bool> skip_;       // per original node: emitted already as part of a pattern
  std::vector<Node>* old_ = nullptr;
  const std::map<int32_t, std::string>* old_names_ = nullptr;
  bool static_inputs_ = false;    // every graph input fully static (inputs_static)
  std::vector<int32_t> nhwc_;     // per value: its NHWC twin or kNoValue
  std::vector<bool> nchw_ok_;     // per value: its own id holds its (NCHW) data at this point
  std::vector<int32_t> renamed_;  // per value: the value holding its data instead, or kNoValue
  std::map<int32_t, int32_t> permuted_;
};

}  // namespace

Status layout_nhwc(Graph& g, const KernelRegistry& registry) {
  LayoutPass pass(g, registry);
  WEAVE_TRY(pass.run());
  if (Status s = g.validate(); !s) return s.error().context("layout pass");
  return {};
}

int count_layout_transposes(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == "Transpose" && node.attrs.get_int(kReorderAttr, 0) != 0;
  return n;
}

}  // namespace weave
