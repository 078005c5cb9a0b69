#define BOOST_TEST_MODULE kernel_indexing
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

KernelCase op(const std::string& name, std::vector<Tensor> in, std::vector<bool> constant = {}) {
  KernelCase c;
  c.op = name;
  c.inputs = std::move(in);
  c.constant = std::move(constant);
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(trilu_upper_lower_and_k) {
  Tensor x = make_i64({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  BOOST_CHECK(values<int64_t>(run1(op("Trilu", ins(cp(x))))) ==
              (std::vector<int64_t>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  KernelCase lower = op("Trilu", ins(cp(x), make_i64({}, {-1})));
  lower.attrs.set("upper", int64_t{0});
  BOOST_CHECK(values<int64_t>(run1(lower)) == (std::vector<int64_t>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
}

BOOST_AUTO_TEST_CASE(eyelike_with_offset_and_dtype) {
  KernelCase c = op("EyeLike", ins(make_f32({2, 3}, {9, 9, 9, 9, 9, 9})));
  c.attrs.set("k", int64_t{1});
  c.attrs.set("dtype", int64_t{7});  // int64
  Tensor t = run1(c);
  BOOST_CHECK(t.dtype() == DType::int64);
  BOOST_CHECK(values<int64_t>(t) == (std::vector<int64_t>{0, 1, 0, 0, 0, 1}));
}

BOOST_AUTO_TEST_CASE(cumsum_exclusive_reverse) {
  KernelCase c = op("CumSum", ins(make_f32({2, 3}, {1, 2, 3, 4, 5, 6}), make_i64({}, {1})));
  BOOST_CHECK(run_error(c).find("the axis is not known when planned") != std::string::npos);
  c.constant = {false, true};  // the axis is a value infer() reads (the plan makes it known)
  check_close(run1(c), {1, 3, 6, 4, 9, 15});
  c.attrs.set("exclusive", int64_t{1});
  c.attrs.set("reverse", int64_t{1});
  check_close(run1(c), {5, 3, 0, 11, 6, 0});
  c.inputs[1] = make_i64({}, {5});
  BOOST_CHECK(run_error(c).find("out of range") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(scatter_elements_reductions_and_bad_indices) {
  KernelCase c = op("ScatterElements",
                    ins(make_f32({1, 3}, {1, 2, 3}), make_i64({1, 2}, {-1, 7}), make_f32({1, 2}, {10, 20})));
  c.attrs.set("axis", int64_t{1});
  check_close(run1(c), {1, 2, 10});  // -1 wraps to 2; 7 is skipped
  c.attrs.set("reduction", std::string("add"));
  c.inputs[1] = make_i64({1, 2}, {0, 0});
  check_close(run1(c), {31, 2, 3});
}

BOOST_AUTO_TEST_CASE(scatter_nd_and_gather_nd) {
  KernelCase s =
      op("ScatterND", ins(make_f32({2, 2}, {1, 2, 3, 4}), make_i64({1, 1}, {1}), make_f32({1, 2}, {8, 9})));
  check_close(run1(s), {1, 2, 8, 9});
  KernelCase g = op("GatherND", ins(make_f32({2, 2}, {1, 2, 3, 4}), make_i64({2, 2}, {0, 1, 1, 0})));
  check_close(run1(g), {2, 3});
  KernelCase gb = op("GatherND", ins(make_f32({2, 2}, {1, 2, 3, 4}), make_i64({2, 1}, {1, 0})));
  gb.attrs.set("batch_dims", int64_t{1});
  check_close(run1(gb), {2, 3});
  g.inputs[1] = make_i64({1, 2}, {5, 0});  // out of range: zeros, not a wild read
  check_close(run1(g), {0});
}

BOOST_AUTO_TEST_CASE(onehot_compress_nonzero_need_known_values) {
  KernelCase oh = op("OneHot", ins(make_i64({2}, {1, -1}), make_i64({}, {3}), make_f32({2}, {0, 5})),
                     {false, true, true});
  Tensor t = run1(oh);
  BOOST_CHECK(t.dims() == (Dims{2, 3}));
  check_close(t, {0, 5, 0, 0, 0, 5});
  KernelCase cp_ = op("Compress", ins(make_f32({2, 2}, {1, 2, 3, 4}), make_bool({2}, {0, 1})), {false, true});
  cp_.attrs.set("axis", int64_t{0});
  check_close(run1(cp_), {3, 4});
  KernelCase nz = op("NonZero", ins(make_f32({2, 2}, {0, 1, 1, 0})), {true});
  BOOST_CHECK(values<int64_t>(run1(nz)) == (std::vector<int64_t>{0, 1, 1, 0}));
  nz.constant = {false};  // the count depends on the data: infer must have it
  BOOST_CHECK(run_error(nz).find("run time") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(unique_sorted_with_all_outputs) {
  KernelCase u = op("Unique", ins(make_f32({5}, {2, 1, 2, 3, 1})), {true});
  u.num_outputs = 4;
  auto r = run_all(u);
  check_close(r[0], {1, 2, 3});
  BOOST_CHECK(values<int64_t>(r[1]) == (std::vector<int64_t>{1, 0, 3}));
  BOOST_CHECK(values<int64_t>(r[2]) == (std::vector<int64_t>{1, 0, 1, 2, 0}));
  BOOST_CHECK(values<int64_t>(r[3]) == (std::vector<int64_t>{2, 2, 1}));
}

BOOST_AUTO_TEST_CASE(unique_unsorted_groups_nans_and_signed_zeros) {
  // sorted = 0: first-occurrence order. NaNs are one group (ordered last when sorted); -0 and 0
  // are one value.
  const float nan = std::nanf("");
  KernelCase u = op("Unique", ins(make_f32({7}, {3, nan, -0.f, 1, nan, 0.f, 3})), {true});
  u.attrs.set("sorted", int64_t{0});
  u.num_outputs = 4;
  auto r = run_all(u);
  const auto y = values<float>(r[0]);
  BOOST_TEST_REQUIRE(y.size() == 4u);
  BOOST_TEST(y[0] == 3.f);
  BOOST_TEST(std::isnan(y[1]));
  BOOST_TEST(y[2] == 0.f);
  BOOST_TEST(y[3] == 1.f);
  BOOST_CHECK(values<int64_t>(r[1]) == (std::vector<int64_t>{0, 1, 2, 3}));
  BOOST_CHECK(values<int64_t>(r[2]) == (std::vector<int64_t>{0, 1, 2, 3, 1, 2, 0}));
  BOOST_CHECK(values<int64_t>(r[3]) == (std::vector<int64_t>{2, 2, 2, 1}));
  KernelCase s = op("Unique", ins(make_f32({4}, {nan, 2, nan, 1})), {true});
  s.num_outputs = 3;
  auto rs = run_all(s);
  const auto ys = values<float>(rs[0]);
  BOOST_TEST_REQUIRE(ys.size() == 3u);
  BOOST_TEST(ys[0] == 1.f);
  BOOST_TEST(ys[1] == 2.f);
  BOOST_TEST(std::isnan(ys[2]));
  BOOST_CHECK(values<int64_t>(rs[2]) == (std::vector<int64_t>{2, 1, 2, 0}));
}

BOOST_AUTO_TEST_CASE(unique_keeps_int64_values_past_2_to_the_53_apart) {
  const int64_t big = int64_t{1} << 53;
  KernelCase u = op("Unique", ins(make_i64({4}, {big + 1, big, big + 1, -big})), {true});
  auto r = run_all(u);
  BOOST_CHECK(values<int64_t>(r[0]) == (std::vector<int64_t>{-big, big, big + 1}));
}

BOOST_AUTO_TEST_CASE(unique_of_empty_slices_is_one_group) {
  // A [0 x 5] tensor along axis 1: five empty slices, all equal -- one group, inverse all 0.
  KernelCase u = op("Unique", ins(make_f32({0, 5}, {})), {true});
  u.attrs.set("axis", int64_t{1});
  u.num_outputs = 4;
  auto r = run_all(u);
  BOOST_CHECK(r[0].dims() == (Dims{0, 1}));
  BOOST_CHECK(values<int64_t>(r[1]) == (std::vector<int64_t>{0}));
  BOOST_CHECK(values<int64_t>(r[2]) == (std::vector<int64_t>(5, 0)));
  BOOST_CHECK(values<int64_t>(r[3]) == (std::vector<int64_t>{5}));
}

BOOST_AUTO_TEST_CASE(unique_of_a_million_distinct_values) {
  // A hostile model's Range of millions fed to Unique: every value its own group, in order.
  const int64_t n = 1 << 20;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(n - 1 - i);
  KernelCase u = op("Unique", ins(make_f32({n}, v)), {true});
  u.num_outputs = 4;
  auto r = run_all(u);
  const auto y = values<float>(r[0]);
  const auto first = values<int64_t>(r[1]), inverse = values<int64_t>(r[2]), counts = values<int64_t>(r[3]);
  BOOST_TEST_REQUIRE(y.size() == static_cast<std::size_t>(n));
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    bad +=
        y[k] != static_cast<float>(i) || first[k] != n - 1 - i || inverse[k] != n - 1 - i || counts[k] != 1;
  }
  BOOST_TEST(bad == 0);
}

BOOST_AUTO_TEST_CASE(gather_of_a_laid_out_channel_shuffle_checks_its_input_dims) {
  // The layout pass states the dims it assumed; other dims are an error naming them.
  auto shuffle = [](std::vector<int64_t> expect) {
    KernelCase c = op("Gather", ins(make_f32({1, 1, 2, 3}, {0, 1, 2, 3, 4, 5}), make_i64({3}, {2, 0, 1})),
                      {false, true});
    c.attrs.set("axis", int64_t{3});
    c.attrs.set("weave_expect_dims", std::move(expect));
    return c;
  };
  check_close(run1(shuffle({1, 1, 2, 3})), {2, 0, 1, 5, 3, 4});
  auto r = run_kernel(shuffle({1, 2, 1, 3}), "reference", 1);
  BOOST_TEST((!r.ok() && r.message().find("channel shuffle") != std::string::npos));
}

BOOST_AUTO_TEST_CASE(reverse_sequence_clamps_lengths) {
  KernelCase c = op("ReverseSequence", ins(make_f32({3, 2}, {1, 2, 3, 4, 5, 6}), make_i64({2}, {3, 9})));
  check_close(run1(c), {5, 6, 3, 4, 1, 2});
}
