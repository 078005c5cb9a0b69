// Inference sweep: every op schema libonnx registers (every domain, every version) imported as a
// one-node model in many deterministic variants, through import_onnx_bytes (protobuf parse,
// shape inference with the guarded registry and data propagation, canonicalisation, lowering,
// validation). libonnx 1.12's inference functions index dims and attributes unchecked, so each
// variant that crashes is a guard missing from core/import/guarded_inference.cpp; the fuzzer
// found them one at a time, the sweep enumerates the shapes they need:
//   - input and output counts from the schema's minimum up to a few more;
//   - inputs of rank 0..5 (dims 2/3, a zero dim, a symbolic dim, an unknown dim), one input
//     without type or without shape, every input of one kind or one input changed at a time
//     (the others of rank 2 or 4);
//   - every INT/INTS/FLOAT/FLOATS/STRING attribute set alone to hostile values (0, -1, -2, 1,
//     2, 2^31, 2^32, INT64_MAX, INT64_MIN; lists of length 0, 1, rank-1, rank, rank+1, 2*rank)
//     or given with the wrong kind, with inputs of ranks 0..4;
//   - constant inputs (initializers) of hostile values and lengths for every input that can be
//     an integer or a float, and integer inputs computed by Shape of a symbolic input (data
//     propagation);
// one axis changed at a time from a baseline. Every import must succeed or return an error; a
// crash kills the test, which is the point.
//
// WEAVE_SWEEP_STRIDE=n runs every n-th variant only (a schema's first one at its own offset, so
// that every kind of variant is reached in some schema): the sanitizer job's share, where each
// import costs ten times its release time; the release build runs them all. The crash-finding
// mode below runs every variant.
//
// WEAVE_SWEEP_CRASH_DIR=dir runs each schema in a child process instead and goes on after a
// crash: the crashing models are written to dir (at most three per schema) with a list of what
// each variant was, for finding all the missing guards in one run.
#define BOOST_TEST_MODULE inference_sweep
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/import/guarded_inference.h"
#include "core/import/onnx_import.h"
#include "onnx/defs/attr_proto_util.h"
#include "onnx/defs/data_type_utils.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

// After libonnx: <sys/mman.h> defines MAP_TYPE, an enumerator in onnx/defs/parser.h.
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace weave;

namespace {

constexpr int64_t kIntValues[] = {0,
                                  -1,
                                  -2,
                                  1,
                                  2,
                                  int64_t{1} << 31,
                                  int64_t{1} << 32,
                                  std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()};
constexpr float kFloatValues[] = {0.0f,
                                  -1.0f,
                                  2.0f,
                                  1e30f,
                                  std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::infinity()};
const char* const kStringValues[] = {"", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "bogus"};

// A dim: value >= 0, or symbolic (param), or unknown (neither).
struct Dim {
  int64_t value = -1;
  const char* param = nullptr;
};

enum class InputKind { typed, no_type, no_shape, int_data, float_data, from_shape, absent };

struct InputSpec {
  InputKind kind = InputKind::typed;
  std::vector<Dim> dims;      // typed: the shape; from_shape: the shape Shape reads
  std::vector<int64_t> ints;  // int_data
  std::vector<float> floats;  // float_data
  bool scalar = false;        // int_data/float_data: rank 0 (one value)
  bool int32 = false;         // int_data: as int32 (values truncated) in raw_data
};

struct NodeSpec {
  std::vector<InputSpec> inputs;
  int outputs = 1;
  int empty_output = -1;  // this output's name left empty (an optional output not wanted)
  std::vector<onnx::AttributeProto> attrs;
};

std::vector<Dim> dims_of_rank(int rank) {
  std::vector<Dim> d;
  for (int i = 0; i < rank; ++i) d.push_back(Dim{i % 2 ? 3 : 2, nullptr});
  return d;
}

// The type the sweep gives formal input i: float or int64 when allowed, else the first tensor
// type, else the first type at all (sequences, maps, optionals).
const onnx::TypeProto& input_type(const onnx::OpSchema& s, std::size_t i) {
  static const onnx::TypeProto kFloat = [] {
    onnx::TypeProto t;
    t.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    return t;
  }();
  if (s.inputs().empty()) return kFloat;
  const std::string& type_str = s.inputs()[std::min(i, s.inputs().size() - 1)].GetTypeStr();
  std::vector<std::string> allowed = {type_str};
  for (const auto& c : s.typeConstraintParams())
    if (c.type_param_str == type_str) allowed = c.allowed_type_strs;
  std::string pick;
  for (const char* want : {"tensor(float)", "tensor(int64)"})
    for (const auto& a : allowed)
      if (pick.empty() && a == want) pick = a;
  for (const auto& a : allowed)
    if (pick.empty() && a.rfind("tensor(", 0) == 0 && a != "tensor(string)") pick = a;
  if (pick.empty() && !allowed.empty()) pick = allowed[0];
  if (pick.empty()) return kFloat;
  try {
    return onnx::Utils::DataTypeUtils::ToTypeProto(onnx::Utils::DataTypeUtils::ToType(pick));
  } catch (const std::exception&) {
    return kFloat;
  }
}

bool allows(const onnx::OpSchema& s, std::size_t i, const std::string& type) {
  if (s.inputs().empty()) return false;
  const std::string& type_str = s.inputs()[std::min(i, s.inputs().size() - 1)].GetTypeStr();
  if (type_str == type) return true;
  for (const auto& c : s.typeConstraintParams())
    if (c.type_param_str == type_str)
      for (const auto& a : c.allowed_type_strs)
        if (a == type) return true;
  return false;
}

// The tensor type inside sequence/optional types, where the shape goes.
onnx::TypeProto_Tensor* inner_tensor(onnx::TypeProto& t) {
  if (t.has_tensor_type()) return t.mutable_tensor_type();
  if (t.has_sequence_type()) return inner_tensor(*t.mutable_sequence_type()->mutable_elem_type());
  if (t.has_optional_type()) return inner_tensor(*t.mutable_optional_type()->mutable_elem_type());
  return nullptr;
}

void set_shape(onnx::TypeProto_Tensor& t, const std::vector<Dim>& dims) {
  auto* shape = t.mutable_shape();
  for (const Dim& d : dims) {
    auto* pd = shape->add_dim();
    if (d.value >= 0) pd->set_dim_value(d.value);
    if (d.param) pd->set_dim_param(d.param);
  }
}

onnx::ModelProto make_model(const onnx::OpSchema& s, const NodeSpec& spec, bool& tensor_inputs_only) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  const bool default_domain = s.domain().empty() || s.domain() == "ai.onnx";
  auto* op = m.add_opset_import();
  op->set_domain(s.domain());
  op->set_version(s.SinceVersion());
  if (!default_domain) {
    op = m.add_opset_import();
    op->set_domain("");
    op->set_version(17);
  }
  auto* g = m.mutable_graph();
  g->set_name("sweep");
  auto* n = g->add_node();
  n->set_op_type(s.Name());
  n->set_domain(s.domain());
  n->set_name("n");
  tensor_inputs_only = true;
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    const InputSpec& in = spec.inputs[i];
    const std::string name = "x" + std::to_string(i);
    if (in.kind == InputKind::absent) {
      n->add_input("");
      continue;
    }
    n->add_input(name);
    if (in.kind == InputKind::int_data || in.kind == InputKind::float_data) {
      auto* t = g->add_initializer();
      t->set_name(name);
      const bool ints = in.kind == InputKind::int_data;
      t->set_data_type(ints ? (in.int32 ? onnx::TensorProto::INT32 : onnx::TensorProto::INT64)
                            : onnx::TensorProto::FLOAT);
      const std::size_t count = ints ? in.ints.size() : in.floats.size();
      if (!in.scalar) t->add_dims(static_cast<int64_t>(count));
      for (const int64_t v : in.ints) {
        if (!in.int32) {
          t->add_int64_data(v);
          continue;
        }
        const auto v32 = static_cast<int32_t>(v);
        t->mutable_raw_data()->append(reinterpret_cast<const char*>(&v32), sizeof v32);
      }
      for (const float v : in.floats) t->add_float_data(v);
      continue;
    }
    if (in.kind == InputKind::from_shape) {
      auto* sh = g->add_node();
      sh->set_op_type("Shape");
      sh->add_input("s" + std::to_string(i));
      sh->add_output(name);
      auto* gi = g->add_input();
      gi->set_name("s" + std::to_string(i));
      gi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
      set_shape(*gi->mutable_type()->mutable_tensor_type(), in.dims);
      // Shape must come before its consumer.
      g->mutable_node()->SwapElements(0, g->node_size() - 1);
      n = g->mutable_node(g->node_size() - 1);
      continue;
    }
    auto* gi = g->add_input();
    gi->set_name(name);
    if (in.kind == InputKind::no_type) continue;
    onnx::TypeProto t = input_type(s, i);
    if (!t.has_tensor_type()) tensor_inputs_only = false;
    if (in.kind == InputKind::typed)
      if (auto* tt = inner_tensor(t)) set_shape(*tt, in.dims);
    *gi->mutable_type() = t;
  }
  for (int o = 0; o < spec.outputs; ++o) {
    if (o == spec.empty_output) {
      n->add_output("");
      continue;
    }
    const std::string name = "y" + std::to_string(o);
    n->add_output(name);
    g->add_output()->set_name(name);
  }
  for (const auto& a : spec.attrs) *n->add_attribute() = a;
  return m;
}

// Required attributes get a harmless value so that the other variants reach inference.
std::vector<onnx::AttributeProto> required_attrs(const onnx::OpSchema& s, const std::string& except) {
  std::vector<onnx::AttributeProto> out;
  for (const auto& [name, a] : s.attributes()) {
    if (!a.required || name == except) continue;
    using A = onnx::AttributeProto;
    if (a.type == A::INT) out.push_back(onnx::MakeAttribute(name, int64_t{1}));
    if (a.type == A::INTS) out.push_back(onnx::MakeAttribute(name, std::vector<int64_t>{1}));
    if (a.type == A::FLOAT) out.push_back(onnx::MakeAttribute(name, 1.0f));
    if (a.type == A::FLOATS) out.push_back(onnx::MakeAttribute(name, std::vector<float>{1.0f}));
    if (a.type == A::STRING) out.push_back(onnx::MakeAttribute(name, std::string("x")));
    if (a.type == A::STRINGS) out.push_back(onnx::MakeAttribute(name, std::vector<std::string>{"x"}));
    // Graphs and tensors are left out.
  }
  return out;
}

std::vector<int> list_lengths(int rank) {
  std::set<int> l = {0, 1, rank, rank + 1, 2 * rank};
  if (rank > 0) l.insert(rank - 1);
  return {l.begin(), l.end()};
}

// Enumerates the variants of one schema, calling `run` with each model and what it is.
class Sweeper {
 public:
  using Run = std::function<void(const onnx::ModelProto&, bool tensor_inputs_only, const std::string& what)>;
  Sweeper(const onnx::OpSchema& s, Run run, long stride = 1, long offset = 0)
      : s_(s), run_(std::move(run)), stride_(stride), next_(offset % stride) {}

  void sweep() {
    const int min_in = s_.min_input(), max_in = s_.max_input();
    const int full_in = static_cast<int>(std::min<int64_t>(max_in, int64_t{min_in} + 3));
    const int min_out = std::max(1, s_.min_output()), max_out = s_.max_output();
    const int full_out = static_cast<int>(std::min<int64_t>(max_out, int64_t{min_out} + 2));
    // Counts, every input typed at one rank.
    for (int in = min_in; in <= full_in; ++in)
      for (int out = min_out; out <= full_out; ++out)
        for (int rank : {0, 2, 4}) {
          NodeSpec n = base(in, out, rank);
          emit(n, "inputs " + std::to_string(in) + " outputs " + std::to_string(out) + " rank " +
                      std::to_string(rank));
          if (out > min_out) {
            n.empty_output = out - 1 == 0 ? -1 : 1;
            emit(n, "inputs " + std::to_string(in) + " outputs " + std::to_string(out) +
                        " (output 1 unnamed) rank " + std::to_string(rank));
          }
        }
    for (int in : std::set<int>{min_in, full_in}) shapes(in, full_out);
    for (int rank : {0, 1, 2, 3, 4, 5}) attributes(min_in, full_out, rank);
    for (int i = 0; i < full_in; ++i) data_inputs(i, full_in, full_out);
  }

  [[nodiscard]] long count() const { return count_; }

 private:
  NodeSpec base(int inputs, int outputs, int rank) const {
    NodeSpec n;
    n.outputs = outputs;
    for (int i = 0; i < inputs; ++i)
      n.inputs.push_back(InputSpec{InputKind::typed, dims_of_rank(rank), {}, {}});
    n.attrs = required_attrs(s_, "");
    return n;
  }

  void emit(const NodeSpec& n, const std::string& what) {
    if (count_++ != next_) return;
    next_ += stride_;
    bool tensor_only = true;
    const onnx::ModelProto m = make_model(s_, n, tensor_only);
    run_(m, tensor_only, what);
  }

  // Shapes of rank 0..5 with a zero, symbolic or unknown dim, on all inputs or one at a time.
  void shapes(int inputs, int outputs) {
    for (int rank = 0; rank <= 5; ++rank)
      for (int kind = 0; kind < 5; ++kind) {
        if (rank == 0 && kind > 0) continue;
        std::vector<Dim> dims = dims_of_rank(rank);
        const char* names[] = {"", " zero dim", " symbolic dim", " unknown dim", " huge dim"};
        if (kind == 1) dims[0] = Dim{0, nullptr};
        if (kind == 2) dims[0] = Dim{-1, "n"};
        if (kind == 3) dims[rank - 1] = Dim{};
        if (kind == 4) dims[0] = Dim{int64_t{1} << 40, nullptr};
        NodeSpec n = base(inputs, outputs, 0);
        for (auto& in : n.inputs) in.dims = dims;
        emit(n, "all inputs rank " + std::to_string(rank) + names[kind]);
        // One input changed against the others at a matrix's rank and at an image's (a
        // ConvInteger weight of rank 1 under a rank-4 input read past its dims).
        for (int i = 0; i < inputs && inputs > 1; ++i)
          for (int others : {2, 4}) {
            NodeSpec one = base(inputs, outputs, others);
            one.inputs[static_cast<std::size_t>(i)].dims = dims;
            emit(one, "input " + std::to_string(i) + " rank " + std::to_string(rank) + names[kind] +
                          ", others rank " + std::to_string(others));
          }
      }
    for (int i = 0; i < inputs; ++i)
      for (InputKind k : {InputKind::no_type, InputKind::no_shape, InputKind::absent}) {
        if (k == InputKind::absent && i < s_.min_input()) continue;
        for (int rank : {0, 2, 4}) {
          NodeSpec n = base(inputs, outputs, rank);
          n.inputs[static_cast<std::size_t>(i)].kind = k;
          emit(n, "input " + std::to_string(i) +
                      (k == InputKind::no_type    ? " untyped"
                       : k == InputKind::no_shape ? " without shape"
                                                  : " absent") +
                      ", others rank " + std::to_string(rank));
        }
      }
  }

  // The other list attributes at values a window op takes (pads: 2 per spatial dim of zeros,
  // the rest: 1 per spatial dim of ones), so that a pool missing kernel_shape does not stop
  // before the varied attribute is read.
  std::vector<onnx::AttributeProto> companions(int rank, const std::string& except) const {
    std::vector<onnx::AttributeProto> out;
    const int spatial = std::max(rank - 2, 1);
    for (const auto& [name, attr] : s_.attributes()) {
      if (name == except || attr.type != onnx::AttributeProto::INTS) continue;
      onnx::AttributeProto p;
      p.set_name(name);
      p.set_type(onnx::AttributeProto::INTS);
      const bool pads = name.find("pad") != std::string::npos;
      for (int k = 0; k < (pads ? 2 * spatial : spatial); ++k) p.add_ints(pads ? 0 : 1);
      out.push_back(std::move(p));
    }
    return out;
  }

  void with_attr(int inputs, int outputs, int rank, const onnx::AttributeProto& a, const std::string& what) {
    NodeSpec n = base(inputs, outputs, rank);
    n.attrs = required_attrs(s_, a.name());
    n.attrs.push_back(a);
    emit(n, "rank " + std::to_string(rank) + " " + what);
    const std::size_t plain = n.attrs.size();
    if (rank >= 3) {
      std::vector<onnx::AttributeProto> more = companions(rank, a.name());
      if (!more.empty()) {
        n.attrs.insert(n.attrs.end(), more.begin(), more.end());
        emit(n, "rank " + std::to_string(rank) + " " + what + " with the other lists set");
      }
    }
    // Padding modes change which branch of the window ops' inference runs.
    if (s_.attributes().count("auto_pad") && a.name() != "auto_pad")
      for (const char* pad : {"SAME_UPPER", "VALID"}) {
        onnx::AttributeProto p;
        p.set_name("auto_pad");
        p.set_type(onnx::AttributeProto::STRING);
        p.set_s(pad);
        n.attrs.push_back(p);
        emit(n, "rank " + std::to_string(rank) + " " + what + " auto_pad " + pad);
        n.attrs.pop_back();
      }
    n.attrs.resize(plain);
  }

  // The attribute at each value in turn.
  template <class T, std::size_t N, class Set>
  void scalars(int inputs, int outputs, int rank, onnx::AttributeProto a, const T (&values)[N], Set set) {
    for (const T v : values) {
      set(a, v);
      with_attr(inputs, outputs, rank, a, "attribute " + a.name() + " = " + std::to_string(v));
    }
  }

  // Lists of each length of one value, and 0, 1, ..., len-2 followed by the value (a
  // permutation or axes list gone bad).
  template <class T, std::size_t N, class List>
  void lists(int inputs, int outputs, int rank, onnx::AttributeProto a, const T (&values)[N], List list) {
    const std::string who = "attribute " + a.name() + " = ";
    for (const int len : list_lengths(rank))
      for (const T v : values) {
        if (len == 0 && v != 0) continue;
        auto* l = list(a);
        l->Clear();
        for (int k = 0; k < len; ++k) l->Add(v);
        with_attr(inputs, outputs, rank, a, who + std::to_string(len) + " x " + std::to_string(v));
        if (len < 2) continue;
        l->Clear();
        for (int k = 0; k + 1 < len; ++k) l->Add(static_cast<T>(k));
        l->Add(v);
        with_attr(inputs, outputs, rank, a, who + "0.." + std::to_string(len - 2) + ", " + std::to_string(v));
      }
  }

  void attributes(int inputs, int outputs, int rank) {
    using A = onnx::AttributeProto;
    for (const auto& [name, attr] : s_.attributes()) {
      A a;
      a.set_name(name);
      a.set_type(attr.type);
      const std::string who = "attribute " + name;
      if (attr.type == A::INT)
        scalars(inputs, outputs, rank, a, kIntValues, [](A& x, int64_t v) { x.set_i(v); });
      else if (attr.type == A::INTS)
        lists(inputs, outputs, rank, a, kIntValues, [](A& x) { return x.mutable_ints(); });
      else if (attr.type == A::FLOAT)
        scalars(inputs, outputs, rank, a, kFloatValues, [](A& x, float v) { x.set_f(v); });
      else if (attr.type == A::FLOATS)
        lists(inputs, outputs, rank, a, kFloatValues, [](A& x) { return x.mutable_floats(); });
      else if (attr.type == A::STRING)
        for (const char* v : kStringValues) {
          a.set_s(v);
          with_attr(inputs, outputs, rank, a, who + " = '" + v + "'");
        }
      else if (attr.type == A::STRINGS)
        for (const int len : {0, 1, 3}) {
          a.clear_strings();
          for (int k = 0; k < len; ++k) a.add_strings("bogus");
          with_attr(inputs, outputs, rank, a, who + " = " + std::to_string(len) + " strings");
        }
      else
        continue;
      // The wrong kind: an int where a list is expected and the other way round, or a string.
      if (rank != 2) continue;
      A wrong;
      wrong.set_name(name);
      if (attr.type == A::INTS || attr.type == A::FLOATS) {
        wrong.set_type(A::INT);
        wrong.set_i(2);
      } else if (attr.type == A::INT || attr.type == A::FLOAT) {
        wrong.set_type(A::INTS);
        wrong.add_ints(2);
        wrong.add_ints(2);
      } else {
        wrong.set_type(A::INT);
        wrong.set_i(0);
      }
      with_attr(inputs, outputs, rank, wrong, who + " of the wrong kind");
      wrong.set_type(A::STRING);
      wrong.clear_i();
      wrong.clear_ints();
      wrong.set_s("SAME_UPPER");
      with_attr(inputs, outputs, rank, wrong, who + " as a string");
    }
  }

  // Input i as a constant of hostile values (integers, floats) or computed by Shape.
  void data_inputs(int i, int inputs, int outputs) {
    const auto idx = static_cast<std::size_t>(i);
    const bool ints = allows(s_, idx, "tensor(int64)") || allows(s_, idx, "tensor(int32)");
    const bool floats = !ints && i > 0 && allows(s_, idx, "tensor(float)");
    const std::string who = "input " + std::to_string(i);
    for (int rank : {0, 1, 2, 3, 4}) {
      const std::string ctx = ", others rank " + std::to_string(rank);
      if (ints) {
        for (const int64_t v : kIntValues) {
          NodeSpec n = base(inputs, outputs, rank);
          n.inputs[idx] = InputSpec{InputKind::int_data, {}, {v}, {}, true};
          emit(n, who + " = scalar " + std::to_string(v) + ctx);
          n.inputs[idx].int32 = true;
          emit(n, who + " = int32 scalar " + std::to_string(v) + ctx);
          for (const int len : list_lengths(rank)) {
            if (len == 0 && v != 0) continue;
            n.inputs[idx] = InputSpec{InputKind::int_data, {}, std::vector<int64_t>(std::size_t(len), v), {}};
            emit(n, who + " = " + std::to_string(len) + " x " + std::to_string(v) + ctx);
          }
        }
        // Mixed values, as a shape or axes list would hold them.
        for (const std::vector<int64_t>& v : std::vector<std::vector<int64_t>>{
                 {2, -1, 0}, {-1, -1}, {0, 0, 0, 0}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {3, 2, 1, 0, -1, -2}}) {
          NodeSpec n = base(inputs, outputs, rank);
          n.inputs[idx] = InputSpec{InputKind::int_data, {}, v, {}};
          emit(n, who + " = mixed list of " + std::to_string(v.size()) + ctx);
          n.inputs[idx].int32 = true;
          emit(n, who + " = mixed int32 list of " + std::to_string(v.size()) + ctx);
        }
        // A float constant where integers are expected.
        for (const std::size_t len : {std::size_t{1}, std::size_t(rank)}) {
          NodeSpec n = base(inputs, outputs, rank);
          n.inputs[idx] = InputSpec{InputKind::float_data, {}, {}, std::vector<float>(len, 2.0f)};
          emit(n, who + " = " + std::to_string(len) + " floats where integers go" + ctx);
        }
        for (const std::vector<Dim>& d :
             std::vector<std::vector<Dim>>{{},
                                           {Dim{0, nullptr}},
                                           {Dim{-1, "n"}},
                                           {Dim{2, nullptr}, Dim{-1, "n"}, Dim{0, nullptr}, Dim{}},
                                           {Dim{}, Dim{}, Dim{}, Dim{}, Dim{}, Dim{}}}) {
          NodeSpec n = base(inputs, outputs, rank);
          n.inputs[idx] = InputSpec{InputKind::from_shape, d, {}, {}};
          emit(n, who + " = Shape of a rank " + std::to_string(d.size()) + " input" + ctx);
        }
      }
      if (floats)
        for (const float v : kFloatValues) {
          NodeSpec n = base(inputs, outputs, rank);
          n.inputs[idx] = InputSpec{InputKind::float_data, {}, {}, {v}, true};
          emit(n, who + " = scalar " + std::to_string(v) + ctx);
          for (const int len : list_lengths(rank)) {
            if (len == 0 && v != 0) continue;
            n.inputs[idx] = InputSpec{InputKind::float_data, {}, {}, std::vector<float>(std::size_t(len), v)};
            emit(n, who + " = " + std::to_string(len) + " x " + std::to_string(v) + ctx);
          }
        }
    }
  }

  const onnx::OpSchema& s_;
  Run run_;
  long stride_, next_;
  long count_ = 0;  // variants enumerated, run or not
};

struct Tally {
  long models = 0, imported = 0, refused = 0, typed = 0;  // typed: output 0's rank inferred
};

// One model through the importer (and, when the importer refuses non-tensor graph inputs before
// inference, through the same inference call the importer makes).
void run_one(const onnx::ModelProto& m, bool tensor_only, const std::string& what, Tally& t) {
  const std::string bytes = m.SerializeAsString();
  ImportOptions opt;
  opt.check_ops = false;  // every op reaches inference, not only those with kernels
  auto g = import_onnx_bytes(std::as_bytes(std::span(bytes.data(), bytes.size())), "sweep.onnx", opt);
  ++t.models;
  if (g) {
    ++t.imported;
    if (!g->outputs.empty() && g->values[static_cast<std::size_t>(g->outputs[0])].rank_known) ++t.typed;
  } else {
    ++t.refused;
    if (std::getenv("WEAVE_SWEEP_VERBOSE")) std::cerr << what << ": " << g.message() << "\n";
  }
  if (!tensor_only) {
    onnx::ModelProto copy = m;
    try {
      onnx::ShapeInferenceOptions o(/*check_type=*/false, /*strict=*/0, /*data_prop=*/true);
      onnx::shape_inference::InferShapes(copy, &onnx_import::GuardedSchemaRegistry::instance(), o);
    } catch (const std::exception&) {
    }
  }
}

std::string schema_label(const onnx::OpSchema& s) {
  return (s.domain().empty() ? "" : s.domain() + "::") + s.Name() + "-" + std::to_string(s.SinceVersion());
}

// Crash-finding mode: a child per schema, restarted after each crash past the variant that
// crashed; the variant's bytes reach the parent through shared memory.
struct Shared {
  long index;
  int size;
  char what[512];
  char bytes[1 << 16];
};

void sweep_forked(const std::vector<onnx::OpSchema>& schemas, const std::string& dir, Tally& tally) {
  auto* sh = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  BOOST_REQUIRE(sh != MAP_FAILED);
  std::ofstream list(dir + "/crashes.txt");
  long crashes = 0;
  for (const auto& s : schemas) {
    long start = 0;
    int saved = 0;
    for (int attempt = 0; attempt < 500; ++attempt) {
      sh->index = -1;
      const pid_t pid = fork();
      if (pid == 0) {
        // Die of the signal instead of Boost.Test reporting it and running on in the child.
        for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, SIG_DFL);
        alarm(60);
        Tally local;
        long index = 0;
        Sweeper sw(s, [&](const onnx::ModelProto& m, bool tensor_only, const std::string& what) {
          const long i = index++;
          if (i < start) return;
          const std::string bytes = m.SerializeAsString();
          sh->index = i;
          sh->size = static_cast<int>(std::min(bytes.size(), sizeof sh->bytes));
          std::memcpy(sh->bytes, bytes.data(), static_cast<std::size_t>(sh->size));
          std::snprintf(sh->what, sizeof sh->what, "%s", what.c_str());
          run_one(m, tensor_only, what, local);
        });
        sw.sweep();
        _exit(0);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) break;
      ++crashes;
      const std::string name = schema_label(s) + "-" + std::to_string(sh->index) + ".onnx";
      list << name << "\t" << (WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit") << "\t" << sh->what
           << std::endl;
      if (saved++ < 3) std::ofstream(dir + "/" + name, std::ios::binary).write(sh->bytes, sh->size);
      if (sh->index < 0) break;
      start = sh->index + 1;
    }
    Sweeper counter(s, [](const onnx::ModelProto&, bool, const std::string&) {});
    counter.sweep();
    tally.models += counter.count();
  }
  std::cout << crashes << " crashes, listed in " << dir << "/crashes.txt\n";
  BOOST_TEST(crashes == 0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_schema_survives_hostile_single_node_models) {
  const std::vector<onnx::OpSchema> schemas = onnx::OpSchemaRegistry::get_all_schemas_with_history();
  const char* stride_env = std::getenv("WEAVE_SWEEP_STRIDE");
  const long stride = std::max(1L, stride_env != nullptr ? std::atol(stride_env) : 1L);
  if (stride > 1) std::cout << "every " << stride << "th variant (WEAVE_SWEEP_STRIDE)\n";
  Tally tally;
  if (const char* dir = std::getenv("WEAVE_SWEEP_CRASH_DIR"); dir && *dir) {
    sweep_forked(schemas, dir, tally);
  } else {
    long offset = 0;
    for (const auto& s : schemas) {
      BOOST_TEST_CHECKPOINT(schema_label(s));
      Sweeper sw(
          s,
          [&](const onnx::ModelProto& m, bool tensor_only, const std::string& what) {
            run_one(m, tensor_only, schema_label(s) + " " + what, tally);
          },
          stride, offset++);
      sw.sweep();
    }
    // Many variants must import, or the generator has stopped making models that reach inference.
    BOOST_TEST(tally.imported > tally.models / 4);
    BOOST_TEST(tally.typed > tally.models / 8);
    BOOST_TEST(tally.imported + tally.refused == tally.models);
  }
  std::cout << schemas.size() << " schemas, " << tally.models << " models (" << tally.imported
            << " imported, " << tally.refused << " refused, " << tally.typed
            << " with output 0's shape inferred)\n";
  BOOST_TEST(schemas.size() > 400u);
  BOOST_TEST(tally.models > 100000 / stride);
}
