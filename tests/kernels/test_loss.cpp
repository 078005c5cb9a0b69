#define BOOST_TEST_MODULE kernel_loss
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

KernelCase loss(const std::string& op, const std::string& reduction, Tensor x, Tensor target) {
  KernelCase c;
  c.op = op;
  c.attrs.set("reduction", reduction);
  c.inputs.push_back(std::move(x));
  c.inputs.push_back(std::move(target));
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(nll_picks_the_target_class_per_element) {
  // [N=2, C=3]: loss = -x[n, t[n]].
  Tensor x = make_f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  check_close(run1(loss("NegativeLogLikelihoodLoss", "none", cp(x), make_i64({2}, {2, 0}))), {3, 4});
  check_close(run1(loss("NegativeLogLikelihoodLoss", "sum", cp(x), make_i64({2}, {2, 0}))), {7});
  check_close(run1(loss("NegativeLogLikelihoodLoss", "mean", cp(x), make_i64({2}, {2, 0}))), {3.5f});
}

BOOST_AUTO_TEST_CASE(nll_weights_and_ignore_index) {
  // [N=1, C=2, d=3] with weights; the ignored element counts neither loss nor weight.
  KernelCase c = loss("NegativeLogLikelihoodLoss", "mean", make_f32({1, 2, 3}, {-1, -2, -3, -4, -5, -6}),
                      make_i64({1, 3}, {0, 1, -100}));
  c.inputs.push_back(make_f32({2}, {2, 0.5f}));
  c.attrs.set("ignore_index", int64_t{-100});
  // losses 1*2, 5*0.5, ignored; weights 2 + 0.5.
  check_close(run1(c), {(2 + 2.5f) / 2.5f});
  c.attrs.set("reduction", std::string("none"));
  check_close(run1(c), {2, 2.5f, 0});
}

BOOST_AUTO_TEST_CASE(nll_clamps_targets_out_of_range) {
  Tensor x = make_f32({1, 2}, {-1, -2});
  check_close(run1(loss("NegativeLogLikelihoodLoss", "none", cp(x), make_i64({1}, {99}))), {2});
  check_close(run1(loss("NegativeLogLikelihoodLoss", "none", cp(x), make_i64({1}, {-7}))), {1});
}

BOOST_AUTO_TEST_CASE(softmax_cross_entropy_and_log_prob) {
  // Equal scores: log_prob = -log 2, loss = log 2 whichever the label.
  KernelCase c =
      loss("SoftmaxCrossEntropyLoss", "mean", make_f32({2, 2}, {0, 0, 5, 5}), make_i64({2}, {0, 1}));
  c.num_outputs = 2;
  auto r = run_all(c);
  check_close(r[0], {std::log(2.f)});
  check_close(r[1], {-std::log(2.f), -std::log(2.f), -std::log(2.f), -std::log(2.f)});
}

BOOST_AUTO_TEST_CASE(loss_double_and_errors) {
  KernelCase d =
      loss("NegativeLogLikelihoodLoss", "sum", make<double>({1, 2}, {-0.25, -0.5}), make_i64({1}, {1}));
  BOOST_CHECK(values<double>(run1(d)) == (std::vector<double>{0.5}));
  BOOST_CHECK(
      run_error(loss("NegativeLogLikelihoodLoss", "avg", make_f32({1, 2}, {0, 0}), make_i64({1}, {0})))
          .find("reduction") != std::string::npos);
  BOOST_CHECK(run_error(loss("NegativeLogLikelihoodLoss", "sum", make_f32({2, 2}, {0, 0, 0, 0}),
                             make_i64({3}, {0, 0, 0})))
                  .find("does not fit") != std::string::npos);
}
