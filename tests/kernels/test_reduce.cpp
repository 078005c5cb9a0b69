#define BOOST_TEST_MODULE kernel_reduce
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

// x = [[1, 2, 3], [4, 5, 6]]
Tensor x23() {
  return make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
}

KernelCase reduce(const std::string& op, const Tensor& x, std::vector<int64_t> axes, int64_t keepdims = 1) {
  KernelCase c;
  c.op = op;
  c.inputs = ins(cp(x));
  c.attrs.set("axes", std::move(axes));
  c.attrs.set("keepdims", keepdims);
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(reduce_ops_over_last_axis) {
  auto r = [](const std::string& op) { return run1(reduce(op, x23(), {1}, 0)); };
  Tensor s = r("ReduceSum");
  BOOST_CHECK(s.dims() == (Dims{2}));
  check_close(s, {6, 15});
  check_close(r("ReduceMean"), {2, 5});
  check_close(r("ReduceMax"), {3, 6});
  check_close(r("ReduceMin"), {1, 4});
  check_close(r("ReduceProd"), {6, 120});
  check_close(r("ReduceL1"), {6, 15});
  check_close(r("ReduceL2"), {std::sqrt(14.f), std::sqrt(77.f)});
  check_close(r("ReduceSumSquare"), {14, 77});
  check_close(r("ReduceLogSum"), {std::log(6.f), std::log(15.f)});
  check_close(r("ReduceLogSumExp"), {3.40760596f, 6.40760596f});
}

BOOST_AUTO_TEST_CASE(reduce_axis0_keepdims_and_negative_axes) {
  Tensor a = run1(reduce("ReduceSum", x23(), {0}));
  BOOST_CHECK(a.dims() == (Dims{1, 3}));
  check_close(a, {5, 7, 9});
  Tensor b = run1(reduce("ReduceMax", x23(), {-2}, 0));
  BOOST_CHECK(b.dims() == (Dims{3}));
  check_close(b, {4, 5, 6});
  // all axes
  Tensor c = run1(reduce("ReduceMean", x23(), {0, -1}, 0));
  BOOST_CHECK_EQUAL(c.dims().rank(), 0);
  check_close(c, {3.5f});
  BOOST_CHECK(!run_kernel(reduce("ReduceSum", x23(), {2})).ok());
}

BOOST_AUTO_TEST_CASE(reduce_middle_axes_4d) {
  // [2,3,2,2] mean over H,W (per-channel mean) and sum over C (middle, strided)
  Tensor x = random_f32({2, 3, 2, 2}, 7);
  Tensor m = run1(reduce("ReduceMean", x, {2, 3}));
  BOOST_CHECK(m.dims() == (Dims{2, 3, 1, 1}));
  Tensor s = run1(reduce("ReduceSum", x, {1}, 0));
  BOOST_CHECK(s.dims() == (Dims{2, 2, 2}));
  const float* p = x.as<float>();
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c) {
      const float* q = p + (n * 3 + c) * 4;
      BOOST_CHECK_CLOSE(m.as<float>()[n * 3 + c], (q[0] + q[1] + q[2] + q[3]) / 4.f, 1e-4);
    }
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 4; ++i)
      BOOST_CHECK_CLOSE(s.as<float>()[n * 4 + i], p[n * 12 + i] + p[n * 12 + 4 + i] + p[n * 12 + 8 + i],
                        1e-4);
}

BOOST_AUTO_TEST_CASE(reduce_sum_axes_input_and_noop) {
  KernelCase c;
  c.op = "ReduceSum";
  c.inputs = ins(x23(), make_i64({1}, {-1}));
  c.constant = {false, true};
  check_close(run1(c), {6, 15});
  // empty axes: reduce all, unless noop_with_empty_axes
  c.inputs[1] = make_i64({0}, {});
  Tensor all = run1(c);
  BOOST_CHECK(all.dims() == (Dims{1, 1}));
  check_close(all, {21});
  c.attrs.set("noop_with_empty_axes", int64_t{1});
  Tensor same = run1(c);
  BOOST_CHECK(same.dims() == (Dims{2, 3}));
  check_close(same, {1, 2, 3, 4, 5, 6});
  // omitted axes input
  KernelCase d;
  d.op = "ReduceSum";
  d.inputs = ins(x23());
  d.attrs.set("keepdims", int64_t{0});
  check_close(run1(d), {21});
  // axes only known at run time
  c.inputs[1] = make_i64({1}, {0});
  c.constant = {false, false};
  BOOST_CHECK(run_error(c).find("only known at run time") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(reduce_int64_paths) {
  Tensor x = make_i64({2, 3}, {1, -2, 3, 4, 5, -6});
  BOOST_CHECK(values<int64_t>(run1(reduce("ReduceSum", x, {1}, 0))) == (std::vector<int64_t>{2, 3}));
  BOOST_CHECK(values<int64_t>(run1(reduce("ReduceMax", x, {0}, 0))) == (std::vector<int64_t>{4, 5, 3}));
  BOOST_CHECK(values<int64_t>(run1(reduce("ReduceMin", x, {1}, 0))) == (std::vector<int64_t>{-2, -6}));
  BOOST_CHECK(values<int64_t>(run1(reduce("ReduceProd", x, {1}, 0))) == (std::vector<int64_t>{-6, -120}));
  BOOST_CHECK(values<int64_t>(run1(reduce("ReduceMean", x, {1}, 0))) == (std::vector<int64_t>{0, 1}));
  BOOST_CHECK(!run_kernel(reduce("ReduceL2", x, {1})).ok());
}

BOOST_AUTO_TEST_CASE(reduce_empty) {
  // reducing a 0-sized axis yields the identity
  Tensor x = make_f32({2, 0}, {});
  check_close(run1(reduce("ReduceSum", x, {1}, 0)), {0, 0});
  check_close(run1(reduce("ReduceProd", x, {1}, 0)), {1, 1});
  check_close(run1(reduce("ReduceMax", x, {1}, 0)), {-INFINITY, -INFINITY});
  check_close(run1(reduce("ReduceLogSumExp", x, {1}, 0)), {-INFINITY, -INFINITY});
  // a 0-sized kept axis gives an empty output
  Tensor e = run1(reduce("ReduceSum", x, {0}));
  BOOST_CHECK(e.dims() == (Dims{1, 0}));
}

BOOST_AUTO_TEST_CASE(reduce_large_threads_agree) {
  Tensor x = random_f32({64, 300}, 11);
  Tensor s = run1(reduce("ReduceSum", x, {1}, 0));
  double want = 0;
  for (int j = 0; j < 300; ++j) want += x.as<float>()[63 * 300 + j];
  BOOST_CHECK_CLOSE(s.as<float>()[63], want, 1e-3);
  Tensor lse = run1(reduce("ReduceLogSumExp", x, {0}, 0));
  BOOST_CHECK_EQUAL(lse.numel(), 300);
}

BOOST_AUTO_TEST_CASE(argmax_argmin) {
  Tensor x = make_f32({2, 4}, {1, 5, 5, 0, 7, 2, 7, -1});
  KernelCase c;
  c.op = "ArgMax";
  c.inputs = ins(cp(x));
  c.attrs.set("axis", int64_t{-1});
  Tensor a = run1(c);
  BOOST_CHECK(a.dims() == (Dims{2, 1}));
  BOOST_CHECK(values<int64_t>(a) == (std::vector<int64_t>{1, 0}));
  c.attrs.set("select_last_index", int64_t{1});
  BOOST_CHECK(values<int64_t>(run1(c)) == (std::vector<int64_t>{2, 2}));
  c.op = "ArgMin";
  c.attrs.set("select_last_index", int64_t{0});
  c.attrs.set("keepdims", int64_t{0});
  Tensor m = run1(c);
  BOOST_CHECK(m.dims() == (Dims{2}));
  BOOST_CHECK(values<int64_t>(m) == (std::vector<int64_t>{3, 3}));
  // axis 0 on int64
  KernelCase i;
  i.op = "ArgMax";
  i.inputs = ins(make_i64({2, 3}, {1, 9, 3, 4, 5, 3}));
  BOOST_CHECK(values<int64_t>(run1(i)) == (std::vector<int64_t>{1, 0, 0}));
  i.inputs[0] = make_f32({2, 0}, {});
  i.attrs.set("axis", int64_t{1});
  BOOST_CHECK(!run_kernel(i).ok());
}

BOOST_AUTO_TEST_CASE(topk_largest_smallest_axis) {
  KernelCase c;
  c.op = "TopK";
  c.inputs = ins(make_f32({2, 4}, {1, 5, 5, 0, 7, NAN, 7, -1}), make_i64({1}, {2}));
  c.constant = {false, true};
  c.num_outputs = 2;
  auto o = run_all(c);
  BOOST_CHECK(o[0].dims() == (Dims{2, 2}));
  // ties keep the lower index first; NaN ranks above every number
  check_close(o[0], {5, 5, NAN, 7});
  BOOST_CHECK(values<int64_t>(o[1]) == (std::vector<int64_t>{1, 2, 1, 0}));
  c.attrs.set("largest", int64_t{0});
  auto s = run_all(c);
  check_close(s[0], {0, 1, -1, 7});
  BOOST_CHECK(values<int64_t>(s[1]) == (std::vector<int64_t>{3, 0, 3, 0}));
  // axis 0, int64
  KernelCase i;
  i.op = "TopK";
  i.inputs = ins(make_i64({3, 2}, {1, 9, 8, 2, 5, 4}), make_i64({1}, {1}));
  i.constant = {false, true};
  i.num_outputs = 2;
  i.attrs.set("axis", int64_t{0});
  auto io = run_all(i);
  BOOST_CHECK(values<int64_t>(io[0]) == (std::vector<int64_t>{8, 9}));
  BOOST_CHECK(values<int64_t>(io[1]) == (std::vector<int64_t>{1, 0}));
  i.inputs[1] = make_i64({1}, {4});
  BOOST_CHECK(!run_kernel(i).ok());
}

BOOST_AUTO_TEST_CASE(topk_many_slices_threads_agree) {
  KernelCase c;
  c.op = "TopK";
  c.inputs = ins(random_f32({37, 50}, 5), make_i64({1}, {3}));
  c.constant = {false, true};
  c.num_outputs = 2;
  auto o = run_all(c);
  const float* x = c.inputs[0].as<float>();
  for (int r = 0; r < 37; ++r) {
    std::vector<float> row(x + r * 50, x + r * 50 + 50);
    std::sort(row.begin(), row.end(), std::greater<>());
    for (int j = 0; j < 3; ++j) BOOST_CHECK_EQUAL(o[0].as<float>()[r * 3 + j], row[j]);
  }
}
