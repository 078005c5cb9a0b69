#include "core/import/schema_check.h"

#include <cstdint>
#include <set>

namespace weave::onnx_import {

namespace {

using A = onnx::AttributeProto;

// The convolution and pooling ops, whose window attributes mean the same in each.
bool window_op(const std::string& op) {
  static const std::set<std::string> kOps = {"Conv",        "ConvTranspose", "ConvInteger", "QLinearConv",
                                             "AveragePool", "MaxPool",       "LpPool",      "MaxUnpool"};
  return kOps.count(op) > 0;
}

Status check_window_attributes(const onnx::NodeProto& node, const std::string& where) {
  constexpr int64_t kMaxWindow = int64_t{1} << 31;
  int64_t spatial = -1;  // from the first list that implies it
  std::string spatial_from;
  for (const A& a : node.attribute()) {
    const std::string& name = a.name();
    const std::string what = where + ": attribute '" + name + "'";
    if (name == "auto_pad") {
      const std::string& s = a.s();  // "" reads as NOTSET, as the kernels and ONNX Runtime read it
      if (!s.empty() && s != "NOTSET" && s != "SAME_UPPER" && s != "SAME_LOWER" && s != "VALID")
        return make_error(what, " is '", s, "', not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
      continue;
    }
    if (name == "group") {
      if (a.i() < 1 || a.i() > kMaxWindow)
        return make_error(what, " is ", a.i(), ", not a positive group count");
      continue;
    }
    if (name == "ceil_mode" || name == "storage_order" || name == "count_include_pad") {
      if (a.i() != 0 && a.i() != 1) return make_error(what, " is ", a.i(), ", not 0 or 1");
      continue;
    }
    const bool positive = name == "kernel_shape" || name == "strides" || name == "dilations";
    const bool non_negative = name == "pads" || name == "output_padding";
    // An empty list means the default, as the kernels read it.
    if ((!positive && !non_negative) || a.ints_size() == 0) continue;
    for (const int64_t v : a.ints())
      if (v < (positive ? 1 : 0) || v > kMaxWindow)
        return make_error(what, " holds ", v, ", outside ", positive ? 1 : 0, "..", kMaxWindow);
    int64_t implied = a.ints_size();
    if (name == "pads") {
      if (implied % 2 != 0)
        return make_error(what, " has ", implied, " values, not two (begin and end) per spatial dim");
      implied /= 2;
    }
    if (spatial < 0) {
      spatial = implied;
      spatial_from = name;
    } else if (implied != spatial) {
      return make_error(what, " has ", a.ints_size(), " values, but '", spatial_from, "' gives ", spatial,
                        " spatial dims");
    }
  }
  return {};
}

}  // namespace

const onnx::OpSchema* schema_for(const onnx::NodeProto& node, const OpsetVersions& opsets) {
  const std::string domain = node.domain() == "ai.onnx" ? std::string() : node.domain();
  const auto it = opsets.find(domain);
  if (it == opsets.end()) return nullptr;
  // An opset newer than libonnx knows (1.12 stops at 17) has forms it does not (ReduceMean-18's
  // axes input): its schema would be an older version's, which such a node does not follow.
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  if (const auto r = ranges.find(domain); r == ranges.end() || it->second > r->second.second) return nullptr;
  return onnx::OpSchemaRegistry::Schema(node.op_type(), it->second, domain);
}

std::string node_where(int index, const onnx::NodeProto& node) {
  return "node " + std::to_string(index) + " (" + node.op_type() +
         (node.name().empty() ? "" : " '" + node.name() + "'") + ")";
}

A::AttributeType attribute_type(const A& a) {
  if (a.type() != A::UNDEFINED) return a.type();
  if (a.has_f()) return A::FLOAT;
  if (a.has_i()) return A::INT;
  if (a.has_s()) return A::STRING;
  if (a.has_t()) return A::TENSOR;
  if (a.has_g()) return A::GRAPH;
  if (a.has_sparse_tensor()) return A::SPARSE_TENSOR;
  if (a.has_tp()) return A::TYPE_PROTO;
  if (a.floats_size()) return A::FLOATS;
  if (a.ints_size()) return A::INTS;
  if (a.strings_size()) return A::STRINGS;
  if (a.tensors_size()) return A::TENSORS;
  if (a.graphs_size()) return A::GRAPHS;
  if (a.sparse_tensors_size()) return A::SPARSE_TENSORS;
  if (a.type_protos_size()) return A::TYPE_PROTOS;
  return A::UNDEFINED;
}

Status check_required_outputs(const onnx::NodeProto& node, const onnx::OpSchema& schema,
                              const std::string& where) {
  const auto& formal = schema.outputs();
  for (int i = 0; i < node.output_size() && i < static_cast<int>(formal.size()); ++i)
    if (node.output(i).empty() && formal[static_cast<std::size_t>(i)].GetOption() == onnx::OpSchema::Single)
      return make_error(where, ": output ", i, " ('", formal[static_cast<std::size_t>(i)].GetName(), "' of ",
                        schema.Name(), ") is required but left empty");
  return {};
}

const onnx::OpSchema* newest_schema(const onnx::NodeProto& node) {
  const std::string domain = node.domain() == "ai.onnx" ? std::string() : node.domain();
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto r = ranges.find(domain);
  return r == ranges.end() ? nullptr
                           : onnx::OpSchemaRegistry::Schema(node.op_type(), r->second.second, domain);
}

Status check_node_schema(onnx::NodeProto& node, const onnx::OpSchema& schema, const std::string& where) {
  const std::string op = schema.Name() + "-" + std::to_string(schema.SinceVersion());
  const int inputs = node.input_size(), outputs = node.output_size();
  if (inputs < schema.min_input() || inputs > schema.max_input())
    return make_error(where, ": ", inputs, " inputs, ", op, " takes ", schema.min_input(), " to ",
                      schema.max_input());
  if (outputs < schema.min_output() || outputs > schema.max_output())
    return make_error(where, ": ", outputs, " outputs, ", op, " gives ", schema.min_output(), " to ",
                      schema.max_output());
  const auto& formal = schema.inputs();
  for (int i = 0; i < inputs && i < static_cast<int>(formal.size()); ++i)
    if (node.input(i).empty() && formal[static_cast<std::size_t>(i)].GetOption() == onnx::OpSchema::Single)
      return make_error(where, ": input ", i, " ('", formal[static_cast<std::size_t>(i)].GetName(), "' of ",
                        op, ") is required but left empty");

  WEAVE_TRY(check_required_outputs(node, schema, where));

  std::set<std::string> seen;
  for (A& a : *node.mutable_attribute()) {
    const std::string what = where + ": attribute '" + a.name() + "'";
    if (!seen.insert(a.name()).second) return make_error(what, " is given twice");
    const A::AttributeType kind = attribute_type(a);
    if (kind != A::UNDEFINED) a.set_type(kind);
    const auto declared = schema.attributes().find(a.name());
    if (declared == schema.attributes().end() || !a.ref_attr_name().empty()) continue;
    if (kind == A::UNDEFINED)
      return make_error(what, " has no value (", op, " declares ",
                        A::AttributeType_Name(declared->second.type), ")");
    if (kind != declared->second.type)
      return make_error(what, " is of kind ", A::AttributeType_Name(kind), ", but ", op, " declares ",
                        A::AttributeType_Name(declared->second.type));
  }
  for (const auto& [name, attr] : schema.attributes())
    if (attr.required && !seen.count(name))
      return make_error(where, ": attribute '", name, "' is required by ", op, " and missing");
  if (window_op(schema.Name())) WEAVE_TRY(check_window_attributes(node, where));
  return {};
}

}  // namespace weave::onnx_import
