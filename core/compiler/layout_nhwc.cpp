#include "core/compiler/layout_nhwc.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

namespace {

// Physical axis i of an NHWC tensor is logical (NCHW) axis kToNhwc[i].
constexpr int64_t kToNhwc[4] = {0, 2, 3, 1};
constexpr int64_t kToNchw[4] = {0, 3, 1, 2};
constexpr const char* kReorderAttr = "weave_layout_reorder";

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
    std::vector<Node> old = std::move(g_.nodes);
    g_.nodes.clear();
    std::map<int32_t, std::string> old_names = std::move(g_.names.nodes);
    g_.names.nodes.clear();
    for (std::size_t i = 0; i < old.size(); ++i) {
      Node n = std::move(old[i]);
      const auto name = old_names.find(static_cast<int32_t>(i));
      visit(std::move(n), name == old_names.end() ? nullptr : &name->second);
    }
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
    if (!unary && !bcast && !concat && !resize) return false;
    if (n.outputs.size() != 1) return false;
    // Data inputs: all for broadcasting ops and Concat; the first for unary ops and Resize.
    const std::size_t data = (unary || resize) ? 1 : n.inputs.size();
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
    if (concat) {
      int64_t axis = n.attrs.get_int("axis", 1);
      if (axis < 0) axis += 4;
      if (axis < 0 || axis > 3) return false;
      const int64_t phys = std::find(kToNhwc, kToNhwc + 4, axis) - kToNhwc;
      n.attrs.set("axis", phys);
    }
    // Every operand was checked above, so none of these fails.
    for (std::size_t k = 0; k < data && k < n.inputs.size(); ++k) n.inputs[k] = operand(n.inputs[k]);
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
      if (perm.size() == 4) {
        std::vector<int64_t> q(4);
        for (int i = 0; i < 4; ++i) q[i] = kToNchw[perm[i]];
        n.inputs[0] = nhwc_[n.inputs[0]];
        n.attrs.set("perm", q);
        emit(std::move(n), name);
        return;
      }
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
  std::vector<int32_t> nhwc_;  // per value: its NHWC twin or kNoValue
  std::vector<bool> nchw_ok_;  // per value: its own id holds its (NCHW) data at this point
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
