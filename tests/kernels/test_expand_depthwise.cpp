// ExpandDepthwise (core/kernels/fast/nhwc.h): a 1x1 expansion Conv feeding a depthwise Conv, fused
// by the fast registry's graph pass into one banded node. Each case builds the two-conv graph,
// compiles it, and runs it through a Factory of the fast registry (which must hold exactly one
// ExpandDepthwise node) and one of the reference kernels, at 1, 2, 4 and 16 threads: the outputs
// must agree (at 4 and 16 threads maps whose bands would feed less than half the threads run
// whole). The cases cover the band logic's edges: strides 1-3, dilation, padding of 0..2 rows,
// windows reaching past the bottom, images narrower than a refill, batch 2 (a band crossing
// images), one output row, and every fused activation on either conv.
#define BOOST_TEST_MODULE expand_depthwise
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include "core/compiler/compile.h"
#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/registry.h"
#include "tests/compiler/graph_build.h"
#include "tests/kernels/fused_graph.h"

using namespace weave;
using namespace weave::test;

namespace {

struct Case {
  int64_t n, cin, c, h, w, k, stride, dilation, pad;
  const char* act_e;  // activation op after the expansion ("" = none)
  const char* act_d;  // after the depthwise conv
  bool bias_e = true, bias_d = true;
};

// The layout pass lays out only values of known rank 4, as the importer leaves them.
int32_t shaped(Graph& g, int32_t v, Shape shape) {
  g.values[v].shape = std::move(shape);
  g.values[v].rank_known = true;
  return v;
}

// act(x) as a node the epilogue pass folds into the conv before it.
int32_t activation(Graph& g, int32_t x, const std::string& op) {
  if (op.empty()) return x;
  Attributes a;
  if (op == "LeakyRelu") a.set("alpha", 0.1f);
  const int32_t y = op == "Clip" ? add_node(g, "Clip", {x, add_f32(g, {}, {0.f}), add_f32(g, {}, {6.f})})
                                 : add_node(g, op, {x}, 1, a);
  return shaped(g, y, g.values[x].shape);
}

Graph make_graph(const Case& k) {
  Graph g;
  const int32_t x = add_input(g, "x", {k.n, k.cin, k.h, k.w});
  const int32_t we =
      add_f32(g, {k.c, k.cin, 1, 1}, random_floats(static_cast<std::size_t>(k.c * k.cin), 1, 1.f));
  std::vector<int32_t> in_e{x, we};
  if (k.bias_e) in_e.push_back(add_f32(g, {k.c}, random_floats(static_cast<std::size_t>(k.c), 2, 1.f)));
  const int32_t e = activation(g, shaped(g, add_node(g, "Conv", in_e), {k.n, k.c, k.h, k.w}), k.act_e);
  const int32_t wd =
      add_f32(g, {k.c, 1, k.k, k.k}, random_floats(static_cast<std::size_t>(k.c * k.k * k.k), 3, 1.f));
  std::vector<int32_t> in_d{e, wd};
  if (k.bias_d) in_d.push_back(add_f32(g, {k.c}, random_floats(static_cast<std::size_t>(k.c), 4, 1.f)));
  Attributes a;
  a.set("group", k.c);
  a.set("strides", std::vector<int64_t>{k.stride, k.stride});
  a.set("dilations", std::vector<int64_t>{k.dilation, k.dilation});
  a.set("pads", std::vector<int64_t>{k.pad, k.pad, k.pad, k.pad});
  const int64_t span = (k.k - 1) * k.dilation + 1;
  const Shape out{k.n, k.c, (k.h + 2 * k.pad - span) / k.stride + 1, (k.w + 2 * k.pad - span) / k.stride + 1};
  const int32_t d = activation(g, shaped(g, add_node(g, "Conv", in_d, 1, a), out), k.act_d);
  set_output(g, d, "y");
  return g;
}

void check(const Case& k) {
  const std::string what = "N" + std::to_string(k.n) + " " + std::to_string(k.cin) + "->" +
                           std::to_string(k.c) + " @" + std::to_string(k.h) + "x" + std::to_string(k.w) +
                           " k" + std::to_string(k.k) + " s" + std::to_string(k.stride) + " d" +
                           std::to_string(k.dilation) + " p" + std::to_string(k.pad) + " " + k.act_e + "/" +
                           k.act_d;
  auto c = compile_graph(make_graph(k));
  BOOST_REQUIRE_MESSAGE(c, (c ? "" : c.message()));
  const auto x = random_floats(static_cast<std::size_t>(k.n * k.cin * k.h * k.w), 5, 1.f);
  const Dims in{k.n, k.cin, k.h, k.w};
  const auto ref = run_fused_graph(*c, &KernelRegistry::reference(), 1, in, x);
  for (int threads : {1, 2, 4, 16}) {
    int fused = 0;
    const auto fast =
        run_fused_graph(*c, &KernelRegistry::global(), threads, in, x, "ExpandDepthwise", &fused);
    BOOST_TEST(fused == 1, what << ": ExpandDepthwise nodes " << fused);
    const double worst = worst_relative_error(fast, ref);
    BOOST_TEST(worst < 1e-4, what << " threads " << threads << ": worst relative error " << worst);
  }
}

// The pass fuses only pairs large enough to pay; the edge cases here are small on purpose. At 2
// threads the 7x7 map and the dilated stride-2 one run whole (their two bands would share half
// their rows), the others in bands.
struct FuseEverywhere {
  FuseEverywhere() { setenv("WEAVE_FUSE_EXPAND_DEPTHWISE", "all", 1); }
};
BOOST_TEST_GLOBAL_FIXTURE(FuseEverywhere);

}  // namespace

BOOST_AUTO_TEST_CASE(mobilenet_shapes_match_reference) {
  if (!have_fast()) return;
  check({1, 16, 96, 24, 24, 3, 2, 1, 1, "Clip", "Clip"});  // stride 2, MobileNet-v2's block 2
  check({1, 24, 144, 14, 14, 3, 1, 1, 1, "Clip", "Clip"});
  check({1, 160, 960, 7, 7, 3, 1, 1, 1, "Clip", "Clip"});  // narrow: one refill covers the image
  // Large maps in bands at 2 threads, the second with bands that cross images.
  check({1, 16, 96, 112, 112, 3, 2, 1, 1, "Clip", "Clip"});  // MobileNet-v2's block 1
  check({2, 8, 128, 48, 48, 3, 1, 1, 1, "Relu", ""});        // batch 2: bands cross images
}

BOOST_AUTO_TEST_CASE(band_edges_match_reference) {
  if (!have_fast()) return;
  check({2, 8, 24, 9, 11, 3, 1, 1, 1, "Relu", ""});                // batch 2: bands cross images
  check({1, 4, 12, 30, 7, 5, 1, 1, 2, "", "Relu"});                // 5x5, two padded rows
  check({1, 8, 16, 17, 40, 3, 2, 2, 2, "HardSwish", ""});          // dilation 2, stride 2
  check({1, 3, 9, 13, 5, 3, 3, 1, 0, "", ""});                     // stride 3 > window: rows skipped
  check({1, 4, 8, 11, 6, 1, 2, 1, 0, "Sigmoid", "Tanh"});          // 1x1 depthwise, stride 2
  check({1, 4, 8, 3, 3, 3, 1, 1, 1, "LeakyRelu", "HardSigmoid"});  // 3 rows only
  check({1, 4, 8, 5, 9, 3, 1, 1, 0, "", "LeakyRelu"});             // no padding: one output row
  Case no_bias{1, 8, 24, 10, 10, 3, 1, 1, 1, "Relu", "Relu"};
  no_bias.bias_e = no_bias.bias_d = false;
  check(no_bias);
}
