// Small ONNX models built in code for the importer's tests: typed graph inputs, nodes with
// attributes, and the importer called on the serialized bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/import/onnx_import.h"
#include "onnx/onnx_pb.h"

namespace weave::test {

inline void set_tensor_type(onnx::ValueInfoProto* vi, const std::string& name, int elem,
                            std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d >= 0)
      dim->set_dim_value(d);
    else
      dim->set_dim_param("n");
  }
}

inline onnx::ModelProto base_model(int opset) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.set_producer_name("weave-test");
  m.set_producer_version("1");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::string& name,
                                 std::vector<std::string> in, std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

inline void add_ints_attr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

inline void add_int_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void add_float_attr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline Expected<Graph> import_proto(const onnx::ModelProto& m, const std::string& label,
                                    ImportOptions opt = {}) {
  std::string bytes = m.SerializeAsString();
  return import_onnx_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), label, opt);
}

inline ImportOptions no_op_check() {
  ImportOptions o;
  o.check_ops = false;
  return o;
}

}  // namespace weave::test
