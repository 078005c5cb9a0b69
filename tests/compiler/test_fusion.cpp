// The fusion passes (fold_conv_affine, trim_conv_taps, fuse_hardswish, fuse_activations,
// fuse_layer_norm, fuse_conv_epilogue, split_conv_outputs) on hand-built graphs:
// each fused graph must compute what the unfused one computes (both run through a Factory on
// the same random input) with the expected nodes left, and each pass must leave alone what it
// may not fuse (a second consumer, a graph output in the middle, a broadcasting residual).
#define BOOST_TEST_MODULE fusion
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "core/compiler/compile.h"
#include "core/compiler/layout_nhwc.h"
#include "core/runtime/executor.h"
#include "core/runtime/factory.h"
#include "tests/compiler/graph_build.h"
#include "tests/kernels/fused_graph.h"

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
  // Within 1e-5 of 1 + |a|: the fused kernels round differently (a float row sum, a vector exp),
  // a wrong fusion is off by O(1).
  for (std::size_t i = 0; i < a.size(); ++i)
    BOOST_TEST(std::fabs(a[i] - b[i]) <= 1e-5f * (1.f + std::fabs(a[i])),
               "element " << i << ": " << a[i] << " vs " << b[i]);
  return fused;
}

// The compiled graph through the fast registry (the layout pass, channels-last kernels) against
// the reference registry (NCHW throughout), 1 and 2 threads; returns the fast Factory's graph.
Graph check_layout(const Graph& g, const Dims& dims) {
  auto c = compile_graph(g, CompileOptions{});
  BOOST_REQUIRE_MESSAGE(c, (c ? "" : c.message()));
  const auto x = random_floats(static_cast<std::size_t>(dims.numel()), 8);
  const auto ref = run_fused_graph(*c, &KernelRegistry::reference(), 1, dims, x);
  for (int threads : {1, 2}) {
    const auto fast = run_fused_graph(*c, &KernelRegistry::global(), threads, dims, x);
    BOOST_REQUIRE(fast.size() == ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i)
      BOOST_TEST(std::fabs(fast[i] - ref[i]) <= 1e-4f * (1.f + std::fabs(ref[i])),
                 "element " << i << ": " << fast[i] << " vs " << ref[i]);
  }
  FactoryOptions fo;
  fo.registry = &KernelRegistry::global();
  auto f = Factory::create(*c, fo);
  BOOST_REQUIRE_MESSAGE(f, (f ? "" : f.message()));
  return (*f)->graph();
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

// An inference BatchNormalization of `in` ([1, c, h, w]) with random params (seeds seed ..
// seed + 3; the variance kept positive); its output has `in`'s shape.
int32_t add_batch_norm(Graph& g, int32_t in, int64_t c, unsigned seed) {
  const auto n = static_cast<std::size_t>(c);
  std::vector<float> var = random_floats(n, seed + 3);
  for (float& v : var) v = std::fabs(v) + 0.1f;
  const int32_t bn =
      add_node(g, "BatchNormalization",
               {in, add_f32(g, {c}, random_floats(n, seed)), add_f32(g, {c}, random_floats(n, seed + 1)),
                add_f32(g, {c}, random_floats(n, seed + 2)), add_f32(g, {c}, var)});
  g.values[bn].shape = g.values[in].shape;
  return bn;
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

BOOST_AUTO_TEST_CASE(swish_becomes_one_node_and_joins_the_conv) {
  for (int order = 0; order < 2; ++order) {
    int32_t x, c;
    Graph g = conv_graph(x, c);
    const int32_t s = add_node(g, "Sigmoid", {c});
    set_output(g, add_node(g, "Mul", order == 0 ? std::vector<int32_t>{c, s} : std::vector<int32_t>{s, c}),
               "y");
    Graph f = check_same(g, Dims{1, 3, 5, 5});
    BOOST_TEST(f.nodes.size() == 1u, "order " << order);
    BOOST_TEST(f.nodes[0].attrs.get_string("activation") == "Swish", "order " << order);
  }
  // Without a conv before it: one Swish node.
  Graph g;
  const int32_t x = add_input(g, "x", {3, 17});
  set_output(g, add_node(g, "Mul", {x, add_node(g, "Sigmoid", {x})}), "y");
  Graph f = check_same(g, Dims{3, 17});
  BOOST_TEST(f.nodes.size() == 1u);
  BOOST_TEST(f.nodes[0].op == "Swish");
}

BOOST_AUTO_TEST_CASE(swish_kept_when_the_sigmoid_is_used_elsewhere) {
  Graph g;
  const int32_t x = add_input(g, "x", {3, 17});
  const int32_t s = add_node(g, "Sigmoid", {x});
  set_output(g, add_node(g, "Mul", {x, s}), "y");
  set_output(g, s, "gate");
  Graph f = check_same(g, Dims{3, 17});
  BOOST_TEST(count_op(f, "Swish") == 0);
  // x * Sigmoid(z) of another z is a gate (squeeze-excitation), no Swish.
  Graph h;
  const int32_t a = add_input(h, "a", {3, 17});
  const int32_t z = add_node(h, "Neg", {a});
  set_output(h, add_node(h, "Mul", {a, add_node(h, "Sigmoid", {z})}), "y");
  BOOST_TEST(count_op(check_same(h, Dims{3, 17}), "Swish") == 0);
}

BOOST_AUTO_TEST_CASE(gelu_forms_become_one_node) {
  // grouping: 0 = (x * bracket) * 0.5, 1 = x * (bracket * 0.5), 2 = (x * 0.5) * bracket;
  // scaled: x / sqrt 2 or x * (1 / sqrt 2); tanh: the tanh approximation (x^3 as Pow or Muls).
  for (int tanh_form = 0; tanh_form < 3; ++tanh_form)
    for (int grouping = 0; grouping < 3; ++grouping) {
      Graph g;
      const int32_t x = add_input(g, "x", {4, 33});
      int32_t inner;
      if (tanh_form == 0) {
        inner = grouping == 1 ? add_node(g, "Mul", {x, scalar(g, 0.70710678f)})
                              : add_node(g, "Div", {x, scalar(g, 1.41421356f)});
        inner = add_node(g, "Erf", {inner});
      } else {
        const int32_t cube = tanh_form == 1 ? add_node(g, "Pow", {x, scalar(g, 3.f)})
                                            : add_node(g, "Mul", {x, add_node(g, "Mul", {x, x})});
        const int32_t sum = add_node(g, "Add", {x, add_node(g, "Mul", {scalar(g, 0.044715f), cube})});
        inner = add_node(g, "Tanh", {add_node(g, "Mul", {scalar(g, 0.7978845608f), sum})});
      }
      const int32_t bracket = add_node(g, "Add", {inner, scalar(g, 1.f)});
      int32_t y;
      if (grouping == 0)
        y = add_node(g, "Mul", {add_node(g, "Mul", {x, bracket}), scalar(g, 0.5f)});
      else if (grouping == 1)
        y = add_node(g, "Mul", {x, add_node(g, "Mul", {bracket, scalar(g, 0.5f)})});
      else
        y = add_node(g, "Mul", {add_node(g, "Mul", {x, scalar(g, 0.5f)}), bracket});
      set_output(g, y, "y");
      Graph f = check_same(g, Dims{4, 33});
      const std::string what =
          "tanh form " + std::to_string(tanh_form) + " grouping " + std::to_string(grouping);
      BOOST_TEST_REQUIRE(f.nodes.size() == 1u, what);
      BOOST_TEST(f.nodes[0].op == "Gelu", what);
      BOOST_TEST(f.nodes[0].attrs.get_string("approximate", "none") == (tanh_form ? "tanh" : "none"), what);
    }
}

BOOST_AUTO_TEST_CASE(gelu_kept_when_a_constant_is_off) {
  Graph g;
  const int32_t x = add_input(g, "x", {4, 33});
  const int32_t e = add_node(g, "Erf", {add_node(g, "Div", {x, scalar(g, 1.5f)})});  // not sqrt 2
  const int32_t b = add_node(g, "Add", {e, scalar(g, 1.f)});
  set_output(g, add_node(g, "Mul", {add_node(g, "Mul", {x, b}), scalar(g, 0.5f)}), "y");
  BOOST_TEST(count_op(check_same(g, Dims{4, 33}), "Gelu") == 0);
}

namespace {

// ReduceMean over the last `axes` axes (as an attribute, or opset 18's input).
int32_t mean_last(Graph& g, int32_t v, int axes, int rank, bool as_input) {
  std::vector<int64_t> a;
  for (int i = rank - axes; i < rank; ++i) a.push_back(i == rank - 1 ? -1 : i);
  if (as_input) {
    const int32_t t = g.add_param(DType::int64, Shape{static_cast<int64_t>(a.size())},
                                  SharedBytes::copy_of(std::as_bytes(std::span<const int64_t>(a))));
    return add_node(g, "ReduceMean", {v, t});
  }
  Attributes at;
  at.set("axes", a);
  return add_node(g, "ReduceMean", {v}, 1, at);
}

// Layer normalization as exporters write it, over x [2, 5, 24] (the last `axes` axes), with
// form 0 = alone, 1 = * scale, 2 = * scale + bias; `square` 0 = Pow(d, 2), 1 = d * d.
Graph layer_norm_graph(int form, int axes, int square, bool axes_input, Shape scale_shape = {}) {
  Graph g;
  const int32_t x = add_input(g, "x", {2, 5, 24});
  const int32_t d = add_node(g, "Sub", {x, mean_last(g, x, axes, 3, axes_input)});
  const int32_t sq = square == 0 ? add_node(g, "Pow", {d, scalar(g, 2.f)}) : add_node(g, "Mul", {d, d});
  const int32_t var = mean_last(g, sq, axes, 3, axes_input);
  const int32_t sd = add_node(g, "Sqrt", {add_node(g, "Add", {var, scalar(g, 1e-5f)})});
  int32_t y = add_node(g, "Div", {d, sd});
  if (scale_shape.empty()) scale_shape = axes == 1 ? Shape{24} : Shape{5, 24};
  const auto n = static_cast<std::size_t>(shape_numel(scale_shape));
  if (form >= 1) y = add_node(g, "Mul", {add_f32(g, scale_shape, random_floats(n, 3)), y});
  if (form >= 2) y = add_node(g, "Add", {y, add_f32(g, scale_shape, random_floats(n, 4))});
  set_output(g, y, "y");
  return g;
}

}  // namespace

BOOST_AUTO_TEST_CASE(layer_norm_forms_become_one_node) {
  for (int form = 0; form < 3; ++form)
    for (int axes = 1; axes <= 2; ++axes)
      for (int square = 0; square < 2; ++square) {
        const bool axes_input = (form + square) % 2 == 1;
        Graph f = check_same(layer_norm_graph(form, axes, square, axes_input), Dims{2, 5, 24});
        const std::string what = "form " + std::to_string(form) + " axes " + std::to_string(axes) +
                                 " square " + std::to_string(square);
        BOOST_TEST_REQUIRE(f.nodes.size() == 1u, what);
        BOOST_TEST(f.nodes[0].op == "LayerNormalization", what);
        BOOST_TEST(f.nodes[0].attrs.get_int("axis", 0) == 3 - axes, what);
        BOOST_TEST(f.nodes[0].inputs.size() == (form == 2 ? 3u : 2u), what);
      }
  // A scale of [1, 1, 24] (leading ones) reads as the row's 24 values.
  Graph f = check_same(layer_norm_graph(2, 1, 0, false, Shape{1, 1, 24}), Dims{2, 5, 24});
  BOOST_TEST(count_op(f, "LayerNormalization") == 1);
}

BOOST_AUTO_TEST_CASE(layer_norm_kept_when_not_a_row_norm) {
  // A scale that varies along a non-normalized axis ([5, 1] against rows of 24): the Mul stays.
  Graph f = check_same(layer_norm_graph(1, 1, 0, false, Shape{5, 1}), Dims{2, 5, 24});
  BOOST_TEST(count_op(f, "Mul") == 1);
  BOOST_TEST(count_op(f, "LayerNormalization") == 1);  // the normalization alone still fuses
  // Means over a middle axis: no fusion at all.
  Graph g;
  const int32_t x = add_input(g, "x", {2, 5, 24});
  Attributes mid;
  mid.set("axes", std::vector<int64_t>{1});
  const int32_t d = add_node(g, "Sub", {x, add_node(g, "ReduceMean", {x}, 1, mid)});
  const int32_t var = add_node(g, "ReduceMean", {add_node(g, "Pow", {d, scalar(g, 2.f)})}, 1, mid);
  set_output(g, add_node(g, "Div", {d, add_node(g, "Sqrt", {add_node(g, "Add", {var, scalar(g, 1e-5f)})})}),
             "y");
  BOOST_TEST(count_op(check_same(g, Dims{2, 5, 24}), "LayerNormalization") == 0);
  // The centred value also read elsewhere: no fusion.
  Graph h = layer_norm_graph(0, 1, 0, false);
  const int32_t centred = h.nodes[1].outputs[0];
  set_output(h, centred, "centred");
  BOOST_TEST(count_op(check_same(h, Dims{2, 5, 24}), "LayerNormalization") == 0);
}

BOOST_AUTO_TEST_CASE(layer_norm_over_the_last_axis_of_a_rank_not_known) {
  // Shape inference lost x's rank (windowed attention computes its shapes at run time): a mean
  // over axis -1 still reads as a row norm, with the row length checked when shapes are planned.
  for (int form = 1; form < 3; ++form) {
    Graph g = layer_norm_graph(form, 1, form - 1, false);
    g.values[g.inputs[0]].rank_known = false;
    g.values[g.inputs[0]].shape.clear();
    Graph f = check_same(g, Dims{2, 5, 24});
    BOOST_TEST_REQUIRE(f.nodes.size() == 1u);
    BOOST_TEST(f.nodes[0].op == "LayerNormalization");
    BOOST_TEST(f.nodes[0].attrs.get_int("axis", 0) == -1);
  }
  // The normalization alone has no row length for its ones; a scale of rank 2 could raise x's
  // rank: neither fuses.
  Graph alone = layer_norm_graph(0, 1, 0, false);
  alone.values[alone.inputs[0]].rank_known = false;
  alone.values[alone.inputs[0]].shape.clear();
  BOOST_TEST(count_op(check_same(alone, Dims{2, 5, 24}), "LayerNormalization") == 0);
  Graph wide = layer_norm_graph(1, 1, 0, false, Shape{1, 24});
  wide.values[wide.inputs[0]].rank_known = false;
  wide.values[wide.inputs[0]].shape.clear();
  BOOST_TEST(count_op(check_same(wide, Dims{2, 5, 24}), "LayerNormalization") == 0);
}

namespace {

// A Conv over x [1, 3, spatial...] with weights [4, 3, kernel...] and the given attributes.
Graph conv_nd(const Shape& spatial, const Shape& kernel, std::vector<int64_t> strides,
              std::vector<int64_t> dilations, std::vector<int64_t> pads) {
  Graph g;
  Shape xs{1, 3}, ws{4, 3};
  xs.insert(xs.end(), spatial.begin(), spatial.end());
  ws.insert(ws.end(), kernel.begin(), kernel.end());
  const int32_t x = add_input(g, "x", xs);
  const int32_t w = add_f32(g, ws, random_floats(static_cast<std::size_t>(shape_numel(ws)), 5));
  const int32_t b = add_f32(g, {4}, random_floats(4, 6));
  Attributes a;
  a.set("strides", std::move(strides));
  a.set("dilations", std::move(dilations));
  a.set("pads", std::move(pads));
  set_output(g, add_node(g, "Conv", {x, w, b}, 1, a), "y");
  return g;
}

}  // namespace

BOOST_AUTO_TEST_CASE(conv_taps_that_read_only_padding_are_dropped) {
  struct Case {
    Shape spatial, kernel;
    std::vector<int64_t> strides, dilations, pads;
    Shape kept;  // the kernel left
  };
  const Case cases[] = {
      // ASPP-like: rate 5 on a 5x5 map, a 3x3 whose outer taps never reach the input.
      {{5, 5}, {3, 3}, {1, 1}, {5, 5}, {5, 5, 5, 5}, {1, 1}},
      // Rate 3 on 5x5: every tap reads input somewhere; nothing to drop.
      {{5, 5}, {3, 3}, {1, 1}, {3, 3}, {3, 3, 3, 3}, {3, 3}},
      // A 7x7 on a 2x3 map: rows 2..4 and columns 1..5 are left.
      {{2, 3}, {7, 7}, {1, 1}, {1, 1}, {3, 3, 3, 3}, {3, 5}},
      // Strided and one-sided: pads only at the end, the last taps read padding.
      {{4, 6}, {5, 3}, {2, 2}, {2, 1}, {0, 0, 6, 2}, {2, 3}},
      // Only one axis trims.
      {{1, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, {1, 3}},
      // 1-D.
      {{6}, {5}, {1}, {4}, {8, 8}, {3}},
  };
  for (const Case& c : cases) {
    Graph g = conv_nd(c.spatial, c.kernel, c.strides, c.dilations, c.pads);
    Dims dims{1, 3};
    for (int64_t v : c.spatial) dims.push_back(v);
    Graph f = check_same(g, dims);
    const Node* conv = nullptr;
    for (const Node& n : f.nodes)
      if (n.op == "Conv") conv = &n;
    BOOST_TEST_REQUIRE(conv != nullptr);
    const Shape& w = f.values[conv->inputs[1]].shape;
    BOOST_TEST(Shape(w.begin() + 2, w.end()) == c.kept, "kernel " << shape_str(c.kernel));
  }
}

BOOST_AUTO_TEST_CASE(batch_norm_after_a_concat_stays_channels_last) {
  // DenseNet's pre-activation: Concat -> BatchNormalization -> activation -> Conv. With the
  // fast path, the BatchNormalization runs NHWC between the Convs: reorders only at the graph's
  // edges. The activation joins the BatchNormalization (one pass), in the reference kernel
  // (check_same: fused against unfused) and in the channels-last one (check_layout: fast
  // against reference, 24 channels: a vector and a tail with AVX-512, three vectors with AVX2).
  for (const char* op : {"Relu", "Clip", "HardSwish", "Sigmoid", "LeakyRelu"}) {
    BOOST_TEST_CONTEXT(op) {
      Graph g;
      const int32_t x = add_input(g, "x", {1, 8, 6, 7});
      g.values[x].shape = {1, 8, 6, 7};
      Attributes same;
      same.set("pads", std::vector<int64_t>{1, 1, 1, 1});
      auto conv = [&](int32_t in, int64_t c, int64_t m, unsigned seed) {
        const int32_t y =
            add_node(g, "Conv",
                     {in, add_f32(g, {m, c, 3, 3}, random_floats(static_cast<std::size_t>(m * c * 9), seed))},
                     1, same);
        g.values[y].shape = {1, m, 6, 7};
        return y;
      };
      const int32_t a = conv(x, 8, 16, 11), b = conv(x, 8, 8, 12);
      Attributes axis1;
      axis1.set("axis", int64_t{1});
      const int32_t cat = add_node(g, "Concat", {a, b}, 1, axis1);
      g.values[cat].shape = {1, 24, 6, 7};
      const int32_t bn = add_batch_norm(g, cat, 24, 13);
      const bool clip = std::string(op) == "Clip";
      const int32_t act =
          clip ? add_node(g, op, {bn, scalar(g, -0.25f), scalar(g, 0.5f)}) : add_node(g, op, {bn});
      g.values[act].shape = {1, 24, 6, 7};
      set_output(g, conv(act, 24, 4, 17), "y");
      const Graph fused = check_same(g, Dims{1, 8, 6, 7});
      BOOST_TEST(count_op(fused, op) == 0);
      for (const Node& n : fused.nodes)
        if (n.op == "BatchNormalization") BOOST_TEST(n.attrs.get_string("activation") == op);
      const Graph planned = check_layout(g, Dims{1, 8, 6, 7});
      bool any_nhwc = false;
      for (const Node& n : planned.nodes) {
        if (n.op != "BatchNormalization") continue;
        any_nhwc = n.attrs.get_string("weave_layout") == "NHWC";
      }
      if (!any_nhwc) {
        BOOST_TEST_MESSAGE("no fast path on this CPU: the BatchNormalization stays NCHW");
        continue;
      }
      BOOST_TEST(count_layout_transposes(planned) == 2);  // the input in, the output out
    }
  }
}

// A BatchNormalization whose output is read twice keeps its activation apart (the other reader
// wants the values before it).
BOOST_AUTO_TEST_CASE(batch_norm_read_twice_keeps_its_activation_apart) {
  Graph g;
  const int32_t x = add_input(g, "x", {1, 8, 5, 6});
  const int32_t r = add_node(g, "Relu", {x});
  g.values[r].shape = {1, 8, 5, 6};
  const int32_t bn = add_batch_norm(g, r, 8, 51);
  set_output(g, add_node(g, "Add", {add_node(g, "Sigmoid", {bn}), bn}), "y");
  const Graph fused = check_same(g, Dims{1, 8, 5, 6});
  BOOST_TEST(count_op(fused, "Sigmoid") == 1);
}

// ConvNeXt's block: depthwise Conv -> Transpose to channels-last -> LayerNormalization ->
// MatMul -> Relu -> MatMul -> Transpose back -> Mul by a [C,1,1] scale -> Add the block's
// input -> Conv. The first Transpose composes with the layout to the identity (its readers read
// the depthwise output), the second's output has its input as NHWC twin: no reorder inside the
// block. Variants: either Transpose's output also a graph output (it must then be made, and
// still be right).
BOOST_AUTO_TEST_CASE(channels_last_blocks_of_the_model_s_own_need_no_reorder) {
  for (int variant = 0; variant < 3; ++variant) {
    BOOST_TEST_CONTEXT("variant " << variant) {
      Graph g;
      const int32_t x = add_input(g, "x", {1, 8, 6, 7});
      g.values[x].shape = {1, 8, 6, 7};
      Attributes dw;
      dw.set("pads", std::vector<int64_t>{1, 1, 1, 1});
      dw.set("group", int64_t{8});
      const int32_t d = add_node(g, "Conv", {x, add_f32(g, {8, 1, 3, 3}, random_floats(72, 81))}, 1, dw);
      g.values[d].shape = {1, 8, 6, 7};
      Attributes to_last, to_first, last_axis;
      to_last.set("perm", std::vector<int64_t>{0, 2, 3, 1});
      to_first.set("perm", std::vector<int64_t>{0, 3, 1, 2});
      last_axis.set("axis", int64_t{-1});
      const int32_t t1 = add_node(g, "Transpose", {d}, 1, to_last);
      g.values[t1].shape = {1, 6, 7, 8};
      const int32_t ln = add_node(
          g, "LayerNormalization",
          {t1, add_f32(g, {8}, random_floats(8, 82)), add_f32(g, {8}, random_floats(8, 83))}, 1, last_axis);
      g.values[ln].shape = {1, 6, 7, 8};
      const int32_t m1 = add_node(g, "MatMul", {ln, add_f32(g, {8, 16}, random_floats(128, 84))});
      g.values[m1].shape = {1, 6, 7, 16};
      const int32_t r = add_node(g, "Relu", {m1});
      g.values[r].shape = {1, 6, 7, 16};
      const int32_t m2 = add_node(g, "MatMul", {r, add_f32(g, {16, 8}, random_floats(128, 85))});
      g.values[m2].shape = {1, 6, 7, 8};
      const int32_t t2 = add_node(g, "Transpose", {m2}, 1, to_first);
      g.values[t2].shape = {1, 8, 6, 7};
      const int32_t sc = add_node(g, "Mul", {t2, add_f32(g, {8, 1, 1}, random_floats(8, 86))});
      g.values[sc].shape = {1, 8, 6, 7};
      const int32_t sum = add_node(g, "Add", {sc, x});
      g.values[sum].shape = {1, 8, 6, 7};
      const int32_t y = add_node(g, "Conv", {sum, add_f32(g, {4, 8, 1, 1}, random_floats(32, 87))});
      g.values[y].shape = {1, 4, 6, 7};
      set_output(g, y, "y");
      if (variant == 1) set_output(g, t2, "scaled_in");
      if (variant == 2) set_output(g, t1, "channels_last");
      const Graph planned = check_layout(g, Dims{1, 8, 6, 7});
      if (count_op(planned, "Conv") > 0 && planned.nodes[1].attrs.get_string("weave_layout") != "NHWC") {
        BOOST_TEST_MESSAGE("no fast path on this CPU: the block stays NCHW");
        continue;
      }
      // The input in and y out; variant 1 makes t2 (NCHW) too, variant 2 copies t1 out.
      BOOST_TEST(count_op(planned, "Transpose") == (variant == 0 ? 2 : 3));
    }
  }
}

// A Transpose of a channels-last value whose perm is no permutation of 0..3 is not composed
// with the layout (that read the layout's table at perm's values): the Transpose kernel refuses
// it, naming the node.
BOOST_AUTO_TEST_CASE(transpose_of_a_bad_perm_after_a_channels_last_op_is_refused) {
  for (const std::vector<int64_t>& perm : {std::vector<int64_t>{0, 2, 3, 7}, std::vector<int64_t>{0, 1, 1, 2},
                                           std::vector<int64_t>{0, -9, 2, 1}}) {
    int32_t x, c;
    Graph g = conv_graph(x, c);
    Attributes a;
    a.set("perm", perm);
    set_output(g, add_node(g, "Transpose", {c}, 1, a), "y");
    auto compiled = compile_graph(g, CompileOptions{});
    BOOST_REQUIRE_MESSAGE(compiled, (compiled ? "" : compiled.message()));
    FactoryOptions fo;
    fo.registry = &KernelRegistry::global();
    auto f = Factory::create(*compiled, fo);
    BOOST_TEST(!f.ok());
    if (!f.ok()) BOOST_TEST(f.message().find("Transpose") != std::string::npos, f.message());
  }
}

BOOST_AUTO_TEST_CASE(spatial_means_and_maxima_of_channels_last_maps_become_global_pooling) {
  // Conv -> ReduceMean/ReduceMax over H and W (a classifier's x.mean([2, 3])): the channels-last
  // global pooling, no reorder of the map. Axes as an attribute or as input 1 (opset 18), with
  // and without keepdims; a mean over the channels stays a reduction of the NCHW value.
  struct Case {
    std::string op;
    std::vector<int64_t> axes;
    bool keepdims, axes_input, pools;
  };
  for (const Case& c :
       {Case{"ReduceMean", {2, 3}, false, false, true}, Case{"ReduceMax", {-1, -2}, true, false, true},
        Case{"ReduceMean", {3, 2}, true, true, true}, Case{"ReduceMean", {1}, false, false, false}}) {
    int32_t x = 0, conv = 0;
    Graph g = conv_graph(x, conv, 3, 6);
    Attributes a;
    a.set("keepdims", static_cast<int64_t>(c.keepdims));
    std::vector<int32_t> in{conv};
    if (c.axes_input) {
      in.push_back(g.add_param(DType::int64, Shape{static_cast<int64_t>(c.axes.size())},
                               SharedBytes::copy_of(std::as_bytes(std::span<const int64_t>(c.axes)))));
    } else {
      a.set("axes", c.axes);
    }
    const int32_t r = add_node(g, c.op, in, 1, a);
    set_output(g, add_node(g, "Relu", {r}), "y");
    check_same(g, Dims{1, 3, 5, 5});
    const Graph planned = check_layout(g, Dims{1, 3, 5, 5});
    bool nhwc = false;
    for (const Node& n : planned.nodes) nhwc = nhwc || n.attrs.get_string("weave_layout") == "NHWC";
    if (!nhwc) {
      BOOST_TEST_MESSAGE("no fast path on this CPU: the graph stays NCHW");
      return;
    }
    const std::string pool = c.op == "ReduceMean" ? "GlobalAveragePool" : "GlobalMaxPool";
    BOOST_TEST(count_op(planned, pool) == (c.pools ? 1 : 0), c.op);
    BOOST_TEST(count_op(planned, c.op) == (c.pools ? 0 : 1), c.op);
    // The input in; without keepdims nothing else ([N, C] is the pooled memory), with it the
    // 4-D output out; a mean over channels reads the map back in NCHW.
    BOOST_TEST(count_layout_transposes(planned) == (c.pools && !c.keepdims ? 1 : 2), c.op);
  }
}

namespace {

// x [2, 7, 24] -> MatMul(W [24, 40]) -> Add(b) -> act: a transformer's linear layer.
Graph linear_graph(const std::string& act, Shape bias_shape, bool bias_left = false, bool const_w = true) {
  Graph g;
  const int32_t x = add_input(g, "x", {2, 7, 24});
  const int32_t w =
      const_w ? add_f32(g, {24, 40}, random_floats(24 * 40, 21, 0.3f)) : add_input(g, "w", {24, 40});
  const int32_t mm = add_node(g, "MatMul", {x, w});
  g.values[mm].shape = {2, 7, 40};
  const int32_t b =
      add_f32(g, bias_shape, random_floats(static_cast<std::size_t>(shape_numel(bias_shape)), 22));
  int32_t y = add_node(g, "Add", bias_left ? std::vector<int32_t>{b, mm} : std::vector<int32_t>{mm, b});
  g.values[y].shape = {2, 7, 40};
  if (!act.empty()) y = add_node(g, act, {y});
  set_output(g, y, "y");
  return g;
}

}  // namespace

BOOST_AUTO_TEST_CASE(matmul_bias_and_activation_become_one_node) {
  for (const std::string act : {"", "Relu", "Gelu", "Sigmoid"})
    for (int form = 0; form < 3; ++form) {
      // [40], [1, 1, 40] and the bias on the Add's left.
      Graph g = linear_graph(act, form == 1 ? Shape{1, 1, 40} : Shape{40}, form == 2);
      Graph f = check_same(g, Dims{2, 7, 24});
      const std::string what = "act '" + act + "' form " + std::to_string(form);
      BOOST_TEST_REQUIRE(f.nodes.size() == 1u, what);
      BOOST_TEST(f.nodes[0].op == "MatMul", what);
      BOOST_TEST(f.nodes[0].inputs.size() == 3u, what);
      BOOST_TEST(f.nodes[0].attrs.get_string("activation") == act, what);
    }
}

BOOST_AUTO_TEST_CASE(matmul_bias_kept_when_not_per_column) {
  // A bias that varies along rows ([7, 1] broadcast), one that would raise the rank, and
  // weights computed at run time: the Add stays.
  BOOST_TEST(count_op(check_same(linear_graph("", Shape{7, 1}), Dims{2, 7, 24}), "Add") == 1);
  BOOST_TEST(count_op(check_same(linear_graph("", Shape{1, 1, 1, 40}), Dims{2, 7, 24}), "Add") == 1);
  Graph g = linear_graph("Relu", Shape{40}, false, false);
  CompileOptions opt;
  auto c = compile_graph(g, opt);
  BOOST_REQUIRE(c);
  BOOST_TEST(count_op(*c, "Add") == 1);
}

BOOST_AUTO_TEST_CASE(patch_convolutions_become_a_rearrangement_and_a_1x1) {
  struct Case {
    Shape spatial, kernel;
    int64_t c;
    bool unfolds;
  };
  const Case cases[] = {
      {{8, 12}, {4, 4}, 3, true},    // ViT/Swin-like patches of an image
      {{6, 9}, {2, 3}, 2, true},     // non-square patches
      {{8, 12}, {4, 4}, 16, false},  // as many channels as taps: left to the convolution kernels
      {{9, 12}, {4, 4}, 3, false},   // a height that does not divide: left as it is
  };
  for (const Case& c : cases) {
    Graph g;
    const int32_t x = add_input(g, "x", {2, c.c, c.spatial[0], c.spatial[1]});
    const int64_t m = 5;
    const auto wn = static_cast<std::size_t>(m * c.c * c.kernel[0] * c.kernel[1]);
    Attributes a;
    a.set("strides", std::vector<int64_t>{c.kernel[0], c.kernel[1]});
    const int32_t y = add_node(g, "Conv",
                               {x, add_f32(g, {m, c.c, c.kernel[0], c.kernel[1]}, random_floats(wn, 31)),
                                add_f32(g, {m}, random_floats(5, 32))},
                               1, a);
    set_output(g, y, "y");
    Graph f = check_same(g, Dims{2, c.c, c.spatial[0], c.spatial[1]});
    const std::string what = "kernel " + shape_str(c.kernel) + " channels " + std::to_string(c.c);
    BOOST_TEST(count_op(f, "Transpose") == (c.unfolds ? 1 : 0), what);
    for (const Node& n : f.nodes)
      if (n.op == "Conv")
        BOOST_TEST((n.attrs.get_ints("kernel_shape") == std::vector<int64_t>{1, 1}) == c.unfolds, what);
  }
}

BOOST_AUTO_TEST_CASE(window_passes_leave_dynamic_and_hostile_graphs_alone) {
  // An input with a dynamic dim: intermediate static dims might be a stale value_info, so
  // neither the tap trimming nor the patch unfolding acts.
  for (bool patch : {false, true}) {
    Graph g;
    const int32_t x = add_input(g, "x", {-1, 3, 8, 8});
    g.values[x].shape = {1, 3, 8, 8};  // what a stale value_info would claim
    Attributes a;
    if (patch) {
      a.set("strides", std::vector<int64_t>{4, 4});
    } else {
      a.set("dilations", std::vector<int64_t>{9, 9});
      a.set("pads", std::vector<int64_t>{9, 9, 9, 9});
    }
    const int64_t k = patch ? 4 : 3;
    set_output(
        g,
        add_node(g, "Conv",
                 {x, add_f32(g, {2, 3, k, k}, random_floats(static_cast<std::size_t>(18 * k * k / 3), 41))},
                 1, a),
        "y");
    auto c = compile_graph(g, CompileOptions{});
    BOOST_REQUIRE(c);
    BOOST_TEST(count_op(*c, "Transpose") == 0);
    for (const Node& n : c->nodes)
      if (n.op == "Conv") BOOST_TEST(c->values[n.inputs[1]].shape == (Shape{2, 3, k, k}));
  }
  // Weights with a zero dim and a kernel of 2^32 taps, pads near 2^31: no work, no overflow.
  Graph h;
  const int32_t x = add_input(h, "x", {1, 1, 1});
  Attributes a;
  a.set("pads", std::vector<int64_t>{int64_t{1} << 31, int64_t{1} << 31});
  a.set("strides", std::vector<int64_t>{int64_t{1} << 32});
  set_output(h, add_node(h, "Conv", {x, add_f32(h, {0, 1, (int64_t{1} << 32) + 1}, {})}, 1, a), "y");
  auto c = compile_graph(h, CompileOptions{});
  BOOST_REQUIRE(c);
  BOOST_TEST(count_op(*c, "Conv") == 1);
}

BOOST_AUTO_TEST_CASE(batch_norm_between_nchw_ops_stays_nchw) {
  // Input -> BatchNormalization -> output: channels-last would only add two reorders.
  Graph g;
  const int32_t x = add_input(g, "x", {1, 8, 5, 6});
  const int32_t bn = add_batch_norm(g, x, 8, 51);
  set_output(g, bn, "y");
  BOOST_TEST(count_layout_transposes(check_layout(g, Dims{1, 8, 5, 6})) == 0);
}

namespace {

void check_shuffle(bool dims_lost) {
  // ShuffleNet's block: Conv -> Reshape [N,2,C/2,H,W] -> Transpose(0,2,1,3,4) -> Reshape ->
  // Slice of each half along the channels (one with its axes given, one without, one from the
  // end) -> Conv on one half, Concat with the other. Channels-last throughout: reorders only at
  // the edges.
  Graph g;
  const int32_t x = add_input(g, "x", {1, 8, 5, 6});
  Attributes same;
  same.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const int32_t a = add_node(g, "Conv", {x, add_f32(g, {8, 8, 3, 3}, random_floats(8 * 8 * 9, 61))}, 1, same);
  // Shape inference may have lost the shuffled value's dims (ShuffleNet's later blocks).
  g.values[a].shape = dims_lost ? Shape{-1, -1, -1, -1} : Shape{1, 8, 5, 6};
  auto ints = [&](std::vector<int64_t> v) {
    return g.add_param(DType::int64, Shape{static_cast<int64_t>(v.size())},
                       SharedBytes::copy_of(std::as_bytes(std::span<const int64_t>(v))));
  };
  const int32_t split = add_node(g, "Reshape", {a, ints({1, 2, 4, 5, 6})});
  g.values[split].shape = {1, 2, 4, 5, 6};
  Attributes perm;
  perm.set("perm", std::vector<int64_t>{0, 2, 1, 3, 4});
  const int32_t swapped = add_node(g, "Transpose", {split}, 1, perm);
  g.values[swapped].shape = {1, 4, 2, 5, 6};
  const int32_t shuffled = add_node(g, "Reshape", {swapped, ints({1, 8, 5, 6})});
  g.values[shuffled].shape = {1, 8, 5, 6};
  const int32_t lo = add_node(g, "Slice", {shuffled, ints({0}), ints({4}), ints({1})});
  g.values[lo].shape = {1, 4, 5, 6};
  const int32_t hi = add_node(g, "Slice", {shuffled, ints({0, 4}), ints({1, 8})});  // axes 0 and 1
  g.values[hi].shape = {1, 4, 5, 6};
  const int32_t conv =
      add_node(g, "Conv", {hi, add_f32(g, {4, 4, 3, 3}, random_floats(4 * 4 * 9, 62))}, 1, same);
  g.values[conv].shape = {1, 4, 5, 6};
  Attributes axis1;
  axis1.set("axis", int64_t{1});
  const int32_t tail = add_node(g, "Slice", {shuffled, ints({-2}), ints({8}), ints({-3})});  // channels 6, 7
  g.values[tail].shape = {1, 2, 5, 6};
  const int32_t cat = add_node(g, "Concat", {lo, conv, tail}, 1, axis1);
  g.values[cat].shape = {1, 10, 5, 6};
  set_output(g, cat, "y");
  const Graph planned = check_layout(g, Dims{1, 8, 5, 6});
  if (count_op(planned, "Gather") == 0) {
    BOOST_TEST_MESSAGE("no fast path on this CPU: the shuffle stays NCHW");
    return;
  }
  BOOST_TEST(count_op(planned, "Reshape") == 0);
  BOOST_TEST(count_layout_transposes(planned) == 2);  // the input in, the output out
}

}  // namespace

BOOST_AUTO_TEST_CASE(channel_shuffle_and_split_stay_channels_last) {
  check_shuffle(false);
  check_shuffle(true);
}

namespace {

// A detector's head: Conv -> Reshape splitting its channels [N, c1, .., ck, H, W] ->
// Transpose(perm) -> output.
struct Head {
  std::vector<int64_t> split, perm;  // perm empty: the default (reversing) one
  int64_t n = 1;                     // images
  bool split_out = false;            // the split tensor is a graph output too
  bool rest = false;                 // the Reshape's shape says -1 for c1 (SSD's [1, -1, 91, H, W])
  bool kept = false;                 // ... and 0 for N (kept from the input)
  bool relu = false;                 // a Relu reads the Transpose, whose output is then no graph output
};

// Returns the fast Factory's graph of the head (checked against the reference kernels).
Graph check_head(const Head& h) {
  Graph g;
  const int64_t c = std::accumulate(h.split.begin(), h.split.end(), int64_t{1}, std::multiplies<>());
  const int32_t x = add_input(g, "x", {h.n, 6, 5, 7});
  const int32_t conv =
      add_node(g, "Conv", {x, add_f32(g, {c, 6, 1, 1}, random_floats(static_cast<std::size_t>(c * 6), 71))});
  g.values[conv].shape = {h.n, c, 5, 7};
  std::vector<int64_t> dims{h.n};
  dims.insert(dims.end(), h.split.begin(), h.split.end());
  dims.push_back(5);
  dims.push_back(7);
  std::vector<int64_t> said = dims;
  if (h.rest) said[1] = -1;
  if (h.kept) said[0] = 0;
  const int32_t shape = g.add_param(DType::int64, Shape{static_cast<int64_t>(said.size())},
                                    SharedBytes::copy_of(std::as_bytes(std::span<const int64_t>(said))));
  const int32_t r = add_node(g, "Reshape", {conv, shape});
  g.values[r].shape = dims;
  Attributes a;
  if (!h.perm.empty()) a.set("perm", h.perm);
  const int32_t t = add_node(g, "Transpose", {r}, 1, a);
  Shape out(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k)
    out[k] = dims[h.perm.empty() ? dims.size() - 1 - k : static_cast<std::size_t>(h.perm[k])];
  g.values[t].shape = out;
  int32_t y = t;
  if (h.relu) {
    y = add_node(g, "Relu", {t});
    g.values[y].shape = out;
  }
  set_output(g, y, "y");
  if (h.split_out) set_output(g, r, "split");
  return check_layout(g, Dims{h.n, 6, 5, 7});
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_head_s_channel_split_and_transpose_read_the_channels_last_map) {
  // YOLO's [N, 3, 85, H, W] -> [N, 3, H, W, 85], the reversing default perm, a three-way split,
  // two images with their count kept by a 0.
  for (const Head& h : {Head{{3, 5}, {0, 1, 3, 4, 2}}, Head{{3, 5}, {}}, Head{{2, 3, 2}, {0, 5, 2, 1, 4, 3}},
                        Head{{4, 2}, {0, 1, 2, 3, 4}}, Head{{3, 5}, {0, 1, 3, 4, 2}, 2, false, true, true}}) {
    const Graph planned = check_head(h);
    if (count_layout_transposes(planned) == 0) {
      BOOST_TEST_MESSAGE("no fast path on this CPU: the head stays NCHW");
      return;
    }
    // The input's reorder alone: the Transpose reads the channels-last map, split in place.
    BOOST_TEST(count_layout_transposes(planned) == 1);
  }
  // SSD's [N, -1, 91, H, W] -> [N, H, W, 6, 91], the twin's own order: no copy at all, for one
  // image or two; as a graph output it keeps its own copy.
  BOOST_TEST(count_op(check_head(Head{{3, 5}, {0, 3, 4, 1, 2}, 1, false, true, false, true}), "Transpose") ==
             1);
  BOOST_TEST(count_op(check_head(Head{{3, 5}, {0, 3, 4, 1, 2}, 2, false, true, true, true}), "Transpose") ==
             1);
  BOOST_TEST(count_op(check_head(Head{{3, 5}, {0, 3, 4, 1, 2}, 1, false, true}), "Transpose") == 2);
  // The split tensor is an output itself: it is made in NCHW, and the Transpose reads it.
  BOOST_TEST(count_layout_transposes(check_head(Head{{3, 5}, {0, 1, 3, 4, 2}, 1, true})) == 2);
}

namespace {

// YOLOv8's C2f: Conv -> Split in two along `axis` (sizes as an attribute or an input) -> a Conv
// on the second part -> Concat of the parts and its output -> Conv. Returns the fast Factory's
// graph (checked against the reference kernels).
Graph check_split(int64_t axis, bool sizes_as_input) {
  Graph g;
  const int32_t x = add_input(g, "x", {1, 8, 6, 6});
  Attributes same;
  same.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const int32_t a = add_node(g, "Conv", {x, add_f32(g, {8, 8, 3, 3}, random_floats(8 * 8 * 9, 81))}, 1, same);
  g.values[a].shape = {1, 8, 6, 6};
  const int64_t at = axis < 0 ? axis + 4 : axis;
  Shape part{1, 8, 6, 6};
  part[static_cast<std::size_t>(at)] /= 2;
  Attributes sa;
  sa.set("axis", axis);
  const std::vector<int64_t> sizes{part[static_cast<std::size_t>(at)], part[static_cast<std::size_t>(at)]};
  std::vector<int32_t> in{a};
  if (sizes_as_input)
    in.push_back(g.add_param(DType::int64, Shape{2}, SharedBytes::copy_of(std::as_bytes(std::span(sizes)))));
  else
    sa.set("split", sizes);
  const int32_t first = add_node(g, "Split", in, 2, sa);
  const int32_t second = first + 1;
  g.values[first].shape = g.values[second].shape = part;
  const int32_t c = add_node(
      g, "Conv", {second, add_f32(g, {part[1], part[1], 3, 3}, random_floats(part[1] * part[1] * 9, 82))}, 1,
      same);
  g.values[c].shape = part;
  Attributes cat;
  cat.set("axis", at);
  const int32_t joined = add_node(g, "Concat", {first, second, c}, 1, cat);
  Shape all = part;
  all[static_cast<std::size_t>(at)] *= 3;
  g.values[joined].shape = all;
  const int32_t y =
      add_node(g, "Conv", {joined, add_f32(g, {4, all[1], 1, 1}, random_floats(4 * all[1], 83))});
  g.values[y].shape = {1, 4, all[2], all[3]};
  set_output(g, y, "y");
  return check_layout(g, Dims{1, 8, 6, 6});
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_split_of_a_channels_last_map_stays_channels_last) {
  for (const auto& [axis, sizes_as_input] :
       std::vector<std::pair<int64_t, bool>>{{1, false}, {-3, true}, {2, true}}) {
    const Graph planned = check_split(axis, sizes_as_input);
    if (count_layout_transposes(planned) == 0) {
      BOOST_TEST_MESSAGE("no fast path on this CPU: the split stays NCHW");
      return;
    }
    BOOST_TEST(count_layout_transposes(planned) == 2, "axis " << axis);  // the input in, the output out
  }
}

namespace {

// A bottleneck: x [N, C, H, W] -> Conv (C -> C, k x k, "same", activation `act` and a post
// affine when `post`) -> Add with x (conv output first, or x first) -> Conv 1x1 -> y. With
// `conv_out`, the first Conv's output is a graph output too; with `broadcast`, the Add's other
// operand is x's per-channel mean instead of x. Returns the fast Factory's graph (checked
// against the reference kernels).
struct Bottleneck {
  int64_t c, h, w, k;
  const char* act;
  bool post = false, x_first = false, conv_out = false, broadcast = false;
};

Graph check_bottleneck(const Bottleneck& b) {
  Graph g;
  const int32_t x = add_input(g, "x", {1, b.c, b.h, b.w});
  Attributes a;
  a.set("pads", std::vector<int64_t>(4, b.k / 2));
  a.set("activation", std::string(b.act));
  if (b.post) a.set("activation_post_mul", 0.5f), a.set("activation_post_add", 0.25f);
  const int32_t conv =
      add_node(g, "Conv",
               {x,
                add_f32(g, {b.c, b.c, b.k, b.k},
                        random_floats(static_cast<std::size_t>(b.c * b.c * b.k * b.k), 91, 0.3f)),
                add_f32(g, {b.c}, random_floats(static_cast<std::size_t>(b.c), 92))},
               1, a);
  g.values[conv].shape = {1, b.c, b.h, b.w};
  int32_t other = x;
  if (b.broadcast) {
    other = add_node(g, "GlobalAveragePool", {x});
    g.values[other].shape = {1, b.c, 1, 1};
  }
  const int32_t sum =
      add_node(g, "Add", b.x_first ? std::vector<int32_t>{other, conv} : std::vector<int32_t>{conv, other});
  g.values[sum].shape = {1, b.c, b.h, b.w};
  const int32_t y = add_node(
      g, "Conv", {sum, add_f32(g, {8, b.c, 1, 1}, random_floats(static_cast<std::size_t>(8 * b.c), 93))});
  g.values[y].shape = {1, 8, b.h, b.w};
  set_output(g, y, "y");
  if (b.conv_out) set_output(g, conv, "conv");
  return check_layout(g, Dims{1, b.c, b.h, b.w});
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_residual_after_the_activation_joins_the_convolution) {
  // Winograd (3x3, 16+ channels), the GEMM (3x3 of 8 channels, 1x1 of 24: a panel and a part),
  // one pixel (the GEMV rows), GELU (the epilogue's interleaved rows), a post affine.
  for (const Bottleneck& b :
       {Bottleneck{16, 9, 10, 3, "Swish"}, Bottleneck{8, 7, 5, 3, "Relu", false, true},
        Bottleneck{24, 6, 6, 1, "HardSwish", true}, Bottleneck{40, 1, 1, 1, "Swish", false, true},
        Bottleneck{32, 5, 4, 1, "Gelu", true}, Bottleneck{16, 8, 8, 3, "Sigmoid", true, true}}) {
    const Graph planned = check_bottleneck(b);
    if (count_layout_transposes(planned) == 0) {
      BOOST_TEST_MESSAGE("no fast path on this CPU: the Add stays");
      return;
    }
    BOOST_TEST(count_op(planned, "Add") == 0, b.c << " channels, " << b.k << "x" << b.k << " " << b.act);
  }
  // The Conv's output read elsewhere too, or a broadcast operand: the Add stays.
  BOOST_TEST(count_op(check_bottleneck(Bottleneck{16, 9, 10, 3, "Swish", false, false, true}), "Add") == 1);
  BOOST_TEST(
      count_op(check_bottleneck(Bottleneck{16, 9, 10, 3, "Swish", false, false, false, true}), "Add") == 1);
}

namespace {

// x [1, 6, 7, 5] -> Conv (3x3 "same", 6 -> sum(sizes) channels, a bias unless `no_bias`,
// Swish; `group` groups) -> Split along axis 1 into `sizes` (stated, or `unstated`) -> Concat of the parts in
// reverse order -> y. With `conv_out` the Conv's output is a graph output too. Checks the compiled graph
// against the uncompiled one and the fast kernels against the reference ones; returns the
// compiled graph.
struct SplitConv {
  std::vector<int64_t> sizes;
  bool no_bias = false, conv_out = false;
  int64_t group = 1;
  bool unstated = false;  // no sizes: equal parts
};

Graph check_split_conv(const SplitConv& s) {
  Graph g;
  const int64_t c = 6, m = std::accumulate(s.sizes.begin(), s.sizes.end(), int64_t{0});
  const int32_t x = add_input(g, "x", {1, c, 7, 5});
  Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  a.set("group", s.group);
  a.set("activation", std::string("Swish"));
  std::vector<int32_t> in{x,
                          add_f32(g, {m, c / s.group, 3, 3},
                                  random_floats(static_cast<std::size_t>(m * c / s.group * 9), 101, 0.3f))};
  if (!s.no_bias) in.push_back(add_f32(g, {m}, random_floats(static_cast<std::size_t>(m), 102)));
  const int32_t conv = add_node(g, "Conv", in, 1, a);
  g.values[conv].shape = {1, m, 7, 5};
  Attributes sa;
  sa.set("axis", int64_t{1});
  if (!s.unstated) sa.set("split", s.sizes);
  const int32_t first = add_node(g, "Split", {conv}, static_cast<int>(s.sizes.size()), sa);
  std::vector<int32_t> parts;
  for (std::size_t k = 0; k < s.sizes.size(); ++k) {
    parts.insert(parts.begin(), first + static_cast<int32_t>(k));
    g.values[first + static_cast<int32_t>(k)].shape = {1, s.sizes[k], 7, 5};
  }
  Attributes cat;
  cat.set("axis", int64_t{1});
  const int32_t y = add_node(g, "Concat", parts, 1, cat);
  g.values[y].shape = {1, m, 7, 5};
  set_output(g, y, "y");
  if (s.conv_out) set_output(g, conv, "conv");
  check_layout(g, Dims{1, c, 7, 5});
  return check_same(g, Dims{1, c, 7, 5});
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_split_of_a_convolution_s_channels_becomes_one_convolution_per_part) {
  // Three parts of unequal sizes (one over a vector of channels), two without a bias, three
  // equal ones the Split does not state (the sizes as an input: a_split_of_a_channels_last_map).
  for (const SplitConv& s :
       {SplitConv{{4, 2, 17}}, SplitConv{{8, 8}, true}, SplitConv{{5, 5, 5}, false, false, 1, true}}) {
    const Graph fused = check_split_conv(s);
    BOOST_TEST(count_op(fused, "Split") == 0, s.sizes.size() << " parts");
    BOOST_TEST(count_op(fused, "Conv") == static_cast<int>(s.sizes.size()));
  }
  // Left alone: the Conv's output read by a graph output too, a grouped Conv.
  BOOST_TEST(count_op(check_split_conv(SplitConv{{4, 2}, false, true}), "Split") == 1);
  BOOST_TEST(count_op(check_split_conv(SplitConv{{4, 2}, false, false, 2}), "Split") == 1);
}
