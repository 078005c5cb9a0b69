#define BOOST_TEST_MODULE kernel_normalization
#include <cmath>

#include "tests/kernels/test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

KernelCase batch_norm(bool constant_params) {
  // Channel 0: scale 2, bias 1, mean 1, var 3 (eps 1 -> std 2): y = (x-1)*2/2 + 1 = x.
  // Channel 1: scale 1, bias 0, mean -1, var 0 (eps 1 -> std 1): y = x + 1.
  KernelCase k{"BatchNormalization",
               {},
               13,
               ins(make_f32({2, 2, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), make_f32({2}, {2, 1}),
                   make_f32({2}, {1, 0}), make_f32({2}, {1, -1}), make_f32({2}, {3, 0})),
               {false, constant_params, constant_params, constant_params, constant_params}};
  k.attrs.set("epsilon", 1.f);
  return k;
}

}  // namespace

BOOST_AUTO_TEST_CASE(batchnorm_folded_and_runtime_params) {
  for (bool c : {true, false}) {
    auto r = run_kernel(batch_norm(c));
    REQUIRE_OK(r);
    check_close((*r)[0], {1, 2, 4, 5, 5, 6, 8, 9});
  }
}

BOOST_AUTO_TEST_CASE(batchnorm_wrong_channels) {
  KernelCase k = batch_norm(true);
  k.inputs[0] = random_f32({1, 3, 2, 2}, 1);
  auto r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "test node (BatchNormalization)"));
  BOOST_CHECK(has(r.message(), "1x3x2x2"));
}

BOOST_AUTO_TEST_CASE(layernorm_last_axis_with_stats) {
  // Rows [1,2,3,4] (mean 2.5, var 1.25) and [2,2,2,2] (var 0, eps 0 -> guarded by eps).
  KernelCase k{"LayerNormalization",
               {},
               17,
               ins(make_f32({2, 4}, {1, 2, 3, 4, 5, 5, 5, 5}), make_f32({4}, {1, 1, 2, 2}),
                   make_f32({4}, {0, 0, 0, 1})),
               {false, true, true},
               3};
  k.attrs.set("epsilon", 1e-3f);
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  const float inv = 1.f / std::sqrt(1.25f + 1e-3f);
  check_close((*r)[0], {-1.5f * inv, -0.5f * inv, 2 * 0.5f * inv, 2 * 1.5f * inv + 1, 0, 0, 0, 1}, 1e-5f);
  BOOST_CHECK((*r)[1].dims() == Dims({2, 1}));
  check_close((*r)[1], {2.5f, 5.f});
  check_close((*r)[2], {inv, 1.f / std::sqrt(1e-3f)}, 1e-3f);
}

BOOST_AUTO_TEST_CASE(layernorm_axis_1_of_3d) {
  // axis=1 over [1, 2, 2]: one group of 4 values {0, 2, 4, 6}: mean 3, var 5.
  KernelCase k{"LayerNormalization",
               {},
               17,
               ins(make_f32({1, 2, 2}, {0, 2, 4, 6}), make_f32({2, 2}, {1, 1, 1, 1})),
               {false, true}};
  k.attrs.set("axis", int64_t{1});
  k.attrs.set("epsilon", 0.f);
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  const float s = std::sqrt(5.f);
  check_close((*r)[0], {-3 / s, -1 / s, 1 / s, 3 / s});
  k.inputs[1] = make_f32({3}, {1, 1, 1});
  r = run_kernel(k);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(has(r.message(), "test node (LayerNormalization)"));
}

BOOST_AUTO_TEST_CASE(instancenorm_per_plane) {
  // Plane (0,0) = [1, 3]: mean 2, std 1 -> [-1, 1] * 2 + 1; plane (0,1) = [4, 4] -> bias -1.
  KernelCase k{"InstanceNormalization",
               {},
               13,
               ins(make_f32({1, 2, 2}, {1, 3, 4, 4}), make_f32({2}, {2, 5}), make_f32({2}, {1, -1})),
               {false, true, true}};
  k.attrs.set("epsilon", 1e-6f);  // plane (0,1) has zero variance
  auto r = run_kernel(k);
  REQUIRE_OK(r);
  check_close((*r)[0], {-1, 3, -1, -1}, 1e-4f);
  auto r1 = run_kernel(KernelCase{"InstanceNormalization",
                                  {},
                                  13,
                                  ins(random_f32({3, 5, 4, 6}, 9), random_f32({5}, 10), random_f32({5}, 11)),
                                  {false, true, true}},
                       "", 1);
  auto r2 = run_kernel(KernelCase{"InstanceNormalization",
                                  {},
                                  13,
                                  ins(random_f32({3, 5, 4, 6}, 9), random_f32({5}, 10), random_f32({5}, 11)),
                                  {false, true, true}},
                       "", 2);
  REQUIRE_OK(r1);
  REQUIRE_OK(r2);
  BOOST_CHECK_EQUAL(max_abs_diff((*r1)[0], (*r2)[0]), 0.0);
}

BOOST_AUTO_TEST_CASE(lrn_and_mean_variance_normalization) {
  // LRN size 1: y = x / (1 + alpha * x^2)^beta.
  KernelCase l{"LRN", {}, 13, ins(make_f32({1, 2, 1, 1}, {1, 2})), {false}};
  l.attrs.set("size", int64_t{1});
  l.attrs.set("alpha", 1.f);
  l.attrs.set("beta", 1.f);
  auto r = run_kernel(l);
  REQUIRE_OK(r);
  check_close((*r)[0], {0.5f, 0.4f});
  // MVN over axes {1}: each row becomes (x - mean) / std.
  KernelCase m{"MeanVarianceNormalization", {}, 13, ins(make_f32({2, 2}, {1, 3, 5, 5})), {false}};
  m.attrs.set("axes", std::vector<int64_t>{1});
  r = run_kernel(m);
  REQUIRE_OK(r);
  check_close((*r)[0], {-1, 1, 0, 0}, 1e-4f);
}

BOOST_AUTO_TEST_CASE(batch_norm_training_mode_uses_batch_statistics) {
  KernelCase b{"BatchNormalization",
               {},
               15,
               ins(make_f32({2, 1}, {1, 3}), make_f32({1}, {1}), make_f32({1}, {0}), make_f32({1}, {10}),
                   make_f32({1}, {4})),
               {false, true, true, true, true},
               3};
  b.attrs.set("training_mode", int64_t{1});
  b.attrs.set("epsilon", 0.f);
  b.attrs.set("momentum", 0.5f);
  auto r = run_kernel(b);
  REQUIRE_OK(r);
  check_close((*r)[0], {-1, 1});
  check_close((*r)[1], {6.f});   // 10 * 0.5 + 2 * 0.5
  check_close((*r)[2], {2.5f});  // 4 * 0.5 + 1 * 0.5
}
