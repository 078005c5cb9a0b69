#include "core/import/onnx_import.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/import/canonicalize.h"
#include "core/import/guarded_inference.h"
#include "core/import/onnx_tensor.h"
#include "core/import/schema_check.h"
#include "core/kernels/registry.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace weave {

namespace {

using onnx_import::decode_tensor;

struct TypeInfo {
  DType dtype = DType::undefined;
  Shape shape;
  std::vector<std::string> dim_names;  // parallel to shape when any dim is symbolic
  bool rank_known = false;
};

Expected<TypeInfo> type_info(const onnx::TypeProto& t, const std::string& what) {
  TypeInfo out;
  if (!t.has_tensor_type())
    return make_error(what, ": is not a tensor (sequence, map and optional types are not supported)");
  const auto& tt = t.tensor_type();
  if (tt.elem_type() != 0) {
    if (!dtype_valid(tt.elem_type()) || dtype_size(static_cast<DType>(tt.elem_type())) == 0)
      return make_error(what, ": unsupported element type ", tt.elem_type());
    out.dtype = static_cast<DType>(tt.elem_type());
  }
  if (!tt.has_shape()) return out;
  if (tt.shape().dim_size() > kMaxRank)
    return make_error(what, ": rank ", tt.shape().dim_size(), " exceeds the maximum of ", kMaxRank);
  out.rank_known = true;
  bool any_name = false;
  for (const auto& d : tt.shape().dim()) {
    out.shape.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : kDynamic);
    out.dim_names.push_back(d.has_dim_param() ? d.dim_param() : std::string());
    any_name = any_name || d.has_dim_param();
  }
  if (!any_name) out.dim_names.clear();
  return out;
}

Expected<AttrValue> convert_attr(const onnx::AttributeProto& a, const std::string& where) {
  using A = onnx::AttributeProto;
  const std::string what = where + ": attribute '" + a.name() + "'";
  if (!a.ref_attr_name().empty()) return make_error(what, ": references a function attribute, not supported");
  switch (onnx_import::attribute_type(a)) {
    case A::INT:
      return AttrValue(static_cast<int64_t>(a.i()));
    case A::FLOAT:
      return AttrValue(a.f());
    case A::STRING:
      return AttrValue(a.s());
    case A::INTS:
      return AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case A::FLOATS:
      return AttrValue(std::vector<float>(a.floats().begin(), a.floats().end()));
    case A::STRINGS:
      return AttrValue(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case A::TENSOR: {
      auto t = decode_tensor(a.t(), what);
      if (!t) return t.error();
      return AttrValue(TensorAttr{t->dtype, std::move(t->shape), std::move(t->bytes)});
    }
    case A::GRAPH:
    case A::GRAPHS:
      return make_error(what, ": subgraphs (control flow) are not supported");
    case A::UNDEFINED:
      return make_error(what, ": has no value");
    default:
      return make_error(what, ": attribute kind ", static_cast<int>(a.type()), " is not supported");
  }
}

// The tensor a Constant node carries, whichever attribute holds it.
Expected<onnx_import::DecodedTensor> constant_value(const onnx::NodeProto& n, const std::string& where) {
  if (n.attribute_size() != 1) return make_error(where, ": Constant needs exactly one value attribute");
  const auto& a = n.attribute(0);
  onnx_import::DecodedTensor out;
  auto put = [&out](DType t, const void* p, std::size_t count, std::size_t esize, Shape shape) {
    out.dtype = t;
    out.shape = std::move(shape);
    out.bytes.resize(count * esize);
    if (count) std::memcpy(out.bytes.data(), p, count * esize);
  };
  if (a.name() == "value") {
    if (!a.has_t()) return make_error(where, ": Constant 'value' is not a tensor");
    return decode_tensor(a.t(), where + ": Constant value");
  }
  if (a.name() == "value_float") {
    float v = a.f();
    put(DType::float32, &v, 1, sizeof v, {});
  } else if (a.name() == "value_int") {
    int64_t v = a.i();
    put(DType::int64, &v, 1, sizeof v, {});
  } else if (a.name() == "value_floats") {
    std::vector<float> v(a.floats().begin(), a.floats().end());
    put(DType::float32, v.data(), v.size(), sizeof(float), {static_cast<int64_t>(v.size())});
  } else if (a.name() == "value_ints") {
    std::vector<int64_t> v(a.ints().begin(), a.ints().end());
    put(DType::int64, v.data(), v.size(), sizeof(int64_t), {static_cast<int64_t>(v.size())});
  } else {
    return make_error(where, ": Constant attribute '", a.name(), "' is not supported");
  }
  return out;
}

SharedBytes to_shared(const std::vector<uint8_t>& bytes) {
  return SharedBytes::copy_of(std::as_bytes(std::span<const uint8_t>(bytes)));
}

bool default_domain(const std::string& d) {
  return d.empty() || d == "ai.onnx";
}

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";
constexpr int kNewestOpset = 17;
constexpr int64_t kZero = 0;  // libonnx 1.12's newest default-domain opset

class Importer {
 public:
  Importer(onnx::ModelProto& model, std::string label, const ImportOptions& opt)
      : model_(model),
        label_(std::move(label)),
        opt_(opt),
        registry_(opt.registry ? *opt.registry : KernelRegistry::global()) {}

  Expected<Graph> run() {
    if (!model_.has_graph()) return err("no graph in the model (not an ONNX model, or truncated)");
    WEAVE_TRY(read_header());
    // Before anything reads an attribute: each node against its op's schema.
    WEAVE_TRY(check_schemas(*model_.mutable_graph(), ""));
    const auto& gp = model_.graph();
    for (int i = 0; i < gp.initializer_size(); ++i) WEAVE_TRY(add_initializer(gp.initializer(i)));
    if (gp.sparse_initializer_size() > 0) return err("sparse initializers are not supported");
    for (int i = 0; i < gp.input_size(); ++i) WEAVE_TRY(add_input(gp.input(i)));
    for (int i = 0; i < gp.node_size(); ++i) WEAVE_TRY(add_node(gp.node(i), i));
    if (!unsupported_.empty()) return unsupported_error();
    for (int i = 0; i < gp.output_size(); ++i) WEAVE_TRY(add_output(gp.output(i)));
    if (g_.outputs.empty()) return err("the graph has no outputs");
    if (opt_.infer_shapes) WEAVE_TRY(infer_shapes());
    WEAVE_TRY(fill_output_infos());
    if (Status s = canonicalize_opset(g_, opset_); !s) return s.error().context(label_);
    if (Status s = lower_sequences(g_, opset_); !s) return s.error().context(label_);
    if (Status s = g_.validate(); !s) return s.error().context(label_);
    return std::move(g_);
  }

 private:
  Error err(const std::string& msg) const { return Error(label_ + ": " + msg); }

  Status read_header() {
    bool found = false;
    for (const auto& o : model_.opset_import()) {
      if (o.version() >= 1 && o.version() <= INT_MAX)
        opsets_[default_domain(o.domain()) ? std::string() : o.domain()] = static_cast<int>(o.version());
      if (default_domain(o.domain())) {
        opset_ = static_cast<int>(o.version());
        found = true;
      }
    }
    // A model of training-domain nodes alone may import no default opset; kernels then see
    // the newest forms, and a default-domain node is an error (add_node).
    if (!found && !training_domain_only())
      return err("the model declares no opset for the default ONNX domain");
    if (!found) opset_ = kNewestOpset;
    opsets_[""] = opset_;
    if (opset_ < 1) return err("invalid opset " + std::to_string(opset_));
    std::string producer = model_.producer_name();
    if (!model_.producer_version().empty())
      producer += (producer.empty() ? "" : " ") + model_.producer_version();
    g_.metadata["producer"] = producer;
    g_.metadata["opset"] = std::to_string(opset_);
    for (const auto& p : model_.metadata_props()) g_.metadata[p.key()] = p.value();
    return {};
  }

  Status define(const std::string& name, int32_t id, const std::string& where) {
    if (!by_name_.emplace(name, id).second) return err(where + ": '" + name + "' is defined twice");
    g_.names.values[id] = name;
    return {};
  }

  Status add_initializer(const onnx::TensorProto& t) {
    if (t.name().empty()) return err("an initializer has no name");
    auto d = decode_tensor(t, "initializer '" + t.name() + "'");
    if (!d) return d.error().context(label_);
    int32_t id = g_.add_param(d->dtype, d->shape, to_shared(d->bytes));
    return define(t.name(), id, "initializer");
  }

  Status add_input(const onnx::ValueInfoProto& in) {
    if (by_name_.count(in.name())) {
      // An initializer also listed as input (IR < 4 style): it stays a param (R1).
      if (g_.values[by_name_[in.name()]].kind == ValueKind::param) return {};
      return err("graph input '" + in.name() + "' is defined twice");
    }
    if (in.name().empty()) return err("a graph input has no name");
    auto ti = type_info(in.type(), "input '" + in.name() + "'");
    if (!ti) return ti.error().context(label_);
    Value v;
    v.kind = ValueKind::input;
    v.dtype = ti->dtype;
    v.shape = ti->shape;
    v.rank_known = ti->rank_known;
    int32_t id = g_.add_value(std::move(v));
    WEAVE_TRY(define(in.name(), id, "graph input"));
    g_.inputs.push_back(id);
    g_.input_infos.push_back(TensorInfo{in.name(), ti->dtype, ti->shape, ti->dim_names});
    return {};
  }

  // Every node is of the ai.onnx.preview.training domain (Adagrad, Momentum, Adam models).
  [[nodiscard]] bool training_domain_only() const {
    const auto& nodes = model_.graph().node();
    return !nodes.empty() && std::all_of(nodes.begin(), nodes.end(), [](const onnx::NodeProto& n) {
      return n.domain() == kTrainingDomain;
    });
  }

  bool op_supported(const onnx::NodeProto& n) const {
    if (!opt_.check_ops) return true;
    if (n.domain() == kTrainingDomain) {
      const std::string& op = n.op_type();
      return (op == "Adagrad" || op == "Momentum" || op == "Adam") && registry_.supports(op);
    }
    if (!default_domain(n.domain())) return false;
    const std::string& op = n.op_type();
    if (op == "Adagrad" || op == "Momentum" || op == "Adam") return false;  // training domain only
    // Identity/Dropout are removed by the compiler; Upsample becomes Resize.
    if (op == "Constant" || op == "Identity" || op == "Dropout") return true;
    // Lowered onto tensor ops after import (lower_sequences), or refused there by node.
    if (op == "SequenceEmpty" || op == "SequenceConstruct" || op == "SequenceInsert" ||
        op == "SequenceErase" || op == "SequenceAt" || op == "SequenceLength" || op == "ConcatFromSequence" ||
        op == "SplitToSequence")
      return true;
    if (op == "Upsample") return registry_.supports("Resize");
    return registry_.supports(op);
  }

  // Every node whose op is taken (and those of its subgraphs) checked against its schema; an
  // attribute's kind left unset by an old exporter is set from its value on the way.
  Status check_schemas(onnx::GraphProto& graph, const std::string& prefix) {
    for (int i = 0; i < graph.node_size(); ++i) {
      onnx::NodeProto& n = *graph.mutable_node(i);
      if (!op_supported(n)) continue;  // reported with the other unsupported ops
      const std::string where = prefix + onnx_import::node_where(i, n);
      if (const onnx::OpSchema* schema = onnx_import::schema_for(n, opsets_)) {
        if (Status s = onnx_import::check_node_schema(n, *schema, where); !s)
          return s.error().context(label_);
      } else if (const onnx::OpSchema* newest = onnx_import::newest_schema(n)) {
        if (Status s = onnx_import::check_required_outputs(n, *newest, where); !s)
          return s.error().context(label_);
      }
      for (onnx::AttributeProto& a : *n.mutable_attribute()) {
        if (a.has_g()) WEAVE_TRY(check_schemas(*a.mutable_g(), where + " " + a.name() + ": "));
        for (onnx::GraphProto& g : *a.mutable_graphs())
          WEAVE_TRY(check_schemas(g, where + " " + a.name() + ": "));
      }
    }
    return {};
  }

  Status add_node(const onnx::NodeProto& n, int index) {
    const std::string where = onnx_import::node_where(index, n);
    if (n.op_type().empty()) return err(where + ": has no op type");
    if (n.op_type() == "Constant" && default_domain(n.domain())) {
      if (n.output_size() != 1 || n.output(0).empty()) return err(where + ": Constant needs one output");
      auto d = constant_value(n, where);
      if (!d) return d.error().context(label_);
      int32_t id = g_.add_param(d->dtype, d->shape, to_shared(d->bytes));
      return define(n.output(0), id, where);
    }
    if (n.op_type() == "If" && default_domain(n.domain())) return add_if(n, index, where);
    if (n.op_type() == "Scan" && default_domain(n.domain())) return add_scan(n, index, where);
    Node node;
    node.op = n.op_type();
    for (const auto& name : n.input()) {
      if (name.empty()) {
        node.inputs.push_back(kNoValue);
        continue;
      }
      auto it = by_name_.find(name);
      if (it == by_name_.end())
        return err(where + ": input '" + name +
                   "' is not defined (no graph input, initializer or earlier node output has that name)");
      node.inputs.push_back(it->second);
    }
    const bool supported = op_supported(n);
    if (!supported) {
      std::string key = default_domain(n.domain()) ? n.op_type() : n.domain() + "::" + n.op_type();
      unsupported_[key].push_back(n.name().empty() ? "#" + std::to_string(index) : "'" + n.name() + "'");
    } else {
      for (const auto& a : n.attribute()) {
        auto v = convert_attr(a, where);
        if (!v) return v.error().context(label_);
        node.attrs.set(a.name(), std::move(*v));
      }
    }
    const auto node_id = static_cast<int32_t>(g_.nodes.size());
    for (const auto& name : n.output()) {
      if (name.empty()) {
        node.outputs.push_back(kNoValue);
        continue;
      }
      int32_t id = g_.add_value(Value{});
      WEAVE_TRY(define(name, id, where));
      node.outputs.push_back(id);
    }
    if (!n.name().empty()) g_.names.nodes[node_id] = n.name();
    g_.nodes.push_back(std::move(node));
    return {};
  }

  // If, lowered onto Where: both branches are inlined (their nodes read the outer scope) and
  // each output selects between the branches' values. Taken only when every output has the same
  // dtype and the same static shape in both branches (and the condition one element of no higher
  // rank), so that computing both and selecting equals computing the one taken.
  Status add_if(const onnx::NodeProto& n, int index, const std::string& where) {
    const onnx::GraphProto* branch[2] = {nullptr, nullptr};
    for (const auto& a : n.attribute()) {
      if (a.name() == "then_branch" && a.has_g()) branch[0] = &a.g();
      if (a.name() == "else_branch" && a.has_g()) branch[1] = &a.g();
    }
    if (!branch[0] || !branch[1] || n.input_size() != 1)
      return err(where + ": If needs a condition and both branches");
    auto cond = by_name_.find(n.input(0));
    if (cond == by_name_.end()) return err(where + ": input '" + n.input(0) + "' is not defined");
    // An id, not the iterator: restoring by_name_ after each branch invalidates iterators into it.
    const int32_t cond_id = cond->second;
    const Value& cv = g_.values[cond_id];
    const bool one_element =
        cv.rank_known && std::all_of(cv.shape.begin(), cv.shape.end(), [](int64_t d) { return d == 1; });
    const int outputs = n.output_size();
    for (const onnx::GraphProto* b : branch)
      if (b->output_size() != outputs)
        return err(where + ": a branch has another number of outputs than the If");
    for (int k = 0; k < outputs; ++k) {
      auto t = type_info(branch[0]->output(k).type(), where + " then_branch output " + std::to_string(k));
      auto e = type_info(branch[1]->output(k).type(), where + " else_branch output " + std::to_string(k));
      if (!t) return t.error().context(label_);
      if (!e) return e.error().context(label_);
      const bool static_shape =
          t->rank_known && std::all_of(t->shape.begin(), t->shape.end(), [](int64_t d) { return d >= 0; });
      if (!one_element || !static_shape || t->dtype != e->dtype || !e->rank_known || t->shape != e->shape ||
          cv.shape.size() > t->shape.size())
        return err(where +
                   ": If is supported when both branches give outputs of one dtype and one static shape "
                   "(selected after computing both) and the condition is one element");
    }
    std::vector<int32_t> chosen[2];
    for (int b = 0; b < 2; ++b) {
      const auto outer = by_name_;  // names a branch defines do not leave it
      for (const auto& t : branch[b]->initializer()) WEAVE_TRY(add_initializer(t));
      for (const auto& node : branch[b]->node()) WEAVE_TRY(add_node(node, index));
      for (const auto& o : branch[b]->output()) {
        auto it = by_name_.find(o.name());
        if (it == by_name_.end()) return err(where + ": branch output '" + o.name() + "' is not defined");
        chosen[b].push_back(it->second);
      }
      by_name_ = outer;
    }
    for (int k = 0; k < outputs; ++k) {
      if (n.output(k).empty()) continue;
      Node w;
      w.op = "Where";
      w.inputs = {cond_id, chosen[0][static_cast<std::size_t>(k)], chosen[1][static_cast<std::size_t>(k)]};
      const int32_t id = g_.add_value(Value{});
      WEAVE_TRY(define(n.output(k), id, where));
      w.outputs = {id};
      if (!n.name().empty()) g_.names.nodes[static_cast<int32_t>(g_.nodes.size())] = n.name();
      g_.nodes.push_back(std::move(w));
    }
    return {};
  }

  // Scan, unrolled: each step gathers element t of every scan input, inlines the body with the
  // states of the step before, and the scan outputs stack the steps' values on a new axis.
  // Opset 9+: scan axis 0. Opset 8: axis 0 is a batch (each batch element scanned on its own
  // along axis 1) and sequence_lens must be absent. Taken when the lengths are known when the
  // model loads (at most kMaxScanSteps steps in all) and axes and directions are the defaults.
  Status add_scan(const onnx::NodeProto& n, int index, const std::string& where) {
    constexpr int64_t kMaxScanSteps = 256;
    const bool batched = opset_ < 9;
    const onnx::GraphProto* body = nullptr;
    int64_t m = -1;
    for (const auto& a : n.attribute()) {
      if (a.name() == "body" && a.has_g()) body = &a.g();
      if (a.name() == "num_scan_inputs") m = a.i();
      const bool all_zero = std::all_of(a.ints().begin(), a.ints().end(), [](int64_t v) { return v == 0; });
      if ((a.name() == "scan_input_axes" || a.name() == "scan_output_axes" ||
           a.name() == "scan_input_directions" || a.name() == "scan_output_directions" ||
           a.name() == "directions") &&
          !all_zero)
        return err(where + ": Scan is supported with the default axes and directions only");
    }
    const int first = batched ? 1 : 0;  // opset 8: input 0 is sequence_lens
    if (batched && (n.input_size() < 1 || !n.input(0).empty()))
      return err(where + ": Scan-8 is supported without sequence_lens only");
    const int inputs = n.input_size() - first;
    if (!body || m < 1 || m > inputs)
      return err(where + ": Scan needs a body and 1 to " + std::to_string(inputs) + " scan inputs");
    const int states = inputs - static_cast<int>(m);
    if (body->input_size() != inputs || body->output_size() < states ||
        n.output_size() != body->output_size())
      return err(where + ": the Scan body's inputs and outputs do not match the node's");
    std::vector<int32_t> in_ids;
    int64_t steps = -1, batch = batched ? -1 : 1;
    for (int k = 0; k < inputs; ++k) {
      auto it = by_name_.find(n.input(first + k));
      if (it == by_name_.end()) return err(where + ": input '" + n.input(first + k) + "' is not defined");
      in_ids.push_back(it->second);
      const Value& v = g_.values[it->second];
      auto dim = [&](std::size_t d) { return v.rank_known && v.shape.size() > d ? v.shape[d] : -1; };
      if (batched && (dim(0) < 0 || (batch >= 0 && dim(0) != batch)))
        return err(where + ": Scan-8 is unrolled, so the batch dim must be known and equal");
      if (batched) batch = dim(0);
      if (k < states) continue;
      const int64_t len = dim(batched ? 1 : 0);
      if (len < 0 || (steps >= 0 && len != steps))
        return err(where + ": Scan is unrolled, so the scan inputs' length must be known and equal");
      steps = len;
    }
    if (steps < 1 || batch < 1 || steps * batch > kMaxScanSteps)
      return err(where + ": Scan of " + std::to_string(batch * steps) + " steps is not supported (1 to " +
                 std::to_string(kMaxScanSteps) + ", unrolled)");
    const auto outputs = static_cast<std::size_t>(n.output_size());
    std::vector<std::vector<int32_t>> per_batch(outputs);  // per output: one value per batch element
    for (int64_t bi = 0; bi < batch; ++bi) {
      std::vector<int32_t> ins = in_ids;
      if (batched)
        for (int32_t& v : ins) v = gather(v, bi);
      std::vector<int32_t> state(ins.begin(), ins.begin() + states);
      std::vector<std::vector<int32_t>> scanned(outputs - static_cast<std::size_t>(states));
      for (int64_t t = 0; t < steps; ++t) {
        const auto outer = by_name_;
        for (int k = 0; k < inputs; ++k)
          by_name_[body->input(k).name()] =
              k < states ? state[static_cast<std::size_t>(k)] : gather(ins[static_cast<std::size_t>(k)], t);
        for (const auto& init : body->initializer()) WEAVE_TRY(add_initializer(init));
        for (const auto& node : body->node()) WEAVE_TRY(add_node(node, index));
        for (int k = 0; k < body->output_size(); ++k) {
          auto it = by_name_.find(body->output(k).name());
          if (it == by_name_.end())
            return err(where + ": body output '" + body->output(k).name() + "' is not defined");
          if (k < states)
            state[static_cast<std::size_t>(k)] = it->second;
          else
            scanned[static_cast<std::size_t>(k - states)].push_back(it->second);
        }
        by_name_ = outer;
      }
      for (std::size_t k = 0; k < outputs; ++k)
        per_batch[k].push_back(k < static_cast<std::size_t>(states) ? state[k] : stack(scanned[k - states]));
    }
    for (std::size_t k = 0; k < outputs; ++k) {
      if (n.output(static_cast<int>(k)).empty()) continue;
      Node out;
      out.op = "Identity";
      out.inputs = {batched ? stack(per_batch[k]) : per_batch[k][0]};
      const int32_t id = g_.add_value(Value{});
      WEAVE_TRY(define(n.output(static_cast<int>(k)), id, where));
      out.outputs = {id};
      g_.nodes.push_back(std::move(out));
    }
    return {};
  }

  // A new Gather of element i of `v` along axis 0.
  int32_t gather(int32_t v, int64_t i) {
    Node gn;
    gn.op = "Gather";
    gn.attrs.set("axis", int64_t{0});
    gn.inputs = {v,
                 g_.add_param(DType::int64, Shape{}, SharedBytes::copy_of(std::as_bytes(std::span(&i, 1))))};
    const int32_t out = g_.add_value(Value{});
    gn.outputs = {out};
    g_.nodes.push_back(std::move(gn));
    return out;
  }

  // The values stacked on a new axis 0 (Unsqueeze each, in the model's opset form, then Concat).
  int32_t stack(const std::vector<int32_t>& values) {
    Node cat;
    cat.op = "Concat";
    cat.attrs.set("axis", int64_t{0});
    for (int32_t v : values) {
      Node u;
      u.op = "Unsqueeze";
      u.inputs = {v};
      if (opset_ < 13)
        u.attrs.set("axes", std::vector<int64_t>{0});
      else
        u.inputs.push_back(
            g_.add_param(DType::int64, Shape{1}, SharedBytes::copy_of(std::as_bytes(std::span(&kZero, 1)))));
      const int32_t id = g_.add_value(Value{});
      u.outputs = {id};
      g_.nodes.push_back(std::move(u));
      cat.inputs.push_back(id);
    }
    const int32_t out = g_.add_value(Value{});
    cat.outputs = {out};
    g_.nodes.push_back(std::move(cat));
    return out;
  }

  Error unsupported_error() const {
    std::string msg = "unsupported operators: ";
    bool first = true;
    for (const auto& [op, nodes] : unsupported_) {
      if (!first) msg += "; ";
      first = false;
      msg += op + " (node" + (nodes.size() > 1 ? "s " : " ");
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (i == 20) {
          msg += ", ... " + std::to_string(nodes.size() - 20) + " more";
          break;
        }
        msg += (i ? ", " : "") + nodes[i];
      }
      msg += ")";
    }
    return err(msg);
  }

  Status add_output(const onnx::ValueInfoProto& out) {
    auto it = by_name_.find(out.name());
    if (it == by_name_.end()) return err("graph output '" + out.name() + "' is not produced by any node");
    g_.outputs.push_back(it->second);
    declared_outputs_.push_back(&out);
    return {};
  }

  // Fills intermediate dtypes/shapes from ONNX shape inference. Inference is best effort: a
  // model it cannot fully type still imports, with unknown dims left dynamic.
  Status infer_shapes() {
    // Model-local functions are never run here (a node calling one is an unsupported op), but
    // libonnx infers through them without a depth limit and without the checks above: one that
    // calls itself overflowed the stack. They go before inference.
    model_.clear_functions();
    try {
      onnx::ShapeInferenceOptions o(/*check_type=*/false, /*strict=*/0, /*data_prop=*/true);
      onnx::shape_inference::InferShapes(model_, &onnx_import::GuardedSchemaRegistry::instance(), o);
    } catch (const std::exception&) {
      // Keep whatever was inferred before the failure.
    }
    // A node the guard kept from inference breaks a precondition of its op: name it.
    if (Status s = onnx_import::check_inferred_graph(*model_.mutable_graph(), opsets_); !s)
      return s.error().context(label_);
    const auto& gp = model_.graph();
    auto apply = [&](const onnx::ValueInfoProto& vi) {
      auto it = by_name_.find(vi.name());
      if (it == by_name_.end()) return;
      Value& v = g_.values[it->second];
      if (v.kind != ValueKind::intermediate) return;
      auto ti = type_info(vi.type(), vi.name());
      if (!ti) return;  // e.g. rank beyond kMaxRank: checked for real below
      if (ti->dtype != DType::undefined) v.dtype = ti->dtype;
      v.shape = ti->shape;
      v.rank_known = ti->rank_known;
      if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape() &&
          vi.type().tensor_type().shape().dim_size() > kMaxRank)
        too_big_rank_ = vi.name();
    };
    for (const auto& vi : gp.value_info()) apply(vi);
    for (const auto& vi : gp.output()) apply(vi);
    return {};
  }

  Status fill_output_infos() {
    if (!too_big_rank_.empty())
      return err("value '" + too_big_rank_ + "' has a rank above the maximum of " + std::to_string(kMaxRank));
    for (std::size_t i = 0; i < g_.outputs.size(); ++i) {
      const onnx::ValueInfoProto& out = *declared_outputs_[i];
      const Value& v = g_.values[g_.outputs[i]];
      TensorInfo info{out.name(), v.dtype, v.shape, {}};
      // An output declared without a type comes back from a failed inference with an empty
      // TypeProto: that is "no type", not a non-tensor one.
      if (out.has_type() && out.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) {
        auto ti = type_info(out.type(), "output '" + out.name() + "'");
        if (!ti) return ti.error().context(label_);
        if (ti->dtype != DType::undefined) info.dtype = ti->dtype;
        if (ti->rank_known) {
          info.shape = ti->shape;
          info.dim_names = ti->dim_names;
        }
      }
      g_.output_infos.push_back(std::move(info));
    }
    // Values without inferred info stay undefined/unknown-rank: the runtime infers them.
    for (Value& v : g_.values)
      if (v.kind == ValueKind::intermediate && v.dtype == DType::undefined && v.shape.empty())
        v.rank_known = false;
    return {};
  }

  onnx::ModelProto& model_;
  std::string label_;
  const ImportOptions& opt_;
  const KernelRegistry& registry_;
  Graph g_;
  int opset_ = 0;
  onnx_import::OpsetVersions opsets_;
  std::unordered_map<std::string, int32_t> by_name_;
  std::map<std::string, std::vector<std::string>> unsupported_;  // op -> node names
  std::vector<const onnx::ValueInfoProto*> declared_outputs_;
  std::string too_big_rank_;
};

}  // namespace

Expected<Graph> import_onnx_bytes(std::span<const std::byte> bytes, std::string label,
                                  const ImportOptions& opt) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    return make_error(label, ": file of ", bytes.size(), " bytes exceeds the 2 GiB protobuf limit");
  auto model = std::make_unique<onnx::ModelProto>();
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    return make_error(label,
                      ": not a valid ONNX model (protobuf parsing failed: the file is truncated or corrupt)");
  Importer im(*model, std::move(label), opt);
  return im.run();
}

Expected<Graph> import_onnx(const std::string& path, const ImportOptions& opt) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return make_error(path, ": cannot open: ", std::strerror(errno));
  const std::streamoff size = f.tellg();
  if (size < 0) return make_error(path, ": cannot read");
  if (static_cast<uint64_t>(size) > static_cast<uint64_t>(INT_MAX))
    return make_error(path, ": file of ", size, " bytes exceeds the 2 GiB protobuf limit");
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  f.seekg(0);
  if (size > 0 && !f.read(reinterpret_cast<char*>(bytes.data()), size))
    return make_error(path, ": read error");
  return import_onnx_bytes(bytes, path, opt);
}

}  // namespace weave
