// The planner runs elementwise steps in place (core/runtime/plan.cpp): an output takes the arena
// memory of an input of its dims that dies at that step; never of a model input, a param, an
// input still read later, or one broadcast to the output, also when a smaller shape reuses the
// layout of the max_shapes bound. A Reshape (which only relabels dims) takes the memory of an
// input of as many elements.
#define BOOST_TEST_MODULE in_place
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <vector>

#include "core/kernels/registry.h"
#include "core/runtime/executor.h"
#include "core/runtime/factory.h"
#include "tests/runtime/runtime_graphs.h"

using namespace weave;

namespace {

int32_t fvalue(Graph& g) {
  Value v;
  v.dtype = DType::float32;
  return g.add_value(v);
}

Node node(const char* op, std::vector<int32_t> in, int32_t out) {
  Node n;
  n.op = op;
  n.inputs = std::move(in);
  n.outputs = {out};
  return n;
}

// x[?,4], y[?,4] (batch dims independent):
//   rx = Relu(x); ry = Sigmoid(y); s = Add(rx, ry); t = Mul(s, rx2) where rx2 = Neg(x) is read
//   after s too; out = Relu(t)
// rx dies at the Add (its memory may become s unless broadcast), s at the Mul (may become t),
// t at the last Relu (becomes out). x and y are model inputs: never overwritten.
Graph chain_graph() {
  Graph g;
  Value in;
  in.kind = ValueKind::input;
  in.dtype = DType::float32;
  in.shape = {kDynamic, 4};
  const int32_t x = g.add_value(in), y = g.add_value(in);
  g.inputs = {x, y};
  g.input_infos = {TensorInfo{"x", DType::float32, {kDynamic, 4}, {"n", ""}},
                   TensorInfo{"y", DType::float32, {kDynamic, 4}, {"m", ""}}};
  const int32_t rx = fvalue(g), ry = fvalue(g), s = fvalue(g), nx = fvalue(g), t = fvalue(g), out = fvalue(g);
  g.nodes = {node("Relu", {x}, rx),    node("Sigmoid", {y}, ry), node("Neg", {x}, nx),
             node("Add", {rx, ry}, s), node("Mul", {s, nx}, t),  node("Relu", {t}, out)};
  g.outputs = {out};
  g.output_infos = {TensorInfo{"out", DType::float32, {kDynamic, 4}, {}}};
  return g;
}

std::vector<float> reference(const std::vector<float>& x, int64_t n, const std::vector<float>& y, int64_t m) {
  const int64_t rows = std::max(n, m);
  std::vector<float> out(static_cast<std::size_t>(rows * 4));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < 4; ++c) {
      const float xv = x[static_cast<std::size_t>((n == 1 ? 0 : r) * 4 + c)];
      const float yv = y[static_cast<std::size_t>((m == 1 ? 0 : r) * 4 + c)];
      const float s = std::max(xv, 0.f) + 1.f / (1.f + std::exp(-yv));
      out[static_cast<std::size_t>(r * 4 + c)] = std::max(s * -xv, 0.f);
    }
  return out;
}

bool close(const std::vector<float>& a, const float* b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::fabs(a[i] - b[i]) > 1e-5f) return false;
  return true;
}

struct Ids {
  int32_t x = 0, y = 1, rx = 2, ry = 3, s = 4, nx = 5, t = 6, out = 7;
};

}  // namespace

BOOST_AUTO_TEST_CASE(elementwise_chains_share_memory_but_model_inputs_never_do) {
  auto f = Factory::create(chain_graph());
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  auto plan = (*f)->plan_for(std::vector<Dims>{Dims{3, 4}, Dims{3, 4}});
  BOOST_TEST_REQUIRE(plan.ok(), (plan.ok() ? "" : plan.message()));
  const ShapePlan& p = **plan;
  const Ids v;
  BOOST_TEST(p.in_place[v.rx] == kNoValue);  // its input x is a model input
  BOOST_TEST(p.in_place[v.nx] == kNoValue);
  // Add's rx dies there: s takes it (the first eligible input); Mul's s too; the last Relu's t.
  BOOST_TEST(p.in_place[v.s] == v.rx);
  BOOST_TEST(p.in_place[v.t] == v.s);
  BOOST_TEST(p.in_place[v.out] == v.t);
  BOOST_TEST(p.slots[v.out].offset == p.slots[v.rx].offset);
  // nx is still read by the Mul, so it has memory of its own, apart from the chain.
  BOOST_TEST(p.slots[v.nx].offset != p.slots[v.rx].offset);

  auto ex = Executor::create(*f);
  BOOST_TEST_REQUIRE(ex.ok());
  const auto x = weave::test::ramp(12, 0.3f), y = weave::test::ramp(12, -0.2f);
  for (int round = 0; round < 2; ++round) {  // the inputs stay set: run again without setting them
    if (round == 0) {
      BOOST_TEST_REQUIRE(ex->set_input(0, ConstTensorView{x.data(), DType::float32, Dims{3, 4}}).ok());
      BOOST_TEST_REQUIRE(ex->set_input(1, ConstTensorView{y.data(), DType::float32, Dims{3, 4}}).ok());
    }
    BOOST_TEST_REQUIRE(ex->run().ok());
    BOOST_TEST_CONTEXT("round " << round) {
      BOOST_TEST(close(reference(x, 3, y, 3), ex->output(0)->as<float>()));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_broadcast_input_is_not_overwritten) {
  auto f = Factory::create(chain_graph());
  BOOST_TEST_REQUIRE(f.ok());
  auto plan = (*f)->plan_for(std::vector<Dims>{Dims{1, 4}, Dims{3, 4}});
  BOOST_TEST_REQUIRE(plan.ok());
  const Ids v;
  // rx is 1x4, broadcast to s's 3x4; ry (3x4) dies at the Add too and is taken instead.
  BOOST_TEST((*plan)->in_place[v.s] == v.ry);
  // The Mul's s has t's dims: in place; nx (1x4) is not.
  BOOST_TEST((*plan)->in_place[v.t] == v.s);
}

BOOST_AUTO_TEST_CASE(a_smaller_shape_does_not_reuse_an_in_place_layout_that_no_longer_fits) {
  FactoryOptions o;
  o.max_shapes["x"] = {3, 4};
  o.max_shapes["y"] = {3, 4};
  auto f = Factory::create(chain_graph(), o);
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  const Ids v;
  BOOST_TEST_REQUIRE((*f)->bound_plan() != nullptr);
  BOOST_TEST((*f)->bound_plan()->in_place[v.s] == v.rx);
  // x of one row: rx is broadcast at the Add, so the bound's rx -> s pair is wrong here.
  auto small = (*f)->plan_for(std::vector<Dims>{Dims{1, 4}, Dims{3, 4}});
  BOOST_TEST_REQUIRE(small.ok());
  BOOST_TEST(!(*small)->layout_from_bound);
  BOOST_TEST((*small)->in_place[v.s] != v.rx);
  // Same dims on both sides, just fewer rows: the bound's layout and its pairs are kept.
  auto fewer = (*f)->plan_for(std::vector<Dims>{Dims{2, 4}, Dims{2, 4}});
  BOOST_TEST_REQUIRE(fewer.ok());
  BOOST_TEST((*fewer)->layout_from_bound);

  auto ex = Executor::create(*f);
  BOOST_TEST_REQUIRE(ex.ok());
  const auto x = weave::test::ramp(12, 0.3f), y = weave::test::ramp(12, -0.2f);
  struct Case {
    int64_t n, m;
  };
  for (const Case c : {Case{3, 3}, Case{1, 3}, Case{2, 2}, Case{3, 1}, Case{3, 3}}) {
    BOOST_TEST_CONTEXT("x " << c.n << "x4, y " << c.m << "x4") {
      BOOST_TEST_REQUIRE(ex->set_input(0, ConstTensorView{x.data(), DType::float32, Dims{c.n, 4}}).ok());
      BOOST_TEST_REQUIRE(ex->set_input(1, ConstTensorView{y.data(), DType::float32, Dims{c.m, 4}}).ok());
      BOOST_TEST_REQUIRE(ex->run().ok());
      BOOST_TEST(close(reference(x, c.n, y, c.m), ex->output(0)->as<float>()));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_value_read_by_a_later_step_or_a_model_output_keeps_its_memory) {
  // conv_graph: Conv -> c -> Relu -> r (a model output, and read by the Add) -> Add -> y, as
  // built (the reference kernels: no layout reorders between the steps).
  FactoryOptions o;
  o.registry = &KernelRegistry::reference();
  auto f = Factory::create(weave::test::conv_graph(), o);
  BOOST_TEST_REQUIRE(f.ok());
  auto plan = (*f)->plan_for(std::vector<Dims>{Dims{1, 2, 4, 4}});
  BOOST_TEST_REQUIRE(plan.ok());
  const ShapePlan& p = **plan;
  const int32_t c = p.steps[0].outputs[0], r = p.steps[1].outputs[0], y = p.steps[2].outputs[0];
  BOOST_TEST(p.in_place[r] == c);         // Relu over the conv output, which dies there
  BOOST_TEST(p.in_place[y] == kNoValue);  // r is an output: the Add must not overwrite it
  BOOST_TEST(p.slots[y].offset != p.slots[r].offset);
}

namespace {

// x[?,6] -> Relu -> rx -> Reshape [-1,2,3] -> s -> Neg -> t (a model output); y[?,6] ->
// Reshape [-1,3,2] -> u (a model output). rx dies at its Reshape, which only relabels dims: s
// takes rx's memory and the copy moves nothing; y is a model input, so u has memory of its own.
Graph reshape_graph() {
  Graph g;
  Value in;
  in.kind = ValueKind::input;
  in.dtype = DType::float32;
  in.shape = {kDynamic, 6};
  const int32_t x = g.add_value(in), y = g.add_value(in);
  g.inputs = {x, y};
  g.input_infos = {TensorInfo{"x", DType::float32, {kDynamic, 6}, {"n", ""}},
                   TensorInfo{"y", DType::float32, {kDynamic, 6}, {"m", ""}}};
  auto shape = [&](std::vector<int64_t> v) {
    return g.add_param(DType::int64, Shape{3},
                       SharedBytes::copy_of(std::as_bytes(std::span<const int64_t>(v))));
  };
  const int32_t s23 = shape({-1, 2, 3}), s32 = shape({-1, 3, 2});
  const int32_t rx = fvalue(g), s = fvalue(g), t = fvalue(g), u = fvalue(g);
  g.nodes = {node("Relu", {x}, rx), node("Reshape", {rx, s23}, s), node("Neg", {s}, t),
             node("Reshape", {y, s32}, u)};
  g.outputs = {t, u};
  g.output_infos = {TensorInfo{"t", DType::float32, {kDynamic, 2, 3}, {}},
                    TensorInfo{"u", DType::float32, {kDynamic, 3, 2}, {}}};
  return g;
}

void check_reshape_run(Executor& ex, int64_t n) {
  const auto x = weave::test::ramp(static_cast<std::size_t>(n * 6), -0.7f);
  const auto y = weave::test::ramp(static_cast<std::size_t>(n * 6), 0.4f);
  BOOST_TEST_REQUIRE(ex.set_input(0, ConstTensorView{x.data(), DType::float32, Dims{n, 6}}).ok());
  BOOST_TEST_REQUIRE(ex.set_input(1, ConstTensorView{y.data(), DType::float32, Dims{n, 6}}).ok());
  BOOST_TEST_REQUIRE(ex.run().ok());
  BOOST_TEST((ex.output(0)->dims == Dims{n, 2, 3}));
  BOOST_TEST((ex.output(1)->dims == Dims{n, 3, 2}));
  bool ok = true;
  for (std::size_t i = 0; i < x.size(); ++i) {
    ok = ok && ex.output(0)->as<float>()[i] == -std::max(x[i], 0.f);
    ok = ok && ex.output(1)->as<float>()[i] == y[i];
  }
  BOOST_TEST(ok, n << " rows");
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_reshape_takes_the_memory_of_an_input_that_dies_there) {
  auto f = Factory::create(reshape_graph());
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  auto plan = (*f)->plan_for(std::vector<Dims>{Dims{4, 6}, Dims{4, 6}});
  BOOST_TEST_REQUIRE(plan.ok(), (plan.ok() ? "" : plan.message()));
  const ShapePlan& p = **plan;
  const int32_t rx = p.steps[0].outputs[0];
  const int32_t s = p.steps[1].outputs[0];
  const int32_t u = p.steps[3].outputs[0];
  BOOST_TEST(p.in_place[s] == rx);  // other dims, as many elements: relabelled in place
  BOOST_TEST(p.slots[s].offset == p.slots[rx].offset);
  BOOST_TEST(p.in_place[u] == kNoValue);  // y is a model input
  auto ex = Executor::create(*f);
  BOOST_TEST_REQUIRE(ex.ok());
  for (int64_t n : {4, 1, 4}) check_reshape_run(*ex, n);
}

BOOST_AUTO_TEST_CASE(a_reshape_in_place_keeps_the_bound_layout_for_fewer_rows) {
  FactoryOptions o;
  o.max_shapes["x"] = {5, 6};
  o.max_shapes["y"] = {5, 6};
  auto f = Factory::create(reshape_graph(), o);
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  BOOST_TEST_REQUIRE((*f)->bound_plan() != nullptr);
  const ShapePlan& b = *(*f)->bound_plan();
  BOOST_TEST(b.in_place[b.steps[1].outputs[0]] == b.steps[0].outputs[0]);
  auto fewer = (*f)->plan_for(std::vector<Dims>{Dims{2, 6}, Dims{3, 6}});
  BOOST_TEST_REQUIRE(fewer.ok());
  BOOST_TEST((*fewer)->layout_from_bound);
  auto ex = Executor::create(*f);
  BOOST_TEST_REQUIRE(ex.ok());
  for (int64_t n : {5, 2, 1, 5}) check_reshape_run(*ex, n);
}
