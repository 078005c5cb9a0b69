// Compile passes on hand-built graphs: BN folding checked against hand-computed values,
// identity removal (including graph-output naming), constant folding through an injected
// registry with a fake kernel, dead-code elimination and error cases.
#define BOOST_TEST_MODULE compiler
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>

#include "core/compiler/compile.h"
#include "core/compiler/fold_batchnorm.h"
#include "core/compiler/remove_identity.h"
#include "tests/compiler/graph_build.h"

using namespace weave;
using namespace weave::test;

namespace {

// Conv 1x1 (1 -> 2 channels) followed by BN; `eps` as given.
Graph conv_bn_graph(float eps, bool second_consumer = false) {
  Graph g;
  int32_t x = add_input(g, "x", {1, 1, 2, 2});
  int32_t w = add_f32(g, {2, 1, 1, 1}, {2.f, 3.f});
  int32_t b = add_f32(g, {2}, {1.f, -1.f});
  int32_t c = add_node(g, "Conv", {x, w, b});
  int32_t s = add_f32(g, {2}, {0.5f, 2.f});
  int32_t beta = add_f32(g, {2}, {0.1f, 0.2f});
  int32_t mean = add_f32(g, {2}, {1.f, 2.f});
  int32_t var = add_f32(g, {2}, {4.f, 0.25f});
  Attributes a;
  a.set("epsilon", eps);
  int32_t y = add_node(g, "BatchNormalization", {c, s, beta, mean, var}, 1, a);
  g.names.values[y] = "bn_out";
  set_output(g, y, "y");
  if (second_consumer) set_output(g, add_node(g, "Relu", {c}), "r");
  return g;
}

}  // namespace

BOOST_AUTO_TEST_CASE(fold_batchnorm_exact_values) {
  // eps = 0: a = s / sqrt(var) = {0.5/2, 2/0.5} = {0.25, 4}
  // W' = W * a = {0.5, 12};  B' = (B - mean) * a + beta = {0*0.25+0.1, -3*4+0.2} = {0.1, -11.8}
  auto g = compile_graph(conv_bn_graph(0.f));
  BOOST_REQUIRE_MESSAGE(g, (g ? "" : g.message()));
  BOOST_TEST(count_op(*g, "BatchNormalization") == 0);
  BOOST_REQUIRE(g->nodes.size() == 1u);
  const Node& conv = g->nodes[0];
  BOOST_TEST(conv.op == "Conv");
  BOOST_TEST(conv.outputs[0] == g->outputs[0]);
  BOOST_TEST(g->output_infos[0].name == "y");
  BOOST_TEST(g->names.values.at(conv.outputs[0]) == "bn_out");
  auto w = param_floats(*g, conv.inputs[1]);
  auto b = param_floats(*g, conv.inputs[2]);
  BOOST_REQUIRE(w.size() == 2u);
  BOOST_REQUIRE(b.size() == 2u);
  BOOST_TEST(w[0] == 0.5f);
  BOOST_TEST(w[1] == 12.f);
  BOOST_TEST(b[0] == 0.1f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(b[1] == -11.8f, boost::test_tools::tolerance(1e-6f));
  // Unused old params are gone: W', B' only.
  BOOST_TEST(g->params.size() == 2u);
}

BOOST_AUTO_TEST_CASE(fold_batchnorm_matches_unfolded_output) {
  // Conv then BN computed by hand for a few inputs, against the folded conv.
  const float eps = 1e-3f;
  auto g = compile_graph(conv_bn_graph(eps));
  BOOST_REQUIRE(g);
  auto w = param_floats(*g, g->nodes[0].inputs[1]);
  auto b = param_floats(*g, g->nodes[0].inputs[2]);
  const double W[2] = {2, 3}, B[2] = {1, -1}, S[2] = {0.5, 2}, BETA[2] = {0.1, 0.2}, M[2] = {1, 2},
               V[2] = {4, 0.25};
  for (double x : {-2.0, 0.0, 0.75, 3.5}) {
    for (int c = 0; c < 2; ++c) {
      double conv = W[c] * x + B[c];
      double ref = S[c] * (conv - M[c]) / std::sqrt(V[c] + eps) + BETA[c];
      double folded = w[c] * x + b[c];
      BOOST_TEST(folded == ref, boost::test_tools::tolerance(1e-5));
    }
  }
}

BOOST_AUTO_TEST_CASE(fold_batchnorm_skips_shared_conv_output) {
  auto g = compile_graph(conv_bn_graph(0.f, /*second_consumer=*/true));
  BOOST_REQUIRE(g);
  BOOST_TEST(count_op(*g, "BatchNormalization") == 1);
}

BOOST_AUTO_TEST_CASE(fold_batchnorm_conv_transpose_grouped) {
  // ConvTranspose W is [Cin, M/group, k, k]. Cin=2, group=2, M/group=2 -> M=4; output channel of
  // W[ci, j] is (ci / (Cin/group)) * (M/group) + j = ci*2 + j.
  Graph g;
  int32_t x = add_input(g, "x", {1, 2, 1, 1});
  int32_t w = add_f32(g, {2, 2, 1, 1}, {1, 1, 1, 1});
  Attributes ca;
  ca.set("group", int64_t{2});
  int32_t c = add_node(g, "ConvTranspose", {x, w}, 1, ca);
  int32_t s = add_f32(g, {4}, {1, 2, 3, 4});
  int32_t beta = add_f32(g, {4}, {0, 0, 0, 1});
  int32_t mean = add_f32(g, {4}, {0, 0, 1, 0});
  int32_t var = add_f32(g, {4}, {1, 1, 1, 1});
  Attributes a;
  a.set("epsilon", 0.f);
  set_output(g, add_node(g, "BatchNormalization", {c, s, beta, mean, var}, 1, a), "y");
  auto out = compile_graph(std::move(g));
  BOOST_REQUIRE_MESSAGE(out, (out ? "" : out.message()));
  BOOST_TEST(count_op(*out, "BatchNormalization") == 0);
  auto w2 = param_floats(*out, out->nodes[0].inputs[1]);
  auto b2 = param_floats(*out, out->nodes[0].inputs[2]);
  BOOST_TEST(w2 == (std::vector<float>{1, 2, 3, 4}), boost::test_tools::per_element());
  BOOST_TEST(b2 == (std::vector<float>{0, 0, -3, 1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(remove_identity_keeps_output_names) {
  Graph g;
  int32_t x = add_input(g, "x", {2});
  int32_t w = add_f32(g, {2}, {1, 2});
  int32_t wi = add_node(g, "Identity", {w});  // torch exports weights through Identity
  int32_t r = add_node(g, "Mul", {x, wi});
  int32_t i1 = add_node(g, "Identity", {r});
  int32_t i2 = add_node(g, "Dropout", {i1}, 2);  // mask output unused
  set_output(g, i2, "out");
  set_output(g, add_node(g, "Identity", {x}), "passthrough");  // input -> output needs a copy
  auto out = compile_graph(std::move(g));
  BOOST_REQUIRE_MESSAGE(out, (out ? "" : out.message()));
  BOOST_TEST(count_op(*out, "Dropout") == 0);
  BOOST_TEST(count_op(*out, "Identity") == 1);  // only the input passthrough
  BOOST_REQUIRE(out->nodes[0].op == "Mul");
  BOOST_TEST((out->values[out->nodes[0].inputs[1]].kind == ValueKind::param));
  BOOST_TEST(out->outputs[0] == out->nodes[0].outputs[0]);
  BOOST_TEST(out->output_infos[0].name == "out");
  BOOST_TEST(out->value_label(out->outputs[0]) == "output 'out'");
  BOOST_TEST(out->output_infos[1].name == "passthrough");
}

// Training mode with a ratio of 0 drops nothing (Swin's attention dropout as torch exports it,
// ratio and training_mode from Constant nodes, known only once they are folded); another ratio
// in training mode is kept for its kernel.
BOOST_AUTO_TEST_CASE(dropout_of_ratio_0_in_training_mode_goes) {
  for (float ratio : {0.f, 0.3f}) {
    Graph g;
    int32_t x = add_input(g, "x", {2});
    const uint8_t yes = 1;
    int32_t training =
        g.add_param(DType::boolean, Shape{}, SharedBytes::copy_of(std::as_bytes(std::span(&yes, 1))));
    int32_t r = add_node(g, "Add", {add_f32(g, {}, {ratio}), add_f32(g, {}, {0.f})});  // a param once folded
    set_output(g, add_node(g, "Dropout", {add_node(g, "Relu", {x}), r, training}, 2), "y");
    auto out = compile_graph(std::move(g));
    BOOST_REQUIRE_MESSAGE(out, (out ? "" : out.message()));
    BOOST_TEST(count_op(*out, "Dropout") == (ratio == 0.f ? 0 : 1), "ratio " << ratio);
  }
}

BOOST_AUTO_TEST_CASE(dropout_with_its_mask_in_use_stays_for_its_kernel) {
  Graph g;
  int32_t x = add_input(g, "x", {2});
  Node d;
  d.op = "Dropout";
  d.inputs = {x};
  d.outputs = {g.add_value(Value{}), g.add_value(Value{})};
  g.nodes.push_back(d);
  g.names.nodes[0] = "drop";
  set_output(g, d.outputs[0], "y");
  set_output(g, d.outputs[1], "mask");
  auto out = compile_graph(std::move(g));
  BOOST_REQUIRE(out.ok());
  BOOST_REQUIRE(out->nodes.size() == 1u);
  BOOST_TEST(out->nodes[0].op == "Dropout");
}

// A Pad of nothing is a copy and goes (DenseNet's average pools as PyTorch exports them: a
// Pad of zeros between two channels-last ops cost two layout reorders as well); any real pad,
// a pads count that does not match the rank, or pads computed at run time keep the node.
BOOST_AUTO_TEST_CASE(pad_of_nothing_goes) {
  auto i64 = [](Graph& g, std::vector<int64_t> v) {
    return g.add_param(DType::int64, Shape{static_cast<int64_t>(v.size())},
                       SharedBytes::copy_of(std::as_bytes(std::span<const int64_t>(v))));
  };
  struct Case {
    const char* what;
    std::vector<int64_t> pads;
    bool as_attribute;
    bool goes;
  };
  const Case cases[] = {
      {"zeros", {0, 0, 0, 0, 0, 0, 0, 0}, false, true},
      {"zeros, opset 2 attribute", {0, 0, 0, 0, 0, 0, 0, 0}, true, true},
      {"one pad", {0, 0, 0, 1, 0, 0, 0, 0}, false, false},
      {"one pad, attribute", {0, 0, 0, 0, 0, 0, 1, 0}, true, false},
      {"a crop", {0, 0, 0, 0, 0, 0, 0, -1}, false, false},
      {"6 pads for rank 4", {0, 0, 0, 0, 0, 0}, false, false},
  };
  for (const Case& c : cases) {
    Graph g;
    int32_t x = add_input(g, "x", {1, 2, 3, 3});
    int32_t r = add_node(g, "Relu", {x});
    g.values[r].shape = {1, 2, 3, 3};
    Attributes a;
    a.set("mode", std::string("constant"));
    std::vector<int32_t> in = {r};
    if (c.as_attribute)
      a.set("pads", c.pads);
    else
      in.push_back(i64(g, c.pads));
    set_output(g, add_node(g, "Pad", in, 1, a), "y");
    auto out = compile_graph(std::move(g));
    BOOST_REQUIRE_MESSAGE(out, (out ? "" : out.message()));
    BOOST_TEST(count_op(*out, "Pad") == (c.goes ? 0 : 1), c.what);
    BOOST_TEST(out->output_infos[0].name == "y");
    if (c.goes) BOOST_TEST(out->outputs[0] == out->nodes[0].outputs[0], c.what);  // the Relu's
  }
  // Pads known only at run time (a graph input here) keep the Pad.
  Graph g;
  int32_t x = add_input(g, "x", {1, 2, 3, 3});
  Value pv;
  pv.kind = ValueKind::input;
  pv.dtype = DType::int64;
  pv.shape = {8};
  const int32_t pads = g.add_value(pv);
  g.inputs.push_back(pads);
  g.input_infos.push_back(TensorInfo{"pads", DType::int64, {8}, {}});
  int32_t r = add_node(g, "Relu", {x});
  g.values[r].shape = {1, 2, 3, 3};
  set_output(g, add_node(g, "Pad", {r, pads}), "y");
  auto out = compile_graph(std::move(g));
  BOOST_REQUIRE_MESSAGE(out, (out ? "" : out.message()));
  BOOST_TEST(count_op(*out, "Pad") == 1);
}

namespace {

// A fake kernel: y = x + 1 (float32, any shape).
class AddOne final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const float* in = ctx.inputs[0].as<float>();
    float* out = ctx.outputs[0].as<float>();
    for (int64_t i = 0; i < ctx.outputs[0].numel(); ++i) out[i] = in[i] + 1.f;
  }
};

Expected<std::unique_ptr<Kernel>> make_add_one(const KernelSetup& s) {
  if (s.inputs.size() != 1 || !s.inputs[0] || s.inputs[0]->dtype != DType::float32)
    return make_error("AddOne wants one float32 input");
  return std::unique_ptr<Kernel>(std::make_unique<AddOne>());
}

Graph fold_graph() {
  Graph g;
  int32_t x = add_input(g, "x", {3});
  int32_t p = add_f32(g, {3}, {1, 2, 3});
  int32_t a1 = add_node(g, "AddOne", {p});
  int32_t a2 = add_node(g, "AddOne", {a1});
  int32_t m = add_node(g, "Mul", {x, a2});
  set_output(g, m, "y");
  set_output(g, add_node(g, "AddOne", {p}), "direct");  // writes a graph output: never folded
  return g;
}

}  // namespace

BOOST_AUTO_TEST_CASE(fold_constants_with_injected_kernel) {
  KernelRegistry reg;
  reg.add("AddOne", &make_add_one);
  auto out = compile_graph(fold_graph(), {}, reg);
  BOOST_REQUIRE_MESSAGE(out, (out ? "" : out.message()));
  BOOST_TEST(out->nodes.size() == 2u);
  BOOST_TEST(out->nodes[0].op == "Mul");
  BOOST_TEST(out->nodes[1].op == "AddOne");
  auto folded = param_floats(*out, out->nodes[0].inputs[1]);
  BOOST_TEST(folded == (std::vector<float>{3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(out->values[out->nodes[0].inputs[1]].shape == (Shape{3}));
}

BOOST_AUTO_TEST_CASE(fold_constants_respects_size_limit_and_missing_kernels) {
  KernelRegistry reg;
  reg.add("AddOne", &make_add_one);
  CompileOptions small;
  small.max_folded_bytes = 8;  // the 12-byte outputs must not be folded
  auto out = compile_graph(fold_graph(), small, reg);
  BOOST_REQUIRE(out);
  BOOST_TEST(count_op(*out, "AddOne") == 3);
  KernelRegistry empty;
  auto out2 = compile_graph(fold_graph(), {}, empty);
  BOOST_REQUIRE(out2);
  BOOST_TEST(count_op(*out2, "AddOne") == 3);
}

// A MaxPool of a constant folds when it is cheap; over a window that would take ~2^30 steps it is
// left to run time (ShapeContext::work), so compiling stays quick (fuzz_onnx: a 3 x 256 window
// over a padded constant took 22 s under ASan).
BOOST_AUTO_TEST_CASE(fold_constants_leaves_expensive_nodes_to_run_time) {
  auto graph = [](std::vector<int64_t> kernel, std::vector<int64_t> pads) {
    Graph g;
    const int32_t x = add_input(g, "x", {1});
    const int32_t c = add_f32(g, {1, 1, 4, 4}, std::vector<float>(16, 1.0f));
    const int32_t pool = add_node(g, "MaxPool", {c});
    g.nodes.back().attrs.set("kernel_shape", kernel);
    g.nodes.back().attrs.set("pads", pads);
    const int32_t flat = add_node(g, "ReduceMax", {pool});
    g.nodes.back().attrs.set("keepdims", int64_t{0});
    set_output(g, add_node(g, "Add", {x, flat}), "y");
    return g;
  };
  auto cheap = compile_graph(graph({2, 2}, {0, 0, 0, 0}));
  BOOST_REQUIRE_MESSAGE(cheap, (cheap ? "" : cheap.message()));
  BOOST_TEST(count_op(*cheap, "MaxPool") == 0);
  // 64 x 64 outputs (16 KB, well within the size limit), each over a 512 x 512 window: 2^30 steps.
  auto dear = compile_graph(graph({512, 512}, {285, 285, 286, 286}));
  BOOST_REQUIRE_MESSAGE(dear, (dear ? "" : dear.message()));
  BOOST_TEST(count_op(*dear, "MaxPool") == 1);
}

// The same through the default registry, whose fast MatMul takes the node on CPUs with a fast
// path: a product of two constants of 2^28 multiply-adds stays; a small one folds.
BOOST_AUTO_TEST_CASE(fold_constants_leaves_a_large_constant_matmul_to_run_time) {
  auto graph = [](int64_t m, int64_t k, int64_t n) {
    Graph g;
    const int32_t x = add_input(g, "x", {1});
    const int32_t a = add_f32(g, {m, k}, std::vector<float>(static_cast<std::size_t>(m * k), 0.5f));
    const int32_t b = add_f32(g, {k, n}, std::vector<float>(static_cast<std::size_t>(k * n), 0.25f));
    const int32_t p = add_node(g, "MatMul", {a, b});
    const int32_t r = add_node(g, "ReduceMax", {p});
    g.nodes.back().attrs.set("keepdims", int64_t{0});
    set_output(g, add_node(g, "Add", {x, r}), "y");
    return g;
  };
  auto small = compile_graph(graph(8, 8, 8));
  BOOST_REQUIRE_MESSAGE(small, (small ? "" : small.message()));
  BOOST_TEST(count_op(*small, "MatMul") == 0);
  auto large = compile_graph(graph(512, 1024, 512));  // 1 MB out, 2^28 steps
  BOOST_REQUIRE_MESSAGE(large, (large ? "" : large.message()));
  BOOST_TEST(count_op(*large, "MatMul") == 1);
}

BOOST_AUTO_TEST_CASE(dead_code_is_removed) {
  Graph g;
  int32_t x = add_input(g, "x", {2});
  int32_t unused_w = add_f32(g, {2}, {7, 7});
  add_node(g, "Mul", {x, unused_w});  // result never used
  set_output(g, add_node(g, "Relu", {x}), "y");
  auto out = compile_graph(std::move(g));
  BOOST_REQUIRE(out);
  BOOST_TEST(out->nodes.size() == 1u);
  BOOST_TEST(out->nodes[0].op == "Relu");
  BOOST_TEST(out->params.empty());
  BOOST_TEST(out->values.size() == 2u);
}

BOOST_AUTO_TEST_CASE(invalid_graph_is_rejected) {
  Graph g;
  add_input(g, "x", {2});
  Node n;
  n.op = "Relu";
  n.inputs = {42};  // out of range
  n.outputs = {g.add_value(Value{})};
  g.nodes.push_back(n);
  set_output(g, n.outputs[0], "y");
  auto out = compile_graph(std::move(g));
  BOOST_REQUIRE(!out);
  BOOST_TEST(out.message().find("out of range") != std::string::npos);
}
