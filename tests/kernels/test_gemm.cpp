#define BOOST_TEST_MODULE kernel_gemm
#include "tests/kernels/test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

// Plain triple loop on row-major matrices.
std::vector<float> naive_mm(const float* a, const float* b, int64_t M, int64_t N, int64_t K) {
  std::vector<float> c(static_cast<std::size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += double(a[i * K + k]) * b[k * N + j];
      c[i * N + j] = static_cast<float>(s);
    }
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(matmul_2x3_by_3x2) {
  KernelCase k{"MatMul",
               {},
               13,
               ins(make_f32({2, 3}, {1, 2, 3, 4, 5, 6}), make_f32({3, 2}, {7, 8, 9, 10, 11, 12})),
               {false, true}};
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  BOOST_CHECK((*r)[0].dims() == Dims({2, 2}));
  check_close((*r)[0], {58, 64, 139, 154});
}

BOOST_AUTO_TEST_CASE(matmul_1d_operands) {
  // [3] x [3, 2] -> [2]; [2, 3] x [3] -> [2]; [3] x [3] -> scalar.
  KernelCase a{
      "MatMul", {}, 13, ins(make_f32({3}, {1, 2, 3}), make_f32({3, 2}, {1, 0, 0, 1, 1, 1})), {false, false}};
  auto r = run_kernel(a);
  REQUIRE_OK(r);
  BOOST_CHECK((*r)[0].dims() == Dims({2}));
  check_close((*r)[0], {4, 5});
  KernelCase b{
      "MatMul", {}, 13, ins(make_f32({2, 3}, {1, 2, 3, 4, 5, 6}), make_f32({3}, {1, 1, 1})), {false, false}};
  r = run_kernel(b);
  REQUIRE_OK(r);
  BOOST_CHECK((*r)[0].dims() == Dims({2}));
  check_close((*r)[0], {6, 15});
  KernelCase c{"MatMul", {}, 13, ins(make_f32({3}, {1, 2, 3}), make_f32({3}, {4, 5, 6})), {false, false}};
  r = run_kernel(c);
  REQUIRE_OK(r);
  BOOST_CHECK_EQUAL((*r)[0].dims().rank(), 0);
  check_close((*r)[0], {32});
}

BOOST_AUTO_TEST_CASE(matmul_broadcast_batches_match_naive) {
  // A [2, 1, 5, 7] x B [3, 7, 4] -> [2, 3, 5, 4]; B batches broadcast against A's.
  Tensor A = random_f32({2, 1, 5, 7}, 1), B = random_f32({3, 7, 4}, 2);
  KernelCase k{"MatMul", {}, 13, ins(copy(A), copy(B)), {false, false}};
  auto r1 = run_kernel(k, "", 1), r2 = run_kernel(k, "", 2);
  REQUIRE_OK(r1);
  REQUIRE_OK(r2);
  BOOST_CHECK((*r1)[0].dims() == Dims({2, 3, 5, 4}));
  BOOST_CHECK_EQUAL(max_abs_diff((*r1)[0], (*r2)[0]), 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      auto want = naive_mm(A.as<float>() + i * 35, B.as<float>() + j * 28, 5, 4, 7);
      for (int e = 0; e < 20; ++e)
        BOOST_CHECK_SMALL((*r1)[0].as<float>()[(i * 3 + j) * 20 + e] - want[e], 1e-5f);
    }
}

BOOST_AUTO_TEST_CASE(matmul_large_single_matches_naive) {
  // Exercises several cache blocks (K > 256, M > 64) and ragged tiles.
  Tensor A = random_f32({70, 300}, 3), B = random_f32({300, 37}, 4);
  auto want = naive_mm(A.as<float>(), B.as<float>(), 70, 37, 300);
  KernelCase k{"MatMul", {}, 13, ins(copy(A), copy(B)), {false, true}};
  auto r1 = run_kernel(k, "", 1), r2 = run_kernel(k, "", 2);
  REQUIRE_OK(r1);
  REQUIRE_OK(r2);
  check_close((*r1)[0], want, 1e-4f);
  BOOST_CHECK_EQUAL(max_abs_diff((*r1)[0], (*r2)[0]), 0.0);
}

BOOST_AUTO_TEST_CASE(matmul_mismatch_names_shapes) {
  KernelCase k{"MatMul", {}, 13, ins(random_f32({2, 3}, 1), random_f32({4, 2}, 2)), {false, false}};
  auto r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "test node (MatMul)"));
  BOOST_CHECK(has(r.message(), "2x3"));
  BOOST_CHECK(has(r.message(), "4x2"));
  KernelCase b{"MatMul", {}, 13, ins(random_f32({2, 2, 3}, 1), random_f32({3, 3, 2}, 2)), {false, false}};
  r = run_kernel(b);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "broadcast"));
}

BOOST_AUTO_TEST_CASE(gemm_trans_alpha_beta_row_bias) {
  // A^T with A = [[1,3],[2,4]] (so op(A) = [[1,2],[3,4]]), B^T with B = [[1,0],[1,1]] -> op(B)=[[1,1],[0,1]].
  // op(A) op(B) = [[1,3],[3,7]]; alpha 2, beta 0.5, C = [10, 20] broadcast by rows.
  KernelCase k{"Gemm",
               {},
               13,
               ins(make_f32({2, 2}, {1, 3, 2, 4}), make_f32({2, 2}, {1, 0, 1, 1}), make_f32({2}, {10, 20})),
               {false, true, true}};
  k.attrs.set("transA", int64_t{1});
  k.attrs.set("transB", int64_t{1});
  k.attrs.set("alpha", 2.f);
  k.attrs.set("beta", 0.5f);
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {7, 16, 11, 24});
}

BOOST_AUTO_TEST_CASE(gemm_column_bias_scalar_bias_and_no_bias) {
  Tensor A = random_f32({3, 4}, 5), B = random_f32({4, 2}, 6);
  auto mm = naive_mm(A.as<float>(), B.as<float>(), 3, 2, 4);
  KernelCase col{"Gemm", {}, 13, ins(copy(A), copy(B), make_f32({3, 1}, {1, 2, 3})), {false, true, true}};
  auto r = run_kernel(col);
  REQUIRE_OK(r);
  check_close((*r)[0], {mm[0] + 1, mm[1] + 1, mm[2] + 2, mm[3] + 2, mm[4] + 3, mm[5] + 3});
  KernelCase sc{"Gemm", {}, 13, ins(copy(A), copy(B), make_f32({1}, {-1})), {false, true, true}};
  r = run_kernel(sc);
  REQUIRE_OK(r);
  check_close((*r)[0], {mm[0] - 1, mm[1] - 1, mm[2] - 1, mm[3] - 1, mm[4] - 1, mm[5] - 1});
  KernelCase none{"Gemm", {}, 13, ins(copy(A), copy(B)), {false, true}};
  r = run_kernel(none);
  REQUIRE_OK(r);
  check_close((*r)[0], mm);
}

BOOST_AUTO_TEST_CASE(gemm_bad_c_and_inner_dims) {
  KernelCase k{"Gemm",
               {},
               13,
               ins(random_f32({3, 4}, 1), random_f32({4, 2}, 2), random_f32({3, 3}, 3)),
               {false, true, true}};
  auto r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "test node (Gemm)"));
  BOOST_CHECK(has(r.message(), "3x3"));
  KernelCase t{"Gemm", {}, 13, ins(random_f32({3, 4}, 1), random_f32({4, 2}, 2)), {false, true}};
  t.attrs.set("transB", int64_t{1});
  r = run_kernel(t);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "3x4"));
  BOOST_CHECK(has(r.message(), "4x2"));
}
