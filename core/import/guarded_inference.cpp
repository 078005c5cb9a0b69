#include "core/import/guarded_inference.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "core/import/onnx_tensor.h"
#include "onnx/defs/data_type_utils.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/shape_inference/implementation.h"

// Line numbers below are of ONNX 1.12.0's sources (onnx/defs/...), where each unchecked read is.
namespace weave::onnx_import {

namespace {

using Ctx = onnx::InferenceContext;

// A precondition the node breaks: the model is wrong. The wrapped inference function turns it
// into libonnx's own InferenceError (the node is skipped); check_inferred_graph into an Error
// naming the node.
struct Refusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The node cannot be inferred safely with what is known of it (an input whose type an earlier
// node's failed inference left unknown), though the model may be right: skipped, not reported.
struct Skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class... Args>
[[noreturn]] void refuse(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw Refusal(os.str());
}

// The rank of input i when the context knows it, else -1.
int input_rank(Ctx& ctx, std::size_t i) {
  if (i >= ctx.getNumInputs()) return -1;
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return -1;
  return t->tensor_type().shape().dim_size();
}

// Known dim d of input i, else -1.
int64_t input_dim(Ctx& ctx, std::size_t i, int d) {
  if (input_rank(ctx, i) <= d) return -1;
  const auto& dim = ctx.getInputType(i)->tensor_type().shape().dim(d);
  return dim.has_dim_value() ? dim.dim_value() : -1;
}

int ints_length(Ctx& ctx, const char* name) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a == nullptr ? -1 : a->ints_size();
}

// The values of an int32 or int64 constant input (consistent: check_constant_inputs ran).
std::vector<int64_t> int_values(const onnx::TensorProto& t) {
  std::vector<int64_t> out;
  const std::string& raw = t.raw_data();
  if (t.data_type() == onnx::TensorProto::INT64) {
    out.assign(t.int64_data().begin(), t.int64_data().end());
    for (std::size_t i = 0; i + 8 <= raw.size(); i += 8) {
      int64_t v;
      std::memcpy(&v, raw.data() + i, 8);
      out.push_back(v);
    }
  } else if (t.data_type() == onnx::TensorProto::INT32) {
    out.assign(t.int32_data().begin(), t.int32_data().end());
    for (std::size_t i = 0; i + 4 <= raw.size(); i += 4) {
      int32_t v;
      std::memcpy(&v, raw.data() + i, 4);
      out.push_back(v);
    }
  }
  return out;
}

// Every value of an int or ints attribute must lie in [lo, hi]; an absent attribute passes.
void check_ints_range(Ctx& ctx, const char* name, int64_t lo, int64_t hi) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  if (a == nullptr) return;
  for (const int64_t v : a->ints())
    if (v < lo || v > hi) refuse("attribute ", name, " value ", v, " is outside ", lo, "..", hi);
  if (a->has_i() && (a->i() < lo || a->i() > hi))
    refuse("attribute ", name, " value ", a->i(), " is outside ", lo, "..", hi);
}

// ---- checks every node gets ----

// Inference functions index inputs and outputs up to the schema's counts.
void check_counts(Ctx& ctx, const onnx::OpSchema& schema) {
  const auto inputs = static_cast<int>(ctx.getNumInputs()), outputs = static_cast<int>(ctx.getNumOutputs());
  if (inputs < schema.min_input() || inputs > schema.max_input())
    refuse(inputs, " inputs, the schema takes ", schema.min_input(), "..", schema.max_input());
  if (outputs < schema.min_output() || outputs > schema.max_output())
    refuse(outputs, " outputs, the schema gives ", schema.min_output(), "..", schema.max_output());
}

// A type libonnx can name: every element type in it set (an input declared with elem_type 0,
// or a sequence of nothing, is a type only partly known and is left to the inference function).
bool fully_typed(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      return t.tensor_type().elem_type() != 0;
    case onnx::TypeProto::kSparseTensorType:
      return t.sparse_tensor_type().elem_type() != 0;
    case onnx::TypeProto::kSequenceType:
      return t.sequence_type().has_elem_type() && fully_typed(t.sequence_type().elem_type());
    case onnx::TypeProto::kOptionalType:
      return t.optional_type().has_elem_type() && fully_typed(t.optional_type().elem_type());
    case onnx::TypeProto::kMapType:
      return t.map_type().key_type() != 0 && t.map_type().has_value_type() &&
             fully_typed(t.map_type().value_type());
    default:
      return false;
  }
}

// Each typed input is of a type its formal parameter allows, and inputs bound to one type
// parameter (T of Add's A and B) have one type: inference functions pick branches by element
// type and read inputs as the kind their formal says (tensor, sequence, map).
void check_input_types(Ctx& ctx, const onnx::OpSchema& schema) {
  const auto& formal = schema.inputs();
  if (formal.empty()) return;
  std::map<std::string, onnx::DataType> bound;  // type parameter -> the first input's type
  for (std::size_t i = 0; i < ctx.getNumInputs(); ++i) {
    const onnx::TypeProto* t = ctx.getInputType(i);
    if (t == nullptr || !fully_typed(*t)) continue;
    const auto& param = formal[std::min(i, formal.size() - 1)];
    if (i >= formal.size() && param.GetOption() != onnx::OpSchema::Variadic)
      refuse("input ", i, " is past the schema's inputs");
    onnx::DataType type = nullptr;
    try {
      type = onnx::Utils::DataTypeUtils::ToType(*t);
    } catch (const std::exception&) {
      refuse("input ", i, " has a type libonnx cannot name");
    }
    const auto& allowed = param.GetTypes();
    if (!allowed.empty() && allowed.count(type) == 0)
      refuse("input ", i, " ('", param.GetName(), "') is ", *type, ", which ", schema.Name(),
             " does not take for ", param.GetTypeStr());
    if (!param.GetIsHomogeneous()) continue;
    const auto [it, first] = bound.emplace(param.GetTypeStr(), type);
    if (!first && it->second != type)
      refuse("input ", i, " ('", param.GetName(), "') is ", *type, ", but an earlier input of type ",
             param.GetTypeStr(), " is ", *it->second);
  }
}

// Known dims of every input must be non-negative and their product must fit comfortably in
// int64: libonnx multiplies and divides them unchecked (Reshape's -1, Split, the pools), and an
// overflowed product can reach INT64_MIN / -1, which traps. No real tensor comes near 2^48.
void check_input_dims(Ctx& ctx) {
  constexpr int64_t kMaxElements = int64_t{1} << 48;
  for (std::size_t i = 0; i < ctx.getNumInputs(); ++i) {
    if (input_rank(ctx, i) < 0) continue;
    int64_t product = 1;
    for (const auto& d : ctx.getInputType(i)->tensor_type().shape().dim()) {
      if (!d.has_dim_value()) continue;
      const int64_t v = d.dim_value();
      // Some converters write -1 for a dynamic dim; the importer reads it so, libonnx would not.
      if (v < 0) throw Skip("a negative dim");
      if (v != 0 && product > kMaxElements / v) refuse("input ", i, " has more than 2^48 elements");
      product *= v;
    }
  }
}

// ParseData (tensor_proto_util.cc:107) copies raw_data whole into a vector sized by whole
// elements, and the typed path checks the count only for tensors of rank >= 1: a constant input
// whose bytes or values do not match its dims overflowed a heap buffer, and TopK and Range read
// element 0 of an empty one (math/defs.cc:1294, generator/defs.cc:575). Every constant input
// is checked as the importer checks initializers, whatever graph it is in.
void check_constant_inputs(Ctx& ctx) {
  for (std::size_t i = 0; i < ctx.getNumInputs(); ++i)
    if (const onnx::TensorProto* t = ctx.getInputData(i))
      if (auto layout = check_tensor(*t, "constant input " + std::to_string(i)); !layout)
        refuse(layout.message());
}

// ---- checks of one op (or a family), each against the unchecked reads of its inference ----

// Conv, ConvTranspose, ConvInteger, QLinearConv and the pools: libonnx indexes dims and
// attributes by the spatial rank of input 0 without checking them against each other
// (convPoolShapeInference, nn/defs.cc:36), reads the kernel from the weight's dims 2.. by that
// rank (:90), divides by the strides (:180), and with an auto_pad other than VALID walks each
// spatial dim one stride at a time (:123).
void check_window_op(Ctx& ctx, const onnx::OpSchema& schema) {
  const std::string& op = schema.Name();
  const int rank = input_rank(ctx, 0);
  if (rank < 0) return;  // libonnx returns early without a shape
  if (rank < 3) refuse("input rank ", rank, " is below 3");
  const int spatial = rank - 2;
  // An empty list is the default (libonnx checks its length itself and fails cleanly).
  for (const char* name : {"kernel_shape", "strides", "dilations", "output_padding", "output_shape"}) {
    const int n = ints_length(ctx, name);
    if (n > 0 && n != spatial && !(std::string(name) == "output_shape" && n == rank))
      refuse("attribute ", name, " has ", n, " values for ", spatial, " spatial dims");
  }
  const int pads = ints_length(ctx, "pads");
  if (pads > 0 && pads != 2 * spatial)
    refuse("attribute pads has ", pads, " values for ", spatial, " spatial dims");
  constexpr int64_t kMaxWindow = int64_t{1} << 31;
  check_ints_range(ctx, "strides", 1, kMaxWindow);
  check_ints_range(ctx, "dilations", 1, kMaxWindow);
  check_ints_range(ctx, "kernel_shape", 1, kMaxWindow);
  check_ints_range(ctx, "pads", 0, kMaxWindow);
  const std::size_t weight = op == "QLinearConv" ? 3 : 1;
  const int w = input_rank(ctx, weight);
  if ((op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" || op == "QLinearConv") && w >= 0 &&
      w != rank)
    refuse("the weight (input ", weight, ") has rank ", w, ", the data rank ", rank);
  if (const onnx::AttributeProto* g = ctx.getAttribute("group"); g != nullptr && g->i() <= 0)
    refuse("group ", g->i(), " is not positive");
  // The stride walk is dim / stride steps: at most 2^24 (a few ms), no image is wider.
  constexpr int64_t kMaxSteps = int64_t{1} << 24;
  const onnx::AttributeProto* strides = ctx.getAttribute("strides");
  for (int i = 0; i < spatial; ++i) {
    const int64_t stride = strides != nullptr && i < strides->ints_size() ? strides->ints(i) : 1;
    if (const int64_t d = input_dim(ctx, 0, 2 + i); stride > 1 && d / stride > kMaxSteps)
      refuse("spatial dim ", i, " of ", d, " is more than 2^24 strides of ", stride);
  }
  // MaxUnpool without output_shape copies dim 1 of its indices (input 1) unchecked (nn/defs.cc:428).
  if (op == "MaxUnpool" && ctx.getNumInputs() == 2) {
    const int indices = input_rank(ctx, 1);
    if (indices < 0) throw Skip("the indices' rank is unknown");
    if (indices < 2) refuse("the indices (input 1) have rank ", indices, ", below 2");
  }
}

// Input i of rank exactly `want` when its rank is known.
void need_rank(Ctx& ctx, std::size_t i, int want) {
  if (const int rank = input_rank(ctx, i); rank >= 0 && rank != want)
    refuse("input ", i, " has rank ", rank, ", not ", want);
}

// The recurrent ops' older inference (RNNShapeInference1, rnn/old.cc:217) reads dims 0..2 of
// X, W and R unchecked.
void check_recurrent(Ctx& ctx, const onnx::OpSchema& /*schema*/) {
  for (std::size_t i = 0; i < 3 && i < ctx.getNumInputs(); ++i) need_rank(ctx, i, 3);
}

// STFT reads dims 0..2 of the signal (batch, length, 1 or 2) unchecked (math/defs.cc:3219).
void check_stft(Ctx& ctx, const onnx::OpSchema& /*schema*/) {
  need_rank(ctx, 0, 3);
}

// Gemm-6 indexes dims 0 and 1 of A and B without checking their rank (math/old.cc:2323).
void check_gemm(Ctx& ctx, const onnx::OpSchema& /*schema*/) {
  need_rank(ctx, 0, 2);
  need_rank(ctx, 1, 2);
}

// LayerNormalization-17 writes dims axis..rank-1 of its Mean and InvStdDev outputs with the
// axis made positive but not checked (nn/defs.cc:2294; a scalar input gave mutable_dim(-1)).
void check_layer_norm(Ctx& ctx, const onnx::OpSchema& /*schema*/) {
  const int rank = input_rank(ctx, 0);
  if (rank < 0) return;
  const onnx::AttributeProto* a = ctx.getAttribute("axis");
  const int64_t axis = a == nullptr ? -1 : a->i();
  if (rank == 0 || axis < -rank || axis >= rank) refuse("axis ", axis, " is outside the input's rank ", rank);
}

// DepthToSpace divides the channels by blocksize * blocksize, which wraps to 0 at 2^32
// (tensor/defs.cc:2022).
void check_blocksize(Ctx& ctx, const onnx::OpSchema& /*schema*/) {
  check_ints_range(ctx, "blocksize", 1, 1 << 16);
}

// SplitToSequence takes the remainder of the axis length by a constant scalar split
// (sequence/defs.cc:369).
void check_split_to_sequence(Ctx& ctx, const onnx::OpSchema& /*schema*/) {
  if (ctx.getNumInputs() < 2) return;
  if (const onnx::TensorProto* split = ctx.getInputData(1))
    for (const int64_t v : int_values(*split))
      if (v <= 0) refuse("split size ", v, " is not positive");
}

// MaxRoiPool writes pooled_shape[0] and [1] into its output, having checked only that the list
// has rank(X) - 2 values (nn/defs.cc:638).
void check_max_roi_pool(Ctx& ctx, const onnx::OpSchema& /*schema*/) {
  if (input_rank(ctx, 0) < 0 || input_rank(ctx, 1) < 0) return;
  if (const onnx::AttributeProto* a = ctx.getAttribute("pooled_shape"); a != nullptr && a->ints_size() < 2)
    refuse("attribute pooled_shape has ", a->ints_size(), " values, not 2");
}

// ConstantOfShape and Expand make an output of one dim per value of their shape input; of a
// shape input known only by its shape, getShapeInput adds dim(0) dims one at a time
// (shape_inference.cc:459; 2^40 ran out of memory). No real model has a rank near the bound.
void check_shape_input(Ctx& ctx, const onnx::OpSchema& schema) {
  const std::string& op = schema.Name();
  const std::size_t i = op == "Expand" ? 1 : 0;
  constexpr int64_t kMaxShapeLength = 1024;
  if (input_rank(ctx, i) == 1)
    if (const int64_t n = input_dim(ctx, i, 0); n > kMaxShapeLength)
      refuse("the shape input has ", n, " values (output rank), above ", kMaxShapeLength);
}

// GatherND-12/13 check only batch_dims + dim(-1) of the indices <= rank(data), then read data
// dims from there on (tensor/defs.cc:3200): a negative or huge batch_dims read before them.
void check_gather_nd(Ctx& ctx, const onnx::OpSchema& /*schema*/) {
  const onnx::AttributeProto* a = ctx.getAttribute("batch_dims");
  if (a == nullptr) return;
  const int data = input_rank(ctx, 0), indices = input_rank(ctx, 1);
  const int64_t limit = data >= 0 && indices >= 0 ? std::min(data, indices) : int64_t{1} << 16;
  if (a->i() < 0 || a->i() >= std::max<int64_t>(limit, 1))
    refuse("batch_dims ", a->i(), " is outside 0..", std::max<int64_t>(limit, 1) - 1);
}

// Einsum-12 counts the letters of an equation without "->" in a 26-entry array indexed by
// c - 'a' (math/defs.cc:2442): any other character wrote outside it. The operator's letters are
// a-z and A-Z; a capital in that form is valid but not inferred.
void check_einsum(Ctx& ctx, const onnx::OpSchema& /*schema*/) {
  const onnx::AttributeProto* a = ctx.getAttribute("equation");
  if (a == nullptr || a->s().find("->") != std::string::npos) return;
  for (const char c : a->s()) {
    if ((c >= 'a' && c <= 'z') || c == ',' || c == '.' || c == ' ') continue;
    if (c >= 'A' && c <= 'Z') throw Skip("a capital letter in an equation without an output");
    refuse("the equation '", a->s(), "' holds a character that is not a letter, ',' or '.'");
  }
}

// Scan reads num_scan_inputs without checking it is there, and sizes vectors by it and by the
// inputs left (controlflow/defs.cc:29-58): missing or beyond the inputs, a null read or an
// allocation of 2^63 values. Scan-8's first input is the sequence lengths.
void check_scan(Ctx& ctx, const onnx::OpSchema& schema) {
  const onnx::AttributeProto* a = ctx.getAttribute("num_scan_inputs");
  if (a == nullptr) refuse("attribute num_scan_inputs is missing");
  const bool batched = schema.SinceVersion() < 9;
  const auto inputs = static_cast<int64_t>(ctx.getNumInputs()) - (batched ? 1 : 0);
  if (a->i() < 1 || a->i() > inputs) refuse("num_scan_inputs ", a->i(), " is outside 1..", inputs);
}

// EyeLike (with dtype), CategoryMapper, DictVectorizer and LabelEncoder dereference input 0's
// type without checking it exists (generator/defs.cc:304, traditionalml/defs.cc:144,198,327):
// an input whose producer's inference failed has none.
void need_typed_input0(Ctx& ctx, const onnx::OpSchema& /*schema*/) {
  if (ctx.getNumInputs() > 0 && ctx.getInputType(0) == nullptr) throw Skip("input 0 has no type");
}

using OpCheck = void (*)(Ctx&, const onnx::OpSchema&);

const std::unordered_map<std::string, std::vector<OpCheck>>& op_checks() {
  static const std::unordered_map<std::string, std::vector<OpCheck>> kChecks = {
      {"Conv", {check_window_op}},
      {"ConvTranspose", {check_window_op}},
      {"ConvInteger", {check_window_op}},
      {"QLinearConv", {check_window_op}},
      {"AveragePool", {check_window_op}},
      {"MaxPool", {check_window_op}},
      {"LpPool", {check_window_op}},
      {"MaxUnpool", {check_window_op}},
      {"RNN", {check_recurrent}},
      {"GRU", {check_recurrent}},
      {"LSTM", {check_recurrent}},
      {"STFT", {check_stft}},
      {"Gemm", {check_gemm}},
      {"LayerNormalization", {check_layer_norm}},
      {"DepthToSpace", {check_blocksize}},
      {"SpaceToDepth", {check_blocksize}},
      {"SplitToSequence", {check_split_to_sequence}},
      {"MaxRoiPool", {check_max_roi_pool}},
      {"ConstantOfShape", {check_shape_input}},
      {"Expand", {check_shape_input}},
      {"GatherND", {check_gather_nd}},
      {"Einsum", {check_einsum}},
      {"Scan", {check_scan}},
      {"EyeLike", {need_typed_input0}},
      {"CategoryMapper", {need_typed_input0}},
      {"DictVectorizer", {need_typed_input0}},
      {"LabelEncoder", {need_typed_input0}},
  };
  return kChecks;
}

// Every check for a node of `schema` (throws Refusal or Skip).
void check_node(Ctx& ctx, const onnx::OpSchema& schema) {
  const std::string& op = schema.Name();
  check_counts(ctx, schema);
  check_input_types(ctx, schema);
  check_input_dims(ctx);
  check_constant_inputs(ctx);
  const auto& checks = op_checks();
  if (const auto it = checks.find(op); it != checks.end())
    for (const OpCheck check : it->second) check(ctx, schema);
}

// The data propagation functions of Add/Sub/Mul-14 read dim 0 of one input's data when the
// other's has one value, also when the first has none (math/defs.cc:38); Slice-13's adds its
// int64 step to an int index, which wraps past 2^31 (tensor/defs.cc:1020). Such data is left
// unpropagated.
bool propagation_safe(onnx::DataPropagationContext& ctx, const std::string& op) {
  for (std::size_t i = 0; i < ctx.getNumInputs(); ++i)
    if (ctx.getInputType(i) == nullptr) return false;  // Shape-15 read it unchecked
  if (op == "Add" || op == "Sub" || op == "Mul") {
    const onnx::TensorShapeProto* a = ctx.getNumInputs() > 0 ? ctx.getInputData(0) : nullptr;
    const onnx::TensorShapeProto* b = ctx.getNumInputs() > 1 ? ctx.getInputData(1) : nullptr;
    if (a != nullptr && b != nullptr && (a->dim_size() == 0 || b->dim_size() == 0) &&
        a->dim_size() != b->dim_size())
      return false;
  }
  if (op == "Slice" && ctx.getNumInputs() > 4)
    if (const onnx::TensorShapeProto* steps = ctx.getInputData(4))
      for (const auto& d : steps->dim())
        if (d.has_dim_value() && (d.dim_value() > (1 << 30) || d.dim_value() < -(1 << 30))) return false;
  return true;
}

}  // namespace

GuardedSchemaRegistry& GuardedSchemaRegistry::instance() {
  static GuardedSchemaRegistry* r = new GuardedSchemaRegistry();  // never destroyed, like libonnx's
  return *r;
}

const onnx::OpSchema* GuardedSchemaRegistry::GetSchema(const std::string& key,
                                                       const int max_inclusive_version,
                                                       const std::string& domain) const {
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Instance()->GetSchema(key, max_inclusive_version, domain);
  if (schema == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = wrapped_[{key, schema->SinceVersion(), domain}];
  if (!slot) {
    slot = std::make_unique<onnx::OpSchema>(*schema);
    // Only functions the schema has are wrapped: an op without one stays without (libonnx then
    // expands its function body, whose nodes come back here, or skips it).
    if (onnx::InferenceFunction inner = schema->GetTypeAndShapeInferenceFunction()) {
      slot->TypeAndShapeInferenceFunction([inner, schema](onnx::InferenceContext& ctx) {
        try {
          check_node(ctx, *schema);
        } catch (const std::runtime_error& e) {  // Refusal or Skip: the node is not inferred
          fail_shape_inference(schema->Name(), ": ", e.what());
        }
        inner(ctx);
      });
    }
    if (onnx::DataPropagationFunction propagate = schema->GetDataPropagationFunction()) {
      slot->PartialDataPropagationFunction([propagate, op = key](onnx::DataPropagationContext& ctx) {
        if (propagation_safe(ctx, op)) propagate(ctx);
      });
    }
  }
  return slot.get();
}

namespace {

// The names a graph's nodes can read, with the types inference left on them; a subgraph sees
// its outer scope's too. Initializers are typed as libonnx types them (a graph input of the
// same name takes precedence).
struct Scope {
  std::unordered_map<std::string, onnx::TypeProto*> types;
  std::unordered_map<std::string, const onnx::TensorProto*> data;
  std::deque<onnx::TypeProto> owned;  // initializer types (stable addresses)
};

Status check_graph(onnx::GraphProto& graph, const OpsetVersions& opsets, const Scope* outer,
                   const std::string& prefix) {
  Scope scope;
  if (outer != nullptr) {
    scope.types = outer->types;
    scope.data = outer->data;
  }
  for (const onnx::TensorProto& t : graph.initializer()) {
    onnx::TypeProto& type = scope.owned.emplace_back();
    type.mutable_tensor_type()->set_elem_type(t.data_type());
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    for (const int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
    scope.types[t.name()] = &type;
    scope.data[t.name()] = &t;
  }
  for (auto* list : {graph.mutable_input(), graph.mutable_value_info(), graph.mutable_output()})
    for (onnx::ValueInfoProto& vi : *list)
      if (vi.has_type()) scope.types[vi.name()] = vi.mutable_type();
  const std::unordered_map<std::string, const onnx::SparseTensorProto*> no_sparse;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    const std::string where = prefix + node_where(i, node);
    if (const onnx::OpSchema* schema = schema_for(node, opsets)) {
      onnx::shape_inference::InferenceContextImpl ctx(node, scope.types, scope.data, no_sparse);
      try {
        check_node(ctx, *schema);
      } catch (const Refusal& r) {
        return make_error(where, ": ", r.what());
      } catch (const Skip&) {
        // not inferred, not wrong
      }
    }
    if (node.op_type() == "Constant" && node.output_size() == 1)
      for (const auto& a : node.attribute())
        if (a.name() == "value" && a.has_t()) scope.data[node.output(0)] = &a.t();
    for (onnx::AttributeProto& a : *node.mutable_attribute()) {
      if (a.has_g()) WEAVE_TRY(check_graph(*a.mutable_g(), opsets, &scope, where + " " + a.name() + ": "));
      for (onnx::GraphProto& g : *a.mutable_graphs())
        WEAVE_TRY(check_graph(g, opsets, &scope, where + " " + a.name() + ": "));
    }
  }
  return {};
}

}  // namespace

Status check_inferred_graph(onnx::GraphProto& graph, const OpsetVersions& opsets) {
  return check_graph(graph, opsets, nullptr, "");
}

}  // namespace weave::onnx_import
