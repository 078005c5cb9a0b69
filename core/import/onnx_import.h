// ONNX -> Weave graph IR.
//
// The importer parses a ModelProto, maps it onto the integer-id Graph (core/graph/graph.h) and
// canonicalises old opset forms so that every kernel implements exactly one form of its op
// (see canonicalize.h). It is the only part of Weave that links protobuf/libonnx, so a
// runtime-only build does without it.
//
// What becomes what:
//   graph inputs that are not initializers  -> ValueKind::input (the model's real inputs)
//   initializers, Constant nodes            -> params (Graph::add_param)
//   every other node                        -> Node, attributes converted to AttrValue
//   every ONNX name                         -> Graph::names (the strippable NameMap)
// Value dtypes/shapes come from ONNX shape inference where it succeeds; unknown dims are
// kDynamic and an unknown rank leaves Value::rank_known false.
//
// All failures are Errors naming the file (the `label`), and the node or tensor involved. The
// importer never crashes or allocates without bound on hostile input; ops the kernel registry
// does not implement are reported all at once, with every node that uses them.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

class KernelRegistry;

struct ImportOptions {
  // Reject models using ops the registry does not implement (one error listing all of them).
  // Tests that exercise the importer without kernels turn this off.
  bool check_ops = true;
  // Run ONNX shape inference to fill intermediate dtypes/shapes.
  bool infer_shapes = true;
  // Registry to check ops against; nullptr means KernelRegistry::global().
  const KernelRegistry* registry = nullptr;
};

// Reads and imports an .onnx file. Errors are prefixed with `path`.
[[nodiscard]] Expected<Graph> import_onnx(const std::string& path, const ImportOptions& opt = {});

// Imports a serialized ModelProto held in memory; `label` names it in messages.
[[nodiscard]] Expected<Graph> import_onnx_bytes(std::span<const std::byte> bytes, std::string label,
                                                const ImportOptions& opt = {});

}  // namespace weave
