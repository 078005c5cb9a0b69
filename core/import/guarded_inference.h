// ONNX shape inference that a hostile model cannot crash.
//
// libonnx's per-op inference functions (1.12, Debian 12) trust their inputs: a ConvTranspose
// whose input has rank 2, or a Conv whose `pads` is shorter than its spatial rank, reads out of
// bounds inside libonnx (found by fuzz/fuzz_onnx). GuardedSchemaRegistry hands InferShapes the
// same schemas with each inference function wrapped in checks of what the context holds at that
// node (input ranks and attribute lengths known by then, including ranks inferred upstream).
// A node failing them raises the usual inference error, which non-strict inference records and
// skips; the kernels still validate every node when the model is planned.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

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

}  // namespace weave::onnx_import
