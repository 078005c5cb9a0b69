// ScaledConv (core/kernels/fused_ops.h): a squeeze-and-excitation block's x * s read only by a
// 1x1 projection, folded by the fast registry's graph pass (core/compiler/fold_channel_scale.h)
// into the projection, whose kernel scales its packed weights by each image's s. Each case
// builds the block (global pool, two 1x1 convolutions, Sigmoid, the Mul, the projection),
// compiles it, and runs it through a Factory of the fast registry (which must hold the expected
// number of ScaledConv nodes) and one of the reference kernels, at 1, 2 and 4 threads: the
// outputs must agree. The cases cover channel counts off the vector width and the panel width
// (a last, narrower panel), batch 2 with a scale per image or one for both, either operand order of the Mul,
// a residual and an activation in the projection's epilogue, no bias, and the graphs the pass must leave
// alone (a product read twice, a map of fewer pixels than output channels, a constant scale, a scale that is
// not per channel).
#define BOOST_TEST_MODULE scaled_conv
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

// squeeze: [N, C, 1, 1] from x; shared: [1, C, 1, 1], the squeeze averaged over the batch.
enum class Scale { squeeze, shared, constant, per_pixel };

struct Case {
  int64_t n, c, h, w, m;
  bool scale_first = false;  // Mul(s, x) rather than Mul(x, s)
  bool residual = false;     // + x after the projection (m == c)
  const char* act = "";      // activation op after the projection ("" = none)
  bool bias = true;
  Scale scale = Scale::squeeze;
  bool reuse_product = false;  // x * s also a graph output of its own
  int fused = 1;               // ScaledConv nodes the fast Factory must hold
};

// The layout pass lays out only values of known rank 4, as the importer leaves them.
int32_t shaped(Graph& g, int32_t v, Shape shape) {
  g.values[v].shape = std::move(shape);
  g.values[v].rank_known = true;
  return v;
}

int32_t conv1x1(Graph& g, int32_t x, int64_t cin, int64_t m, Shape out, unsigned seed, bool bias = true) {
  std::vector<int32_t> in{
      x, add_f32(g, {m, cin, 1, 1}, random_floats(static_cast<std::size_t>(m * cin), seed, 0.5f))};
  if (bias) in.push_back(add_f32(g, {m}, random_floats(static_cast<std::size_t>(m), seed + 1, 1.f)));
  return shaped(g, add_node(g, "Conv", in), std::move(out));
}

Graph make_graph(const Case& k) {
  Graph g;
  const int32_t x = add_input(g, "x", {k.n, k.c, k.h, k.w});
  int32_t s = -1;
  switch (k.scale) {
    case Scale::squeeze:
    case Scale::shared: {
      const int64_t r = std::max<int64_t>(1, k.c / 4);
      const int32_t p = shaped(g, add_node(g, "GlobalAveragePool", {x}), {k.n, k.c, 1, 1});
      const int32_t q =
          shaped(g, add_node(g, "Relu", {conv1x1(g, p, k.c, r, {k.n, r, 1, 1}, 10)}), {k.n, r, 1, 1});
      s = shaped(g, add_node(g, "Sigmoid", {conv1x1(g, q, r, k.c, {k.n, k.c, 1, 1}, 20)}), {k.n, k.c, 1, 1});
      if (k.scale == Scale::shared) {
        Attributes batch;
        batch.set("axes", std::vector<int64_t>{0});
        s = shaped(g, add_node(g, "ReduceMean", {s}, 1, batch), {1, k.c, 1, 1});
      }
      break;
    }
    case Scale::constant:
      s = add_f32(g, {1, k.c, 1, 1}, random_floats(static_cast<std::size_t>(k.c), 30, 1.f));
      break;
    case Scale::per_pixel:
      s = shaped(g, add_node(g, "Sigmoid", {x}), {k.n, k.c, k.h, k.w});
      break;
  }
  const int32_t prod =
      shaped(g, add_node(g, "Mul", k.scale_first ? std::vector<int32_t>{s, x} : std::vector<int32_t>{x, s}),
             {k.n, k.c, k.h, k.w});
  int32_t y = conv1x1(g, prod, k.c, k.m, {k.n, k.m, k.h, k.w}, 40, k.bias);
  if (k.residual) y = shaped(g, add_node(g, "Add", {y, x}), {k.n, k.m, k.h, k.w});
  if (*k.act != 0) y = shaped(g, add_node(g, k.act, {y}), {k.n, k.m, k.h, k.w});
  set_output(g, y, "y");
  if (k.reuse_product) set_output(g, prod, "product");
  return g;
}

void check(const Case& k) {
  const std::string what = "N" + std::to_string(k.n) + " " + std::to_string(k.c) + "->" +
                           std::to_string(k.m) + " @" + std::to_string(k.h) + "x" + std::to_string(k.w) +
                           (k.scale_first ? " s*x" : " x*s") + (k.residual ? " +x" : "") + " " + k.act;
  auto c = compile_graph(make_graph(k));
  BOOST_REQUIRE_MESSAGE(c, (c ? "" : c.message()));
  const auto x = random_floats(static_cast<std::size_t>(k.n * k.c * k.h * k.w), 5, 1.f);
  const Dims in{k.n, k.c, k.h, k.w};
  const auto ref = run_fused_graph(*c, &KernelRegistry::reference(), 1, in, x);
  for (int threads : {1, 2, 4}) {
    int fused = 0;
    const auto fast = run_fused_graph(*c, &KernelRegistry::global(), threads, in, x, "ScaledConv", &fused);
    BOOST_TEST(fused == k.fused, what << ": ScaledConv nodes " << fused << ", expected " << k.fused);
    const double worst = worst_relative_error(fast, ref);
    BOOST_TEST(worst < 1e-4, what << " threads " << threads << ": worst relative error " << worst);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(squeeze_and_excitation_products_fold_into_the_projection) {
  if (!have_fast()) return;
  check({1, 32, 20, 20, 16});        // one AVX-512 vector of outputs
  check({1, 37, 19, 17, 19, true});  // odd channels, s * x
  check({2, 24, 26, 25, 40});        // batch 2: a scale per image
  Case shared{2, 24, 26, 25, 40};    // batch 2: one scale for both images
  shared.scale = Scale::shared;
  check(shared);
  check({1, 48, 28, 28, 48, false, true, "Relu"});           // residual and activation
  check({2, 20, 18, 19, 20, true, true, "Sigmoid", false});  // no bias, a polynomial epilogue
  check({1, 96, 34, 34, 72, false, false, "", true});        // full panels and a part (AVX-512, AVX2)
}

BOOST_AUTO_TEST_CASE(products_the_projection_cannot_take_alone_stay_apart) {
  if (!have_fast()) return;
  Case read_twice{1, 16, 12, 12, 8};
  read_twice.reuse_product = true, read_twice.fused = 0;
  check(read_twice);
  Case small_map{1, 16, 11, 11, 8};  // 121 pixels, under 16 x 8
  small_map.fused = 0;
  check(small_map);
  Case constant{1, 16, 12, 12, 8};
  constant.scale = Scale::constant, constant.fused = 0;
  check(constant);
  Case per_pixel{1, 16, 12, 12, 8};
  per_pixel.scale = Scale::per_pixel, per_pixel.fused = 0;
  check(per_pixel);
}
