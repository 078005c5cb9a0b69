// Fuzzes the ONNX importer and everything after it on the way to a running model: protobuf bytes
// -> import_onnx_bytes (protobuf parse, ONNX shape inference, canonicalisation, rank
// propagation, op check) -> compile_graph (identity removal, constant folding through the real
// kernels, BatchNorm folding, dead code) -> Factory::create (every kernel's create and the
// shape plans). A model that compiles must also write and read back as a .weave artifact.
//
// Random bytes rarely make a valid ModelProto, so the custom mutator works on the parsed model
// half of the time: it changes op types (to ops the registry knows), attribute values, tensor
// and value dims and dtypes, node inputs, the opset, and adds, duplicates or drops nodes, then
// serializes the model again. The other half are libFuzzer's own byte mutations. Attributes it
// adds are mostly of the kind the op's schema declares, so that mutations get past the
// importer's schema check to shape inference and the kernels.
#include <climits>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/artifact/artifact.h"
#include "core/compiler/compile.h"
#include "core/import/onnx_import.h"
#include "core/kernels/registry.h"
#include "core/runtime/factory.h"
#include "fuzz/fuzz_util.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using Rng = std::minstd_rand;

int64_t interesting(Rng& rng) {
  static const int64_t kValues[] = {-2,        -1,        0,
                                    1,         2,         3,
                                    4,         7,         8,
                                    16,        255,       256,
                                    1 << 16,   INT_MAX,   int64_t{1} << 32,
                                    INT64_MAX, INT64_MIN, -(int64_t{1} << 31)};
  if (rng() % 4 == 0) return static_cast<int64_t>(rng() % 64) - 8;
  return kValues[rng() % std::size(kValues)];
}

template <class T>
T& pick(Rng& rng, google::protobuf::RepeatedPtrField<T>& r) {
  return *r.Mutable(static_cast<int>(rng() % r.size()));
}

void mutate_shape(Rng& rng, onnx::TensorShapeProto& shape) {
  switch (rng() % 4) {
    case 0:
      shape.add_dim()->set_dim_value(interesting(rng));
      break;
    case 1:
      if (shape.dim_size()) shape.mutable_dim()->RemoveLast();
      break;
    case 2:
      if (shape.dim_size()) pick(rng, *shape.mutable_dim()).set_dim_value(interesting(rng));
      break;
    default:
      if (shape.dim_size()) pick(rng, *shape.mutable_dim()).set_dim_param(rng() % 2 ? "n" : "");
      break;
  }
}

void mutate_value_info(Rng& rng, onnx::ValueInfoProto& v) {
  auto* t = v.mutable_type()->mutable_tensor_type();
  if (rng() % 4 == 0)
    t->set_elem_type(static_cast<int>(rng() % 18));
  else
    mutate_shape(rng, *t->mutable_shape());
}

void mutate_attribute(Rng& rng, onnx::AttributeProto& a) {
  switch (rng() % 5) {
    case 0:
      a.set_i(interesting(rng));
      break;
    case 1:
      if (a.ints_size())
        a.set_ints(static_cast<int>(rng() % a.ints_size()), interesting(rng));
      else
        a.add_ints(interesting(rng));
      break;
    case 2:
      if (rng() % 2)
        a.add_ints(interesting(rng));
      else if (a.ints_size())
        a.mutable_ints()->RemoveLast();
      break;
    case 3:
      a.set_f(static_cast<float>(interesting(rng)) / 3.0f);
      if (a.floats_size()) a.set_floats(0, -a.floats(0));
      break;
    default: {
      static const char* kStrings[] = {"nearest",  "linear",  "cubic", "NOTSET",     "SAME_UPPER", "VALID",
                                       "constant", "reflect", "edge",  "half_pixel", "asymmetric", ""};
      a.set_s(kStrings[rng() % std::size(kStrings)]);
      break;
    }
  }
}

// The kind the op's newest schema gives attribute `name`, or UNDEFINED.
onnx::AttributeProto::AttributeType declared_kind(const onnx::NodeProto& n, const std::string& name) {
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op_type(), n.domain());
  if (s == nullptr) return onnx::AttributeProto::UNDEFINED;
  const auto it = s->attributes().find(name);
  return it == s->attributes().end() ? onnx::AttributeProto::UNDEFINED : it->second.type;
}

// An attribute of a name many ops take; of the kind the op declares three times in four (the
// importer refuses a declared attribute of another kind before anything reads it, and that
// check is reached the fourth time).
void add_attribute(Rng& rng, onnx::NodeProto& n) {
  static const char* kNames[] = {
      "axis",    "axes",     "perm",      "kernel_shape", "pads",      "strides",       "dilations",
      "group",   "keepdims", "mode",      "alpha",        "beta",      "transA",        "transB",
      "epsilon", "to",       "split",     "starts",       "ends",      "blocksize",     "k",
      "largest", "auto_pad", "ceil_mode", "hidden_size",  "direction", "output_padding"};
  auto* a = n.add_attribute();
  a->set_name(kNames[rng() % std::size(kNames)]);
  const auto kind = declared_kind(n, a->name());
  if (kind == onnx::AttributeProto::STRING && rng() % 4) {
    static const char* kModes[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "nearest",
                                   "linear", "DCR",        "CRD",        ""};
    a->set_type(kind);
    a->set_s(kModes[rng() % std::size(kModes)]);
  } else if (kind == onnx::AttributeProto::FLOAT && rng() % 4) {
    a->set_type(kind);
    a->set_f(static_cast<float>(interesting(rng)) / 4.0f);
  } else if ((kind == onnx::AttributeProto::INT || kind == onnx::AttributeProto::INTS) && rng() % 4) {
    a->set_type(kind);
    if (kind == onnx::AttributeProto::INT)
      a->set_i(interesting(rng));
    else
      for (int i = 0, k = static_cast<int>(rng() % 6); i < k; ++i) a->add_ints(interesting(rng));
  } else if (rng() % 2) {
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(interesting(rng));
  } else {
    a->set_type(onnx::AttributeProto::INTS);
    for (int i = 0, k = static_cast<int>(rng() % 6); i < k; ++i) a->add_ints(interesting(rng));
  }
}

void mutate_tensor(Rng& rng, onnx::TensorProto& t) {
  switch (rng() % 4) {
    case 0:
      if (t.dims_size())
        t.set_dims(static_cast<int>(rng() % t.dims_size()), interesting(rng));
      else
        t.add_dims(interesting(rng));
      break;
    case 1:
      t.set_data_type(static_cast<int>(rng() % 18));
      break;
    case 2:
      if (!t.raw_data().empty()) t.mutable_raw_data()->resize(rng() % t.raw_data().size());
      break;
    default:
      if (rng() % 2)
        t.add_dims(1 + rng() % 4);
      else if (t.dims_size())
        t.mutable_dims()->RemoveLast();
      break;
  }
}

// One structural change; false when the model has nothing of the kind picked.
bool mutate_model(Rng& rng, onnx::ModelProto& m) {
  static const std::vector<std::string> ops = weave::KernelRegistry::global().ops();
  auto* g = m.mutable_graph();
  const bool has_nodes = g->node_size() > 0;
  switch (rng() % 12) {
    case 0:
      if (!has_nodes) return false;
      pick(rng, *g->mutable_node()).set_op_type(ops[rng() % ops.size()]);
      return true;
    case 1:
    case 2: {
      if (!has_nodes) return false;
      auto& n = pick(rng, *g->mutable_node());
      if (n.attribute_size() == 0 || rng() % 3 == 0)
        add_attribute(rng, n);
      else
        mutate_attribute(rng, pick(rng, *n.mutable_attribute()));
      return true;
    }
    case 3:
      if (g->input_size() == 0) return false;
      mutate_value_info(rng, pick(rng, *g->mutable_input()));
      return true;
    case 4:
      if (g->output_size() == 0) return false;
      mutate_value_info(rng, pick(rng, *g->mutable_output()));
      return true;
    case 5:
      if (g->initializer_size() == 0) return false;
      mutate_tensor(rng, pick(rng, *g->mutable_initializer()));
      return true;
    case 6: {  // rewire an input of a node to another known name (or to nothing)
      if (!has_nodes) return false;
      auto& n = pick(rng, *g->mutable_node());
      std::vector<std::string> names{""};
      for (const auto& i : g->input()) names.push_back(i.name());
      for (const auto& i : g->initializer()) names.push_back(i.name());
      for (const auto& o : g->node()) names.insert(names.end(), o.output().begin(), o.output().end());
      const std::string& name = names[rng() % names.size()];
      if (n.input_size() && rng() % 3)
        n.set_input(static_cast<int>(rng() % n.input_size()), name);
      else
        n.add_input(name);
      return true;
    }
    case 7: {  // duplicate a node, its outputs renamed, or make a node a graph output
      if (!has_nodes) return false;
      onnx::NodeProto copy = pick(rng, *g->mutable_node());
      for (auto& o : *copy.mutable_output()) o += "_dup";
      *g->add_node() = copy;
      return true;
    }
    case 8:
      if (!has_nodes) return false;
      g->mutable_node()->DeleteSubrange(static_cast<int>(rng() % g->node_size()), 1);
      return true;
    case 9:
      if (m.opset_import_size() == 0) return false;
      m.mutable_opset_import(0)->set_version(static_cast<int64_t>(rng() % 22));
      return true;
    case 10: {  // the output of a node becomes a graph output
      if (!has_nodes) return false;
      const auto& n = g->node(static_cast<int>(rng() % g->node_size()));
      if (n.output_size() == 0) return false;
      auto* o = g->add_output();
      o->set_name(n.output(0));
      return true;
    }
    default:
      if (!has_nodes) return false;
      {
        auto& n = pick(rng, *g->mutable_node());
        if (n.output_size() > 1 && rng() % 2)
          n.mutable_output()->RemoveLast();
        else
          n.add_output("extra" + std::to_string(rng() % 4));
      }
      return true;
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  Rng rng(seed);
  if (rng() % 2) {
    onnx::ModelProto m;
    if (m.ParseFromArray(data, static_cast<int>(size))) {
      bool changed = false;
      for (int i = 0, k = 1 + static_cast<int>(rng() % 3); i < k; ++i)
        changed = mutate_model(rng, m) || changed;
      std::string out;
      if (changed && m.SerializeToString(&out) && out.size() <= max_size) {
        std::memcpy(data, out.data(), out.size());
        return out.size();
      }
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weave;
  auto g = import_onnx_bytes(fuzz::as_bytes(data, size), "fuzz.onnx");
  if (!g) {
    fuzz::check_error(g, "import_onnx_bytes");
    return 0;
  }
  auto c = compile_graph(std::move(*g));
  if (!c) {
    fuzz::check_error(c, "compile_graph");
    return 0;
  }
  WriteOptions wo;
  wo.codec = "none";
  auto bytes = serialize_artifact(*c, wo);
  fuzz::check(bool(bytes), "serialize_artifact refused a compiled graph");
  auto back = read_artifact_bytes(SharedBytes::copy_of(*bytes), "fuzz.weave");
  if (!back) fuzz::fail("read_artifact_bytes refused a compiled graph: " + back.message());

  FactoryOptions opt;
  opt.dedup_params = false;  // no process-wide state carried from one input to the next
  auto f = Factory::create(std::move(*c), opt);
  if (!f) fuzz::check_error(f, "Factory::create");
  return 0;
}
