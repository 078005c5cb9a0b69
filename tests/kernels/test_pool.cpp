#define BOOST_TEST_MODULE kernel_pool
#include <cstring>

#include "tests/kernels/test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

std::vector<float> iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

KernelCase pool(std::string op, Tensor x, std::vector<int64_t> kernel) {
  KernelCase k{std::move(op), {}, 13, ins(std::move(x)), {false}};
  k.attrs.set("kernel_shape", std::move(kernel));
  return k;
}

}  // namespace

BOOST_AUTO_TEST_CASE(maxpool_ceil_mode) {
  // 5x5 image of 0..24, 2x2 windows, stride 2.
  KernelCase k = pool("MaxPool", make_f32({1, 1, 5, 5}, iota(25)), {2, 2});
  k.attrs.set("strides", std::vector<int64_t>{2, 2});
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  BOOST_CHECK((*r)[0].dims() == Dims({1, 1, 2, 2}));
  check_close((*r)[0], {6, 8, 16, 18});
  k.attrs.set("ceil_mode", int64_t{1});
  r = run_kernel(k);
  REQUIRE_OK(r);
  BOOST_CHECK((*r)[0].dims() == Dims({1, 1, 3, 3}));
  check_close((*r)[0], {6, 8, 9, 16, 18, 19, 21, 23, 24});
}

BOOST_AUTO_TEST_CASE(avgpool_ceil_mode_divides_by_valid_count) {
  KernelCase k = pool("AveragePool", make_f32({1, 1, 5, 5}, iota(25)), {2, 2});
  k.attrs.set("strides", std::vector<int64_t>{2, 2});
  k.attrs.set("ceil_mode", int64_t{1});
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {3, 5, 6.5f, 13, 15, 16.5f, 20.5f, 22.5f, 24});
}

BOOST_AUTO_TEST_CASE(avgpool_count_include_pad) {
  // 2x2 image, 3x3 window, pad 1: every window holds all four values (sum 10) and five pads.
  for (auto [inc, want] : {std::pair<int64_t, float>{0, 2.5f}, {1, 10.f / 9.f}}) {
    KernelCase k = pool("AveragePool", make_f32({1, 1, 2, 2}, {1, 2, 3, 4}), {3, 3});
    k.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    k.attrs.set("count_include_pad", inc);
    auto r = run_kernel(k);
    REQUIRE_OK(r);
    check_close((*r)[0], {want, want, want, want});
  }
}

BOOST_AUTO_TEST_CASE(maxpool_1d_asymmetric_pads_and_dilations) {
  KernelCase k = pool("MaxPool", make_f32({1, 1, 5}, {1, 5, 2, 4, 3}), {2});
  k.attrs.set("pads", std::vector<int64_t>{1, 0});
  k.attrs.set("strides", std::vector<int64_t>{2});
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {1, 5, 4});

  KernelCase d = pool("MaxPool", make_f32({1, 1, 5}, {1, 9, 2, 8, 3}), {2});
  d.attrs.set("dilations", std::vector<int64_t>{2});
  r = run_kernel(d);
  REQUIRE_OK(r);
  check_close((*r)[0], {2, 9, 3});
}

BOOST_AUTO_TEST_CASE(pool_same_upper) {
  KernelCase k = pool("MaxPool", make_f32({1, 1, 5}, {1, 2, 3, 4, 5}), {2});
  k.attrs.set("strides", std::vector<int64_t>{2});
  k.attrs.set("auto_pad", std::string("SAME_UPPER"));
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {2, 4, 5});
  k.op = "AveragePool";
  r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {1.5f, 3.5f, 5});
}

BOOST_AUTO_TEST_CASE(resnet_stem_maxpool_threads_agree) {
  KernelCase k = pool("MaxPool", random_f32({2, 3, 17, 15}, 5), {3, 3});
  k.attrs.set("strides", std::vector<int64_t>{2, 2});
  k.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto r1 = run_kernel(k, "", 1), r2 = run_kernel(k, "", 2);
  REQUIRE_OK(r1);
  REQUIRE_OK(r2);
  BOOST_CHECK((*r1)[0].dims() == Dims({2, 3, 9, 8}));
  BOOST_CHECK_EQUAL(max_abs_diff((*r1)[0], (*r2)[0]), 0.0);
  // Spot check against a direct evaluation: output (1, 2, 4, 3) covers rows 7..9, cols 5..7.
  const float* x = k.inputs[0].as<float>() + (1 * 3 + 2) * 17 * 15;
  float m = -1e9f;
  for (int i = 7; i <= 9; ++i)
    for (int j = 5; j <= 7; ++j) m = std::max(m, x[i * 15 + j]);
  BOOST_CHECK_EQUAL((*r1)[0].as<float>()[((1 * 3 + 2) * 9 + 4) * 8 + 3], m);
}

BOOST_AUTO_TEST_CASE(global_pools) {
  KernelCase k{
      "GlobalAveragePool", {}, 13, ins(make_f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, 10})), {false}};
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  BOOST_CHECK((*r)[0].dims() == Dims({1, 2, 1, 1}));
  check_close((*r)[0], {2.5f, 1.f});
  k.op = "GlobalMaxPool";
  r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {4.f, 10.f});
  // 1x1 image: identity.
  KernelCase one{"GlobalAveragePool", {}, 13, ins(make_f32({2, 1, 1, 1}, {7, -3})), {false}};
  r = run_kernel(one);
  REQUIRE_OK(r);
  check_close((*r)[0], {7, -3});
}

BOOST_AUTO_TEST_CASE(max_pool_indices_and_integer_dtypes) {
  // 3x3 input, 2x2 windows at stride 1: the maxima 5, 6, 8, 9 and their flat indices.
  KernelCase k = pool("MaxPool", make_f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), {2, 2});
  k.num_outputs = 2;
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {5, 6, 8, 9});
  auto ints = [](const Tensor& t) {
    return std::vector<int64_t>(t.as<int64_t>(), t.as<int64_t>() + t.numel());
  };
  BOOST_CHECK(ints((*r)[1]) == (std::vector<int64_t>{4, 5, 7, 8}));
  k.attrs.set("storage_order", int64_t{1});  // column-major within the plane
  r = run_kernel(k);
  REQUIRE_OK(r);
  BOOST_CHECK(ints((*r)[1]) == (std::vector<int64_t>{4, 7, 5, 8}));
  Tensor x8(DType::uint8, Dims{1, 1, 2, 2});
  const uint8_t v8[] = {3, 200, 7, 1};
  std::memcpy(x8.data(), v8, sizeof v8);
  auto ru = run_kernel(pool("MaxPool", std::move(x8), {2, 2}));
  REQUIRE_OK(ru);
  BOOST_CHECK((*ru)[0].dtype() == DType::uint8);
  BOOST_CHECK(*(*ru)[0].as<uint8_t>() == 200);
}

BOOST_AUTO_TEST_CASE(pool_errors) {
  KernelCase k = pool("MaxPool", random_f32({1, 1, 2, 2}, 1), {3, 3});
  auto r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "test node (MaxPool)"));
  BOOST_CHECK(has(r.message(), "larger than the padded input"));

  k = pool("MaxPool", Tensor(DType::boolean, Dims{1, 1, 2, 2}), {2, 2});
  r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "does not take dtype bool"));

  KernelCase nok{"AveragePool", {}, 13, ins(random_f32({1, 1, 4, 4}, 1)), {false}};
  r = run_kernel(nok);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "kernel_shape"));

  k = pool("MaxPool", random_f32({1, 1, 4, 4}, 1), {2, 2, 2});
  k.num_outputs = 1;
  r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "test node (MaxPool)"));
}

BOOST_AUTO_TEST_CASE(max_unpool_scatters_and_grows_to_output_shape) {
  // From a 4x4 input pooled 2x2 / stride 2: values 5..8 at flat indices 5, 7, 13, 15.
  auto unpool = [](bool with_shape) {
    KernelCase k = pool("MaxUnpool", make_f32({1, 1, 2, 2}, {5, 6, 7, 8}), {2, 2});
    k.attrs.set("strides", std::vector<int64_t>{2, 2});
    k.inputs.push_back(make_i64({1, 1, 2, 2}, {5, 7, 13, 15}));
    k.constant = {false, false};
    if (with_shape) {
      k.inputs.push_back(make_i64({4}, {1, 1, 5, 5}));
      k.constant.push_back(true);
    }
    return run_kernel(k);
  };
  auto r = unpool(false);
  REQUIRE_OK(r);
  check_close((*r)[0], {0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8});
  // A larger output keeps each value's coordinates.
  r = unpool(true);
  REQUIRE_OK(r);
  check_close((*r)[0], {0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0});
}
