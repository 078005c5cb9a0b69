// Shapes known only at run time (core/runtime/plan.h): a plan cut before a node whose shapes need
// values computed in the run, continuation stages planned per distinct value, reused while values
// repeat, with bound outputs, lent arenas and clear errors.
#define BOOST_TEST_MODULE run_time_shapes
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "core/runtime/executor.h"
#include "core/runtime/factory.h"
#include "tests/runtime/runtime_graphs.h"

using namespace weave;

namespace {

std::shared_ptr<const Factory> make_factory() {
  auto f = Factory::create(test::run_time_shape_graph());
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  return *f;
}

Executor make_executor(ExecutorOptions eo) {
  auto ex = Executor::create(make_factory(), std::move(eo));
  BOOST_TEST_REQUIRE(ex.ok());
  return std::move(*ex);
}

const std::vector<float> kX = {-1.f, 2.f, -3.f, 4.f, -5.f, 6.f};

// Runs with n and checks y = relu(x) as [n, 6/n] and z = 0..n-1.
void run_and_check(Executor& ex, int64_t n) {
  BOOST_TEST_REQUIRE(ex.set_input(0, ConstTensorView{kX.data(), DType::float32, Dims{6}}).ok());
  BOOST_TEST_REQUIRE(ex.set_input(1, ConstTensorView{&n, DType::int64, Dims{1}}).ok());
  auto st = ex.run();
  BOOST_TEST_REQUIRE(st.ok(), st.message());
  auto y = ex.output("y");
  auto z = ex.output("z");
  BOOST_TEST_REQUIRE(y.ok());
  BOOST_TEST_REQUIRE(z.ok());
  BOOST_TEST((y->dims == Dims{n, 6 / n}));
  for (int i = 0; i < 6; ++i) BOOST_TEST(y->as<float>()[i] == (kX[i] > 0 ? kX[i] : 0.f));
  BOOST_TEST((z->dims == Dims{n}));
  for (int64_t i = 0; i < n; ++i) BOOST_TEST(z->as<int64_t>()[i] == i);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_factory_plans_up_to_the_first_cut) {
  auto f = make_factory();
  auto plan = f->default_plan();
  BOOST_TEST_REQUIRE(plan != nullptr);
  BOOST_TEST(!plan->complete());
  BOOST_TEST(plan->cut_node == 1);       // Reshape
  BOOST_TEST(plan->steps.size() == 1u);  // Concat runs before it
  BOOST_TEST(plan->cut_reason.find("Reshape") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(values_computed_in_the_run_shape_the_rest_of_the_graph) {
  auto f = make_factory();
  auto ex = Executor::create(f);
  BOOST_TEST_REQUIRE(ex.ok());
  for (int64_t n : {2, 3, 1, 6, 2, 3}) run_and_check(*ex, n);
  BOOST_TEST(ex->stages() == 2u);  // Reshape's shape, then Range's limit
}

BOOST_AUTO_TEST_CASE(continuations_are_shared_by_the_executors_of_a_factory) {
  auto f = make_factory();
  auto a = Executor::create(f);
  auto b = Executor::create(f);
  BOOST_TEST_REQUIRE((a.ok() && b.ok()));
  run_and_check(*a, 3);
  run_and_check(*b, 3);
  const ShapePlan& head = *f->default_plan();
  std::lock_guard<std::mutex> lock(head.continuations_mutex);
  BOOST_TEST(head.continuations.size() == 1u);
}

BOOST_AUTO_TEST_CASE(output_dims_need_a_run_when_they_depend_on_run_time_values) {
  auto f = make_factory();
  auto ex = Executor::create(f);
  BOOST_TEST_REQUIRE(ex.ok());
  const int64_t n = 2;
  BOOST_TEST_REQUIRE(ex->set_input(0, ConstTensorView{kX.data(), DType::float32, Dims{6}}).ok());
  BOOST_TEST_REQUIRE(ex->set_input(1, ConstTensorView{&n, DType::int64, Dims{1}}).ok());
  auto d = ex->output_dims(0);
  BOOST_TEST_REQUIRE(!d.ok());
  BOOST_TEST(d.message().find("depends on values computed in the run") != std::string::npos, d.message());
  BOOST_TEST_REQUIRE(ex->run().ok());
  d = ex->output_dims(0);
  BOOST_TEST_REQUIRE(d.ok());
  BOOST_TEST((*d == Dims{2, 3}));
}

BOOST_AUTO_TEST_CASE(bound_outputs_of_later_stages_are_written_or_refused_by_their_dims) {
  auto f = make_factory();
  auto ex = Executor::create(f);
  BOOST_TEST_REQUIRE(ex.ok());
  std::vector<float> y(6, -7.f);
  std::vector<int64_t> z(3, -7);
  const int64_t n = 3;
  BOOST_TEST_REQUIRE(ex->set_input(0, ConstTensorView{kX.data(), DType::float32, Dims{6}}).ok());
  BOOST_TEST_REQUIRE(ex->set_input(1, ConstTensorView{&n, DType::int64, Dims{1}}).ok());
  BOOST_TEST_REQUIRE(ex->bind_output(0, TensorView{y.data(), DType::float32, Dims{3, 2}}).ok());
  BOOST_TEST_REQUIRE(ex->bind_output(1, TensorView{z.data(), DType::int64, Dims{3}}).ok());
  auto st = ex->run();
  BOOST_TEST_REQUIRE(st.ok(), st.message());
  for (int i = 0; i < 6; ++i) BOOST_TEST(y[i] == (kX[i] > 0 ? kX[i] : 0.f));
  for (int i = 0; i < 3; ++i) BOOST_TEST(z[i] == i);
  // y was written in place by its step; z, known once Range's limit was, is copied.
  BOOST_TEST(ex->stats().last_run.output_copies == 1u);
  BOOST_TEST(ex->output(0)->data == static_cast<const void*>(y.data()));
  // Other values make other dims: the run says which output no longer fits.
  const int64_t two = 2;
  BOOST_TEST_REQUIRE(ex->set_input(1, ConstTensorView{&two, DType::int64, Dims{1}}).ok());
  st = ex->run();
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(st.message().find("output 'y'") != std::string::npos, st.message());
  ex->unbind_all();
  run_and_check(*ex, 2);
}

BOOST_AUTO_TEST_CASE(a_lending_executor_runs_stages_too) {
  ExecutorOptions eo;
  eo.lend_arena = true;
  Executor ex = make_executor(eo);
  for (int64_t n : {3, 2, 3}) run_and_check(ex, n);
}

BOOST_AUTO_TEST_CASE(profiles_cover_every_stage) {
  ExecutorOptions eo;
  eo.profile = true;
  Executor ex = make_executor(eo);
  run_and_check(ex, 2);
  std::vector<std::string> ops;
  for (const auto& p : ex.profile()) ops.push_back(p.op);
  // Concat (stage 0), Reshape, Relu, Squeeze (stage 1); Range is computed while planning stage 2.
  BOOST_TEST((ops == std::vector<std::string>{"Concat", "Reshape", "Relu", "Squeeze"}));
}
