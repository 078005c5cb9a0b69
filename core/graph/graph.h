// The graph IR: what the importer produces, the compiler passes rewrite, the artifact stores
// and the runtime plans. Everything is addressed by integer ids:
//   value id  = index into Graph::values   (inputs, params and intermediates alike)
//   node id   = index into Graph::nodes    (topologically ordered)
//   param id  = index into Graph::params
// Only the model's real inputs and outputs keep their names in the graph proper (R2); every
// other original name lives in the optional, strippable NameMap (R4), like a linker map file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/common/buffer.h"
#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/graph/attributes.h"

namespace weave {

inline constexpr int32_t kNoValue = -1;  // an omitted optional node input

enum class ValueKind : uint8_t { input = 0, param = 1, intermediate = 2 };

struct Value {
  ValueKind kind = ValueKind::intermediate;
  DType dtype = DType::undefined;
  Shape shape;  // static shape as far as known; kDynamic dims, empty+rank_known=false if unknown rank
  bool rank_known = true;  // false when shape inference could not tell the rank
  int32_t param = -1;      // param id when kind == param
};

struct Node {
  std::string op;                // ONNX op type, e.g. "Conv"
  std::vector<int32_t> inputs;   // value ids; kNoValue for omitted optional inputs
  std::vector<int32_t> outputs;  // value ids
  Attributes attrs;
};

// Weights. Bytes are shared (heap, mmap of an artifact, or another factory's params).
struct Param {
  int32_t value = -1;  // value id
  SharedBytes data;    // exactly numel * dtype_size bytes, C-contiguous
};

// Optional debugging names: value id -> name, node id -> name. Stripped by --strip-names.
struct NameMap {
  std::map<int32_t, std::string> values;
  std::map<int32_t, std::string> nodes;
  [[nodiscard]] bool empty() const { return values.empty() && nodes.empty(); }
};

struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<Param> params;
  std::vector<int32_t> inputs;           // value ids of real inputs (never params)
  std::vector<int32_t> outputs;          // value ids of outputs
  std::vector<TensorInfo> input_infos;   // names, dtypes, static shapes, dim names (parallel to inputs)
  std::vector<TensorInfo> output_infos;  // parallel to outputs
  NameMap names;
  std::map<std::string, std::string> metadata;  // producer, opset, free key/values (labels, mean, std...)

  // "node 12 (Conv '/backbone/conv1/Conv')" -- the name part only when the name map has it.
  [[nodiscard]] std::string node_label(int32_t node) const;
  // "value 7 ('x')" or "input 'x'" / "output 'logits'" / "param 3".
  [[nodiscard]] std::string value_label(int32_t value) const;
  // Total bytes of all params (by dtype and shape).
  [[nodiscard]] int64_t param_bytes() const;
  // Checks ids, topological order, that every intermediate has exactly one producer, and that
  // params carry the right number of bytes. Used after import and after reading an artifact.
  [[nodiscard]] Status validate() const;
  // Adds a value and returns its id.
  int32_t add_value(Value v);
  // Adds a param value holding `data` and returns its value id.
  int32_t add_param(DType dtype, Shape shape, SharedBytes data);
  // Removes nodes marked dead and values no longer referenced; renumbers ids (and the name map).
  void compact(const std::vector<bool>& dead_nodes);
  // The opset kernels see. Nodes always use opset-13 (or newer) forms: the importer rewrites
  // older ones (Slice/Clip/Squeeze attributes, Upsample, ...), so kernels get max(13, the
  // source model's opset, kept in metadata["opset"] for information).
  [[nodiscard]] int kernel_opset() const;
  // op type -> count, for `weave inspect`.
  [[nodiscard]] std::map<std::string, int> op_histogram() const;
};

}  // namespace weave
