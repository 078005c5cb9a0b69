// Every node checked against its ONNX operator schema before anything reads it.
//
// The importer, libonnx's shape inference and the kernels read a node's attributes by name and
// trust their kind: an `auto_pad` given as an INT, or `kernel_shape` as a FLOAT, would be read
// as an empty string or list. check_node_schema refuses such a node with an Error naming it, the
// op, its schema version and the attribute, so a hostile or broken model stops at import:
//   - input and output counts within the schema's bounds (an input the schema declares
//     `Single` cannot be left empty);
//   - each attribute given once, of the kind the schema declares (an attribute whose kind was
//     left unset by an old exporter has it recovered from the field that holds its value, and
//     set, so every later reader sees one kind); required attributes present;
//   - the values of the attributes shared by the convolution and pooling ops (auto_pad,
//     kernel_shape, strides, dilations, pads, output_padding, group) within what the ONNX
//     operator definitions allow, and their lengths consistent with one another.
// Attributes a schema does not declare are left alone (kernels ignore them). Other values that
// depend on input shapes (an axis against a rank) are checked once shapes are known: by the
// shape-inference guard (guarded_inference.h) and by each kernel when the model is planned.
#pragma once

#include <map>
#include <string>

#include "core/common/status.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace weave::onnx_import {

// The opset the model imports for each domain; the default domain is "" (also for "ai.onnx").
using OpsetVersions = std::map<std::string, int>;

// The schema libonnx defines for `node` at the model's opset of its domain, or nullptr.
[[nodiscard]] const onnx::OpSchema* schema_for(const onnx::NodeProto& node, const OpsetVersions& opsets);

// How messages name node `index` of a graph: "node 3 (Conv 'stem')", or "node 3 (Conv)".
[[nodiscard]] std::string node_where(int index, const onnx::NodeProto& node);

// The kind of an attribute: its declared type, or (left UNDEFINED by old exporters) the kind of
// the field that holds its value; UNDEFINED when it holds none.
[[nodiscard]] onnx::AttributeProto::AttributeType attribute_type(const onnx::AttributeProto& a);

// Checks `node` against `schema` (see above) and sets each attribute's recovered kind.
// `where` names the node in messages, e.g. "node 3 (Conv 'stem')".
// Each output the schema requires (not optional, not variadic) must be named: kernels write
// their required outputs unconditionally (a MelWeightMatrix whose only output was left empty
// wrote through a null pointer; found by fuzz_onnx). Also applied, with the newest schema libonnx
// knows, to nodes of an opset newer than it (whose schemas are not checked otherwise): whether an
// output is required does not change between versions.
[[nodiscard]] Status check_required_outputs(const onnx::NodeProto& node, const onnx::OpSchema& schema,
                                            const std::string& where);
// The newest schema libonnx has for the node's op in its domain, or nullptr.
[[nodiscard]] const onnx::OpSchema* newest_schema(const onnx::NodeProto& node);

[[nodiscard]] Status check_node_schema(onnx::NodeProto& node, const onnx::OpSchema& schema,
                                       const std::string& where);

}  // namespace weave::onnx_import
