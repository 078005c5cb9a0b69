#define BOOST_TEST_MODULE kernel_softmax
#include <cmath>

#include "tests/kernels/test_util.h"

using namespace weave;
using namespace weave::test;

BOOST_AUTO_TEST_CASE(softmax_last_axis_hand_computed) {
  // softmax([0, ln 3]) = [1/4, 3/4]; a huge shift must not overflow.
  const float l3 = std::log(3.f);
  KernelCase k{"Softmax", {}, 13, ins(make_f32({2, 2}, {0, l3, 1000, 1000 + l3})), {false}};
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {0.25f, 0.75f, 0.25f, 0.75f});
  k.op = "LogSoftmax";
  r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {std::log(0.25f), std::log(0.75f), std::log(0.25f), std::log(0.75f)}, 1e-4f);
}

BOOST_AUTO_TEST_CASE(softmax_middle_axis) {
  // [1, 2, 2] along axis 1: pairs (x[0][j], x[1][j]).
  const float l3 = std::log(3.f);
  KernelCase k{"Softmax", {}, 13, ins(make_f32({1, 2, 2}, {0, 5, l3, 5})), {false}};
  k.attrs.set("axis", int64_t{1});
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {0.25f, 0.5f, 0.75f, 0.5f});
  k.attrs.set("axis", int64_t{-2});
  r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {0.25f, 0.5f, 0.75f, 0.5f});
}

BOOST_AUTO_TEST_CASE(softmax_coerce_2d) {
  // Old semantics, axis 1 on [1, 2, 2]: all four values form one row.
  KernelCase k{"Softmax", {}, 13, ins(make_f32({1, 2, 2}, {0, 0, 0, std::log(5.f)})), {false}};
  k.attrs.set("coerce_2d", int64_t{1});
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {0.125f, 0.125f, 0.125f, 0.625f});
}

BOOST_AUTO_TEST_CASE(softmax_single_element_and_threads) {
  KernelCase one{"Softmax", {}, 13, ins(make_f32({3, 1}, {-7, 0, 9})), {false}};
  auto r = run_kernel(one);
  REQUIRE_OK(r);
  check_close((*r)[0], {1, 1, 1});
  KernelCase k{"LogSoftmax", {}, 13, ins(random_f32({4, 33, 7}, 3, -20, 20)), {false}};
  k.attrs.set("axis", int64_t{1});
  auto r1 = run_kernel(k, "", 1), r2 = run_kernel(k, "", 2);
  REQUIRE_OK(r1);
  REQUIRE_OK(r2);
  BOOST_CHECK_EQUAL(max_abs_diff((*r1)[0], (*r2)[0]), 0.0);
  // Each normalized lane sums to one in probability space.
  double s = 0;
  for (int d = 0; d < 33; ++d) s += std::exp((*r1)[0].as<float>()[(2 * 33 + d) * 7 + 5]);
  BOOST_CHECK_CLOSE(s, 1.0, 1e-3);
}

BOOST_AUTO_TEST_CASE(softmax_bad_axis) {
  KernelCase k{"Softmax", {}, 13, ins(random_f32({2, 3}, 1)), {false}};
  k.attrs.set("axis", int64_t{2});
  auto r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "test node (Softmax)"));
  BOOST_CHECK(has(r.message(), "2x3"));
}

BOOST_AUTO_TEST_CASE(hardmax_marks_the_first_maximum) {
  KernelCase k{"Hardmax", {}, 13, ins(make_f32({2, 3}, {1, 3, 3, -1, -2, -3})), {false}};
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {0, 1, 0, 1, 0, 0});
}
