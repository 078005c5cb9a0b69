#define BOOST_TEST_MODULE kernel_linalg
#include <boost/test/unit_test.hpp>

#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

KernelCase einsum(const std::string& eq, std::vector<Tensor> in) {
  KernelCase c;
  c.op = "Einsum";
  c.attrs.set("equation", eq);
  c.inputs = std::move(in);
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(einsum_matmul_transpose_trace_and_implicit) {
  Tensor a = make_f32({2, 2}, {1, 2, 3, 4});
  check_close(run1(einsum("ij,jk->ik", ins(cp(a), cp(a)))), {7, 10, 15, 22});
  check_close(run1(einsum("ij->ji", ins(cp(a)))), {1, 3, 2, 4});
  check_close(run1(einsum("ii", ins(cp(a)))), {5});           // implicit: trace
  check_close(run1(einsum("ij", ins(cp(a)))), {1, 2, 3, 4});  // implicit: identity
  check_close(run1(einsum("...ii->...i", ins(make_f32({1, 2, 2}, {1, 2, 3, 4})))), {1, 4});
}

BOOST_AUTO_TEST_CASE(einsum_broadcasts_ellipsis_and_rejects_bad_sizes) {
  Tensor a = make<double>({2, 1, 2}, {1, 2, 3, 4});
  Tensor b = make<double>({3, 2}, {1, 0, 0, 1, 1, 1});
  auto r = run1(einsum("...j,...j->...", ins(cp(a), cp(b))));
  BOOST_CHECK(r.dims() == (Dims{2, 3}));
  BOOST_CHECK(values<double>(r) == (std::vector<double>{1, 2, 3, 3, 4, 7}));
  auto err = run_kernel(
      einsum("ij,jk->ik", ins(make_f32({2, 3}, {1, 2, 3, 4, 5, 6}), make_f32({2, 2}, {1, 2, 3, 4}))));
  BOOST_REQUIRE(!err.ok());
  BOOST_CHECK(err.message().find("differ") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(det_with_pivoting_and_batches) {
  KernelCase d;
  d.op = "Det";
  d.inputs = ins(make_f32({2, 2, 2}, {0, 1, 1, 0, 2, 0, 0, 3}));
  check_close(run1(d), {-1, 6});
}
