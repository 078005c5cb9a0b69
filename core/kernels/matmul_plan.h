// The batch layout of a MatMul (numpy semantics: 1-D operands, broadcast batch dims) for
// concrete input dims, shared by the reference and the fast MatMul.
#pragma once

#include <string>

#include "core/common/dims.h"
#include "core/common/status.h"

namespace weave {

struct MatMulPlan {
  int64_t M = 1, N = 1, K = 1;
  Dims batch;                 // broadcast batch dims of the output
  Dims a_bstride, b_bstride;  // per batch dim: element stride in A/B (0 when broadcast)
  Dims out;                   // output dims
  // Element offsets of batch `idx` (row-major over `batch`) in A and B.
  void offsets(int64_t idx, int64_t& oa, int64_t& ob) const {
    oa = ob = 0;
    for (int i = batch.rank() - 1; i >= 0; --i) {
      const int64_t d = batch[i], c = idx % d;
      idx /= d;
      oa += c * a_bstride[i];
      ob += c * b_bstride[i];
    }
  }
};

// Errors name `label` and both operands' dims.
[[nodiscard]] Expected<MatMulPlan> plan_matmul(const Dims& a, const Dims& b, const std::string& label);

}  // namespace weave
