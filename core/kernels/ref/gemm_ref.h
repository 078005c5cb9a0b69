// The reference single-precision GEMM shared by MatMul/Gemm, Conv (im2col), ConvTranspose and
// LSTM. Row-major:  C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C.
// op(A) = A (lda >= K) or A^T (A stored K x M, lda >= M); likewise for B.
//
// It is blocked for cache (A packed in MC x KC blocks, B in KC x NR strips) and runs a small
// register tile the compiler vectorizes; the packing buffers live on the stack (~72 KiB), so the
// routine never allocates and may be called from any thread. beta == 0 ignores C's old contents
// (NaNs included), as BLAS does.
#pragma once

#include <cstdint>

#include "core/common/parallel.h"

namespace weave {

void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
           int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// Same, with the work split over `par` by column blocks of C (or row blocks when N is small).
void sgemm_parallel(const Parallel& par, bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                    float alpha, const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
                    float* C, int64_t ldc);

}  // namespace weave
