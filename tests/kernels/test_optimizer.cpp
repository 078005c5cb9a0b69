#define BOOST_TEST_MODULE kernel_optimizer
#include <boost/test/unit_test.hpp>

#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

BOOST_AUTO_TEST_CASE(adagrad_one_step) {
  KernelCase c;
  c.op = "Adagrad";
  c.attrs.set("norm_coefficient", 0.001f);
  c.attrs.set("epsilon", 1e-5f);
  c.attrs.set("decay_factor", 0.1f);
  c.inputs = ins(make_f32({}, {0.1f}), make_i64({}, {0}), make_f32({1}, {1}), make_f32({1}, {-1}),
                 make_f32({1}, {2}));
  c.num_outputs = 2;
  // g' = 0.001 - 1; h' = 2 + g'^2; x' = 1 - 0.1 g' / (sqrt(h') + 1e-5)
  auto r = run_all(c);
  check_close(r[0], {1.057697f});
  check_close(r[1], {2.998001f});
}

BOOST_AUTO_TEST_CASE(momentum_standard_and_a_wrong_output_count) {
  KernelCase c;
  c.op = "Momentum";
  c.attrs.set("norm_coefficient", 0.001f);
  c.attrs.set("alpha", 0.95f);
  c.attrs.set("beta", 0.1f);
  c.attrs.set("mode", std::string("standard"));
  c.inputs = ins(make_f32({}, {0.1f}), make_i64({}, {0}), make_f32({2}, {1.2f, 2.8f}),
                 make_f32({2}, {-0.94f, -2.5f}), make_f32({2}, {1.7f, 3.6f}));
  c.num_outputs = 2;
  // T = 0: beta counts as 1; v' = 0.95 v + g + 0.001 x; x' = x - 0.1 v'
  auto r = run_all(c);
  check_close(r[0], {1.13238f, 2.70772f});
  check_close(r[1], {0.6762f, 0.9228f});
  c.num_outputs = 3;
  BOOST_CHECK(run_error(c).find("outputs") != std::string::npos);
}
