// The ONNX conformance runner: runs the cases of ONNX's own backend test data (Debian package
// libonnx-testdata: data/node, pytorch-converted, pytorch-operator, simple) through Weave's
// importer, compiler, Factory and Executor, in process, and compares every output with ONNX's
// convention: |got - expected| <= 1e-7 + 1e-3 * |expected| elementwise for floating types (NaN
// matches NaN, an infinity matches the same infinity), exact for integer and bool types, and the
// shape must be equal.
//
// Each case is classified as pass, fail (it ran, an output differs), unsupported op, unsupported
// dtype (incl. sequence/optional I/O), unsupported attribute, or error (any other failure, e.g. a
// shape that cannot be planned). The classification of failures reads the error message, so it is
// a report aid, not a contract.
#pragma once

#include <string>
#include <vector>

namespace weave {
class KernelRegistry;
}

namespace weave::conformance {

enum class Outcome { pass, fail, unsupported_op, unsupported_dtype, unsupported_attribute, error };

[[nodiscard]] const char* outcome_name(Outcome o);
[[nodiscard]] bool outcome_from_name(const std::string& name, Outcome& out);

struct CaseInfo {
  std::string name;  // "node/test_abs": suite folder / case folder
  std::string dir;   // absolute path of the case folder
};

struct CaseResult {
  std::string name;
  Outcome outcome = Outcome::error;
  std::string detail;            // first line of the error, or which output differs and where
  std::vector<std::string> ops;  // op types of the model's main graph, sorted, without Constant
  bool tensor_io = true;         // false when an input or output is a sequence, map or optional
};

struct RunOptions {
  const KernelRegistry* registry = nullptr;  // nullptr: KernelRegistry::global()
  // Data sets with more input elements than this are skipped (0: no limit); a case whose every
  // data set is skipped still counts the model's compilation. For slow sanitizer builds.
  long long max_input_elements = 0;
};

// The cases under `data_dir` (folders with a model.onnx), sorted by name.
[[nodiscard]] std::vector<CaseInfo> list_cases(const std::string& data_dir);

// Op types of an ONNX model's main graph, sorted, without Constant; empty when unreadable.
[[nodiscard]] std::vector<std::string> model_ops(const std::string& path);

// Imports, compiles and runs one case. Never throws; a crash here is a Weave defect.
[[nodiscard]] CaseResult run_case(const CaseInfo& c, const RunOptions& options);

}  // namespace weave::conformance
