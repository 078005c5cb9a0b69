// ConvConcat (core/kernels/fast/nhwc.h): convolutions joined by a channel Concat, fused by the
// fast registry's graph pass into one node whose convolutions write straight into their channels
// of the joined tensor. Each case builds the branches-and-Concat graph, compiles it, and runs it
// through a Factory of the fast registry (which must hold the expected number of ConvConcat
// nodes) and one of the reference kernels, at 1 and 2 threads: the outputs must agree. The cases
// cover both micro-kernel paths a branch can take (implicit GEMM: 1x1, 5x5, strided; Winograd:
// 3x3 stride 1 with 16+ channels), two and three branches, batch 2, branches with and without a
// bias, an activation or a residual, and the graphs the pass must leave alone (a branch output
// used twice, a depthwise branch, the input itself joined).
#define BOOST_TEST_MODULE conv_concat
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "core/compiler/compile.h"
#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/registry.h"
#include "tests/compiler/graph_build.h"
#include "tests/kernels/fused_graph.h"

using namespace weave;
using namespace weave::test;

namespace {

struct Branch {
  int64_t m, k, group = 1;
  bool bias = true;
  const char* act = "";   // activation op after the conv ("" = none)
  bool residual = false;  // conv(x) + x before the activation (m == c, stride 1)
};

struct Case {
  int64_t n, c, h, w, stride;
  std::vector<Branch> branches;
  bool reuse_first = false;  // the first branch's output also feeds a graph output of its own
  int fused = 1;             // ConvConcat nodes the fast Factory must hold
  bool join_input = false;   // x itself joins the Concat, last (stride 1)
};

// The layout pass lays out only values of known rank 4, as the importer leaves them.
int32_t shaped(Graph& g, int32_t v, Shape shape) {
  g.values[v].shape = std::move(shape);
  g.values[v].rank_known = true;
  return v;
}

Graph make_graph(const Case& k) {
  Graph g;
  const int32_t x = add_input(g, "x", {k.n, k.c, k.h, k.w});
  const int64_t oh = (k.h - 1) / k.stride + 1, ow = (k.w - 1) / k.stride + 1;  // "same" padding
  std::vector<int32_t> parts;
  int64_t channels = 0;
  unsigned seed = 1;
  for (const Branch& b : k.branches) {
    const int64_t cg = k.c / b.group;
    std::vector<int32_t> in{
        x, add_f32(g, {b.m, cg, b.k, b.k},
                   random_floats(static_cast<std::size_t>(b.m * cg * b.k * b.k), seed++, 0.5f))};
    if (b.bias) in.push_back(add_f32(g, {b.m}, random_floats(static_cast<std::size_t>(b.m), seed++, 1.f)));
    Attributes a;
    const int64_t p = b.k / 2;
    a.set("kernel_shape", std::vector<int64_t>{b.k, b.k});
    a.set("strides", std::vector<int64_t>{k.stride, k.stride});
    a.set("pads", std::vector<int64_t>{p, p, p, p});
    a.set("group", b.group);
    int32_t y = shaped(g, add_node(g, "Conv", in, 1, a), {k.n, b.m, oh, ow});
    if (b.residual) y = shaped(g, add_node(g, "Add", {y, x}), {k.n, b.m, oh, ow});
    if (*b.act != '\0') y = shaped(g, add_node(g, b.act, {y}), {k.n, b.m, oh, ow});
    parts.push_back(y);
    channels += b.m;
  }
  if (k.join_input) {
    parts.push_back(x);
    channels += k.c;
  }
  Attributes a;
  a.set("axis", int64_t{1});
  const int32_t cat = shaped(g, add_node(g, "Concat", parts, 1, a), {k.n, channels, oh, ow});
  set_output(g, cat, "y");
  if (k.reuse_first) set_output(g, parts[0], "first");
  return g;
}

void check(const Case& k, const std::string& what) {
  auto c = compile_graph(make_graph(k));
  BOOST_REQUIRE_MESSAGE(c, what << ": " << (c ? "" : c.message()));
  const auto x = random_floats(static_cast<std::size_t>(k.n * k.c * k.h * k.w), 99, 1.f);
  const Dims in{k.n, k.c, k.h, k.w};
  const auto ref = run_fused_graph(*c, &KernelRegistry::reference(), 1, in, x);
  for (int threads : {1, 2}) {
    int fused = -1;
    const auto fast = run_fused_graph(*c, &KernelRegistry::global(), threads, in, x, "ConvConcat", &fused);
    BOOST_TEST(fused == k.fused, what << ": ConvConcat nodes " << fused);
    const double worst = worst_relative_error(fast, ref);
    // Winograd's transforms add a few 1e-4 relative in float32.
    BOOST_TEST(worst < 5e-4, what << " threads " << threads << ": worst relative error " << worst);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(fire_modules_match_reference) {
  if (!have_fast()) return;
  // SqueezeNet's expand pair: 1x1 (GEMM) and 3x3 (Winograd) on the squeezed map.
  check({1, 16, 27, 27, 1, {{64, 1, 1, true, "Relu"}, {64, 3, 1, true, "Relu"}}}, "fire 16->64+64");
  check({2, 32, 13, 13, 1, {{40, 1}, {24, 3, 1, false}}}, "batch 2, no bias on the 3x3");
}

BOOST_AUTO_TEST_CASE(gemm_branches_match_reference) {
  if (!have_fast()) return;
  check({1, 8, 20, 17, 1, {{5, 1}, {7, 3}, {33, 5, 1, true, "Sigmoid"}}}, "three branches, 8 channels");
  check({1, 12, 21, 15, 2, {{16, 3}, {9, 1, 1, false, "Relu"}}}, "stride 2");
  check({1, 16, 9, 9, 1, {{8, 3, 4}, {24, 1}}}, "grouped 3x3 branch");
  // 4 channels in and out per group: the direct grouped kernel, writing into the wider tensor.
  check({2, 16, 11, 9, 1, {{16, 3, 4, true, "Relu"}, {8, 1}}}, "narrow grouped 3x3 branch");
  check({1, 24, 10, 7, 2, {{24, 3, 3}, {5, 1}}}, "narrow grouped 3x3 stride 2 branch");
}

// A branch with a residual (YOLOv5's C3 joins a bottleneck's x + conv(x) with a plain conv)
// writes into the joined tensor as the others do.
BOOST_AUTO_TEST_CASE(residual_branches_match_reference) {
  if (!have_fast()) return;
  check({2, 24, 9, 11, 1, {{24, 3, 1, true, "Relu", true}, {8, 1, 1, false, "Sigmoid"}}},
        "a 3x3 residual branch, batch 2");
  check({1, 32, 10, 10, 1, {{32, 1, 1, true, "", true}, {32, 3, 1, true, "Relu", true}}},
        "residuals on the GEMM and Winograd paths");
}

BOOST_AUTO_TEST_CASE(the_pass_leaves_other_concats_alone) {
  if (!have_fast()) return;
  Case reused{1, 16, 14, 14, 1, {{16, 1}, {16, 3}}};
  reused.reuse_first = true;
  reused.fused = 0;
  check(reused, "a branch output used twice");
  check({1, 16, 14, 14, 1, {{16, 3, 16}, {16, 1}}, false, 0}, "a depthwise branch");
  Case joined{1, 16, 14, 14, 1, {{16, 1}}};
  joined.join_input = true;
  joined.fused = 0;
  check(joined, "the input itself joined");
}
