#include "core/kernels/matmul_plan.h"

#include <algorithm>

#include "core/kernels/kernel_util.h"

namespace weave {

Expected<MatMulPlan> plan_matmul(const Dims& a, const Dims& b, const std::string& label) {
  MatMulPlan p;
  if (a.rank() < 1 || b.rank() < 1)
    return make_error(label, ": MatMul operands ", kern::dims_bracketed(a), " and ", kern::dims_bracketed(b),
                      " must have rank >= 1");
  const bool a1 = a.rank() == 1, b1 = b.rank() == 1;
  p.M = a1 ? 1 : a[a.rank() - 2];
  p.K = a[a.rank() - 1];
  const int64_t kb = b1 ? b[0] : b[b.rank() - 2];
  p.N = b1 ? 1 : b[b.rank() - 1];
  if (p.K != kb)
    return make_error(label, ": MatMul inner dims differ: ", kern::dims_bracketed(a), " x ",
                      kern::dims_bracketed(b));
  const int ra = a1 ? 0 : a.rank() - 2, rb = b1 ? 0 : b.rank() - 2;
  const int rbatch = std::max(ra, rb);
  // Element strides of A's and B's batch dims (the matrix itself is M*K / K*N elements). A
  // hostile artifact can declare dims whose products overflow: refused here, before any use.
  const auto too_large = [&] {
    return make_error(label, ": MatMul operands ", kern::dims_bracketed(a), " and ", kern::dims_bracketed(b),
                      " are too large");
  };
  int64_t sa = 0, sb = 0;
  if (__builtin_mul_overflow(p.M, p.K, &sa) || __builtin_mul_overflow(p.K, p.N, &sb)) return too_large();
  p.batch.resize(rbatch);
  p.a_bstride.resize(rbatch);
  p.b_bstride.resize(rbatch);
  for (int i = rbatch - 1; i >= 0; --i) {
    const int ia = i - (rbatch - ra), ib = i - (rbatch - rb);
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return make_error(label, ": MatMul batch dims do not broadcast: ", kern::dims_bracketed(a), " x ",
                        kern::dims_bracketed(b));
    p.batch[i] = std::max(da, db);
    if (da == 0 || db == 0) p.batch[i] = 0;
    p.a_bstride[i] = da == 1 ? 0 : sa;
    p.b_bstride[i] = db == 1 ? 0 : sb;
    if (__builtin_mul_overflow(sa, da, &sa) || __builtin_mul_overflow(sb, db, &sb)) return too_large();
  }
  p.out = p.batch;
  if (!a1) p.out.push_back(p.M);
  if (!b1) p.out.push_back(p.N);
  return p;
}

}  // namespace weave
