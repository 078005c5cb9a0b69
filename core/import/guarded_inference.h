// ONNX shape inference that a hostile model cannot crash.
//
// libonnx's per-op inference functions (1.12, Debian 12) trust their inputs: a ConvTranspose
// whose input has rank 2, a Conv whose `pads` is shorter than its spatial rank, or a ConvInteger
// whose weight has another rank than its data read out of bounds inside libonnx (found by
// fuzz/fuzz_onnx). GuardedSchemaRegistry hands InferShapes the same schemas with each inference
// function wrapped in checks of what the context holds at that node:
//   - input and output counts within the schema's;
//   - each typed input of a type its formal parameter allows, one type per type parameter;
//   - known dims non-negative, their product below 2^48;
//   - the ranks, attribute lengths and constant values each op's inference function indexes
//     by without checking (the table in guarded_inference.cpp, from a reading of every
//     inference function of libonnx 1.12; tests/import/test_inference_sweep.cpp runs every
//     schema against them).
// A node failing them is skipped by inference (its outputs stay untyped), and the importer then
// runs the same checks over the inferred graph (check_inferred_graph) to report it by name.
// Attribute kinds and the window attributes' values are checked before inference, against the
// schema (schema_check.h).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "core/common/status.h"
#include "core/import/schema_check.h"
#include "onnx/defs/schema.h"

namespace weave::onnx_import {

class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  // The process-wide instance (wrapped schemas are made once per op and version).
  static GuardedSchemaRegistry& instance();

  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override;

 private:
  mutable std::mutex mu_;
  mutable std::map<std::tuple<std::string, int, std::string>, std::unique_ptr<onnx::OpSchema>> wrapped_;
};

// The guard's checks over every node of `graph` (and of its subgraphs) with the types that
// inference left: the first node that breaks one is an Error naming it and the reason.
[[nodiscard]] Status check_inferred_graph(onnx::GraphProto& graph, const OpsetVersions& opsets);

}  // namespace weave::onnx_import
