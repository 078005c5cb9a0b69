// The time evaluator (R11) on fake workloads with a fake clock, so every figure is exact, and
// the per-operator aggregation on a real executor.
#define BOOST_TEST_MODULE time_evaluator
#include <boost/test/unit_test.hpp>
#include <set>
#include <string>

#include "core/kernels/registry.h"
#include "core/runtime/factory.h"
#include "core/runtime/time_evaluator.h"
#include "tests/runtime/runtime_graphs.h"

using namespace weave;

BOOST_AUTO_TEST_CASE(median_of_odd_even_and_empty) {
  BOOST_TEST(median_of({3, 1, 2}) == 2.0);
  BOOST_TEST(median_of({4, 1, 3, 2}) == 2.5);
  BOOST_TEST(median_of({}) == 0.0);
}

BOOST_AUTO_TEST_CASE(fixed_number_gives_per_run_means_per_repeat) {
  double now = 0;
  // Run i of the workload takes 1 + (i % 3) ms: repeats of 3 runs always average 2 ms.
  int calls = 0;
  TimeEvaluator te;
  te.repeat = 4;
  te.number = 3;
  te.clock = [&] { return now; };
  auto r = te.measure([&]() -> Status {
    now += 1 + (calls++ % 3);
    return {};
  });
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(calls == 12);
  BOOST_TEST(r->number == 3);
  BOOST_TEST(r->calibration_rounds == 0);
  BOOST_TEST_REQUIRE(r->repeat_ms.size() == 4u);
  for (double ms : r->repeat_ms) BOOST_TEST(ms == 2.0);
  BOOST_TEST(r->median_ms == 2.0);
  BOOST_TEST(r->min_ms == 2.0);
}

BOOST_AUTO_TEST_CASE(number_grows_until_a_repeat_lasts_min_repeat_ms) {
  double now = 0;
  int calls = 0;
  TimeEvaluator te;
  te.repeat = 3;
  te.number = 1;
  te.min_repeat_ms = 10;
  te.clock = [&] { return now; };
  // 0.5 ms per run: one run is too short; 10 ms needs 20 runs; the evaluator aims 20% above.
  auto r = te.measure([&]() -> Status {
    now += 0.5;
    ++calls;
    return {};
  });
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->number == 24);
  BOOST_TEST(r->calibration_rounds == 1);
  BOOST_TEST(calls == 1 + 3 * 24);
  for (double ms : r->repeat_ms) BOOST_TEST(ms == 0.5);
  BOOST_TEST(r->repeat_ms.size() == 3u);
}

BOOST_AUTO_TEST_CASE(varying_repeats_report_median_min_max) {
  double now = 0;
  int calls = 0;
  const double per_run[] = {5, 1, 3, 4, 2};
  TimeEvaluator te;
  te.repeat = 5;
  te.number = 1;
  te.clock = [&] { return now; };
  auto r = te.measure([&]() -> Status {
    now += per_run[calls++];
    return {};
  });
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->median_ms == 3.0);
  BOOST_TEST(r->min_ms == 1.0);
  BOOST_TEST(r->max_ms == 5.0);
  BOOST_TEST(r->mean_ms == 3.0);
}

BOOST_AUTO_TEST_CASE(a_zero_time_workload_stops_at_max_number) {
  TimeEvaluator te;
  te.repeat = 2;
  te.min_repeat_ms = 1;
  te.max_number = 64;
  te.clock = [] { return 0.0; };
  int calls = 0;
  auto r = te.measure([&]() -> Status {
    ++calls;
    return {};
  });
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->number == 64);
}

BOOST_AUTO_TEST_CASE(failures_and_bad_settings_are_errors) {
  TimeEvaluator te;
  te.repeat = 3;
  int calls = 0;
  auto r = te.measure([&]() -> Status {
    if (++calls == 2) return make_error("workload broke");
    return {};
  });
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.message() == "workload broke");
  BOOST_TEST(calls == 2);
  te.repeat = 0;
  r = te.measure([] { return Status{}; });
  BOOST_TEST(r.message().find("repeat (0)") != std::string::npos);
  te.repeat = 1;
  te.min_repeat_ms = -1;
  r = te.measure([] { return Status{}; });
  BOOST_TEST(r.message().find("min_repeat_ms") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(profile_aggregator_sums_rows_by_node) {
  ProfileAggregator agg;
  std::vector<OpProfile> run1{{0, "Conv", "node 0 (Conv)", "a -> b", 3.0},
                              {1, "Relu", "node 1 (Relu)", "b -> b", 1.0}};
  std::vector<OpProfile> run2{{0, "Conv", "node 0 (Conv)", "a -> b", 5.0},
                              {1, "Relu", "node 1 (Relu)", "b -> b", 0.5}};
  agg.add(run1);
  agg.add(run2);
  auto ops = agg.operators();
  BOOST_TEST_REQUIRE(ops.size() == 2u);
  BOOST_TEST(ops[0].op == "Conv");
  BOOST_TEST(ops[0].calls == 2u);
  BOOST_TEST(ops[0].total_ms == 8.0);
  BOOST_TEST(ops[0].mean_ms() == 4.0);
  BOOST_TEST(ops[1].total_ms == 1.5);
  BOOST_TEST(agg.by_op().at("Relu") == 1.5);
  BOOST_TEST(agg.total_ms() == 9.5);
}

BOOST_AUTO_TEST_CASE(measuring_an_executor_aggregates_every_timed_run) {
  FactoryOptions o;
  o.plan_shapes["x"] = {1, 2, 6, 6};
  o.registry = &KernelRegistry::reference();  // the graph as built: no layout reorders
  auto f = Factory::create(weave::test::conv_graph(), o);
  BOOST_TEST_REQUIRE(f.ok());
  ExecutorOptions eo;
  eo.profile = true;
  auto ex = Executor::create(*f, eo);
  std::vector<float> x = weave::test::ramp(72);
  BOOST_TEST_REQUIRE(ex->set_input(0, ConstTensorView{x.data(), DType::float32, Dims{1, 2, 6, 6}}).ok());
  TimeEvaluator te;
  te.repeat = 3;
  te.number = 2;
  const uint64_t runs_before = ex->stats().runs;
  auto r = te.measure(*ex);
  BOOST_TEST_REQUIRE(r.ok(), (r.ok() ? "" : r.message()));
  BOOST_TEST(r->repeat_ms.size() == 3u);
  // One calibration repeat (untimed rows) plus 3 x 2 timed runs.
  BOOST_TEST(ex->stats().runs - runs_before == 8u);
  BOOST_TEST_REQUIRE(r->operators.size() == 3u);  // Conv, Relu, Add (Shape is folded)
  for (const auto& op : r->operators) BOOST_TEST(op.calls == 6u);
  // Slowest first. Which op is slowest on a 6x6 map is the machine's business (the Add has beaten
  // the Conv on a busy one), so only the order and the ops are checked.
  std::set<std::string> ops;
  for (std::size_t i = 0; i < r->operators.size(); ++i) {
    ops.insert(r->operators[i].op);
    if (i > 0) BOOST_TEST(r->operators[i - 1].total_ms >= r->operators[i].total_ms);
  }
  BOOST_TEST((ops == std::set<std::string>{"Add", "Conv", "Relu"}));
  BOOST_TEST(r->min_ms > 0.0);
}
