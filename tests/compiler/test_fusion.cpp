// The fusion passes (fold_conv_affine, fuse_hardswish, fuse_conv_epilogue) on hand-built graphs:
// each fused graph must compute what the unfused one computes (both run through a Factory on
// the same random input) with the expected nodes left, and each pass must leave alone what it
// may not fuse (a second consumer, a graph output in the middle, a broadcasting residual).
#define BOOST_TEST_MODULE fusion
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <random>

#include "core/compiler/compile.h"
#include "core/runtime/executor.h"
#include "core/runtime/factory.h"
#include "tests/compiler/graph_build.h"

using namespace weave;
using namespace weave::test;

namespace {

// Runs `g` (compiled with or without fusion) on one float input of dims `dims`.
std::vector<float> run(const Graph& g, bool fuse, const Dims& dims, const std::vector<float>& x,
                       Graph* compiled_out = nullptr) {
  CompileOptions opt;
  opt.fuse = fuse;
  auto c = compile_graph(g, opt);
  BOOST_REQUIRE_MESSAGE(c, (c ? "" : c.message()));
  if (compiled_out) *compiled_out = *c;
  auto f = Factory::create(std::move(*c));
  BOOST_REQUIRE_MESSAGE(f, (f ? "" : f.message()));
  auto ex = Executor::create(*f);
  BOOST_REQUIRE(ex);
  ConstTensorView in{x.data(), DType::float32, dims};
  auto outs = ex->run(std::span<const ConstTensorView>(&in, 1));
  BOOST_REQUIRE_MESSAGE(outs, (outs ? "" : outs.message()));
  const Tensor& o = (*outs)[0];
  const float* p = o.view().as<float>();
  return std::vector<float>(p, p + o.view().numel());
}

// Fused and unfused results agree; returns the fused graph for node checks.
Graph check_same(const Graph& g, const Dims& dims) {
  const auto x = random_floats(static_cast<std::size_t>(dims.numel()), 7);
  Graph fused;
  const auto a = run(g, false, dims, x);
  const auto b = run(g, true, dims, x, &fused);
  BOOST_REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) BOOST_TEST(a[i] == b[i], boost::test_tools::tolerance(1e-5f));
  return fused;
}

Graph conv_graph(int32_t& x, int32_t& conv, int c = 3, int m = 4, int k = 3) {
  Graph g;
  x = add_input(g, "x", {1, c, 5, 5});
  const int32_t w = add_f32(g, {m, c, k, k}, random_floats(static_cast<std::size_t>(m * c * k * k), 1));
  const int32_t b = add_f32(g, {m}, random_floats(static_cast<std::size_t>(m), 2));
  Attributes a;
  a.set("pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
  conv = add_node(g, "Conv", {x, w, b}, 1, a);
  g.values[conv].shape = {1, m, 5, 5};
  return g;
}

int32_t scalar(Graph& g, float v) {
  return add_f32(g, {}, {v});
}

}  // namespace

BOOST_AUTO_TEST_CASE(affine_after_conv_folds_into_weights) {
  int32_t x, c;
  Graph g = conv_graph(x, c);
  const int32_t s = add_f32(g, {4, 1, 1}, {0.5f, -2.f, 3.f, 1.25f});
  const int32_t m = add_node(g, "Mul", {s, c});
  const int32_t a = add_node(g, "Add", {m, scalar(g, 0.75f)});
  const int32_t d = add_node(g, "Div", {a, scalar(g, 4.f)});
  const int32_t y = add_node(g, "Sub", {d, add_f32(g, {1, 4, 1, 1}, {1.f, 2.f, 3.f, 4.f})});
  set_output(g, y, "y");
  Graph f = check_same(g, Dims{1, 3, 5, 5});
  BOOST_TEST(f.nodes.size() == 1u);
  BOOST_TEST(f.nodes[0].op == "Conv");
}

BOOST_AUTO_TEST_CASE(affine_not_folded_when_broadcast_is_spatial_or_conv_shared) {
  int32_t x, c;
  Graph g = conv_graph(x, c);
  // [5] broadcasts along the width: not per channel.
  const int32_t y = add_node(g, "Mul", {c, add_f32(g, {5}, {1.f, 2.f, 3.f, 4.f, 5.f})});
  set_output(g, y, "y");
  set_output(g, add_node(g, "Add", {c, scalar(g, 1.f)}), "z");  // second consumer of c
  Graph f = check_same(g, Dims{1, 3, 5, 5});
  BOOST_TEST(count_op(f, "Mul") == 1);
  BOOST_TEST(count_op(f, "Add") == 1);
}

BOOST_AUTO_TEST_CASE(hardswish_patterns_become_one_node) {
  for (int form = 0; form < 3; ++form) {
    Graph g;
    const int32_t x = add_input(g, "x", {2, 8});
    int32_t y;
    if (form == 2) {
      Attributes a;
      a.set("alpha", 1.f / 6.f);
      a.set("beta", 0.5f);
      y = add_node(g, "Mul", {x, add_node(g, "HardSigmoid", {x}, 1, a)});
    } else {
      const int32_t p3 = add_node(g, "Add", {scalar(g, 3.f), x});
      const int32_t r6 = add_node(g, "Clip", {p3, scalar(g, 0.f), scalar(g, 6.f)});
      y = form == 0 ? add_node(g, "Div", {add_node(g, "Mul", {r6, x}), scalar(g, 6.f)})
                    : add_node(g, "Mul", {x, add_node(g, "Div", {r6, scalar(g, 6.f)})});
    }
    set_output(g, y, "y");
    Graph f = check_same(g, Dims{2, 8});
    BOOST_TEST(f.nodes.size() == 1u, "form " << form);
    BOOST_TEST(f.nodes[0].op == "HardSwish", "form " << form);
  }
}

BOOST_AUTO_TEST_CASE(hardswish_kept_when_intermediate_is_an_output) {
  Graph g;
  const int32_t x = add_input(g, "x", {2, 8});
  const int32_t p3 = add_node(g, "Add", {x, scalar(g, 3.f)});
  const int32_t r6 = add_node(g, "Clip", {p3, scalar(g, 0.f), scalar(g, 6.f)});
  set_output(g, add_node(g, "Div", {add_node(g, "Mul", {x, r6}), scalar(g, 6.f)}), "y");
  set_output(g, r6, "relu6");
  Graph f = check_same(g, Dims{2, 8});
  BOOST_TEST(count_op(f, "HardSwish") == 0);
}

BOOST_AUTO_TEST_CASE(residual_activation_and_post_affine_join_the_conv) {
  int32_t x, c;
  Graph g = conv_graph(x, c, 4, 4);
  const int32_t r = add_node(g, "Relu", {x});  // the residual: same shape as the conv output
  g.values[r].shape = {1, 4, 5, 5};
  const int32_t a = add_node(g, "Add", {r, c});
  const int32_t act = add_node(g, "Clip", {a, scalar(g, 0.f), scalar(g, 6.f)});
  const int32_t y = add_node(g, "Add", {add_node(g, "Mul", {act, scalar(g, 0.5f)}), scalar(g, -1.f)});
  set_output(g, y, "y");
  Graph f = check_same(g, Dims{1, 4, 5, 5});
  BOOST_REQUIRE(f.nodes.size() == 2u);
  const Node& conv = f.nodes[1];
  BOOST_TEST(conv.op == "Conv");
  BOOST_TEST(conv.inputs.size() == 4u);
  BOOST_TEST(conv.attrs.get_string("activation") == "Clip");
  BOOST_TEST(conv.attrs.get_float("activation_post_mul", 0.f) == 0.5f);
  BOOST_TEST(conv.attrs.get_float("activation_post_add", 0.f) == -1.f);
}

BOOST_AUTO_TEST_CASE(every_activation_fuses) {
  for (const char* op : {"Relu", "LeakyRelu", "HardSwish", "Sigmoid", "HardSigmoid", "Tanh"}) {
    int32_t x, c;
    Graph g = conv_graph(x, c);
    set_output(g, add_node(g, op, {c}), "y");
    Graph f = check_same(g, Dims{1, 3, 5, 5});
    BOOST_TEST(f.nodes.size() == 1u, op);
    BOOST_TEST(f.nodes[0].attrs.get_string("activation") == op);
  }
}

BOOST_AUTO_TEST_CASE(broadcasting_add_is_no_residual) {
  int32_t x, c;
  Graph g = conv_graph(x, c);
  const int32_t v = add_node(g, "ReduceMean", {x});  // [1, 1, 1, 1]: broadcasts
  g.values[v].shape = {1, 1, 1, 1};
  set_output(g, add_node(g, "Add", {c, v}), "y");
  Graph f = check_same(g, Dims{1, 3, 5, 5});
  BOOST_TEST(count_op(f, "Add") == 1);
}
