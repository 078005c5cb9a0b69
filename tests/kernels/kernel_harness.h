// Runs one kernel on hand-made tensors the way the executor would: create (with constant
// inputs visible, as params are), infer, allocate outputs and workspace, run. Kernel unit tests
// use it so each test states only the op, attributes, inputs and expected outputs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common/parallel.h"
#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/graph/attributes.h"

namespace weave::test {

struct KernelCase {
  std::string op;
  Attributes attrs;
  int opset = 13;
  std::vector<Tensor> inputs;  // a default-constructed Tensor (dtype undefined) = omitted input
  std::vector<bool> constant;  // per input: known at create/infer time (params, shape tensors)
  int num_outputs = 1;
};

// impl: "" = the registry's choice (highest priority), else a specific implementation.
[[nodiscard]] Expected<std::vector<Tensor>> run_kernel(const KernelCase& c, std::string_view impl = "",
                                                       int threads = 1);
// The same, with the kernel's chunks handed to `par`.
[[nodiscard]] Expected<std::vector<Tensor>> run_kernel(const KernelCase& c, std::string_view impl,
                                                       const Parallel& par);

// Helpers for building tensors in tests.
Tensor make_f32(Dims dims, std::vector<float> values);
Tensor make_i64(Dims dims, std::vector<int64_t> values);
// Deterministic pseudo-random floats in [lo, hi).
Tensor random_f32(Dims dims, uint32_t seed, float lo = -1.f, float hi = 1.f);
// Max |a-b| over elements; +inf when dtypes or dims differ.
double max_abs_diff(const Tensor& a, const Tensor& b);

}  // namespace weave::test
