// Kernels that claim to be safe in place (core/kernels/in_place.h) really are: run with the
// output buffer passed as the input too, they produce exactly what they produce out of place,
// serially and split over threads. And kernels that do not claim it (copies, convolutions,
// softmax, variadic accumulation) are not offered to the planner.
#define BOOST_TEST_MODULE kernel_in_place
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/kernels/in_place.h"
#include "core/kernels/registry.h"
#include "core/threads/thread_pool.h"
#include "tests/kernels/kernel_harness.h"

using namespace weave;
using weave::test::random_f32;

namespace {

struct Made {
  std::unique_ptr<Kernel> kernel;
  std::vector<TensorView> outs;
  std::size_t workspace = 0;
  std::shared_ptr<const KernelState> state;
};

// Creates the registry's kernel for `op` over inputs of these dtypes/dims (inputs flagged
// constant are visible as params) and infers its output.
Made make(const std::string& op, const Attributes& attrs, const std::vector<const Tensor*>& inputs,
          const std::vector<bool>& constant = {}) {
  std::vector<Value> values(inputs.size());
  std::vector<const Value*> vp(inputs.size());
  std::vector<ConstTensorView> consts(inputs.size()), known(inputs.size());
  Node node;
  node.op = op;
  node.attrs = attrs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const bool c = i < constant.size() && constant[i];
    node.inputs.push_back(static_cast<int32_t>(i));
    values[i].kind = c ? ValueKind::param : ValueKind::intermediate;
    values[i].dtype = inputs[i]->dtype();
    values[i].shape = inputs[i]->dims().to_shape();
    vp[i] = &values[i];
    known[i] = ConstTensorView{c ? inputs[i]->data() : nullptr, inputs[i]->dtype(), inputs[i]->dims()};
    if (c) consts[i] = inputs[i]->view();
  }
  node.outputs = {static_cast<int32_t>(inputs.size())};
  const std::string label = "in-place test (" + op + ")";
  auto k = KernelRegistry::global().create(KernelSetup{node, label, vp, consts, 13});
  BOOST_TEST_REQUIRE(k.ok(), (k.ok() ? "" : k.message()));
  Made m;
  m.kernel = std::move(*k);
  m.outs.resize(1);
  ShapeContext sc{known, m.outs, 0, label};
  BOOST_TEST_REQUIRE(m.kernel->infer(sc).ok());
  m.workspace = sc.workspace;
  m.state = sc.state;
  return m;
}

// Out of place, then in place over input `k` (whose dims must be the output's); bit-exact.
void check_in_place(const std::string& op, const Attributes& attrs, const std::vector<const Tensor*>& inputs,
                    std::size_t k, const Parallel& par, const std::vector<bool>& constant = {}) {
  BOOST_TEST_CONTEXT(op << " over input " << k << " on " << par.threads() << " threads") {
    Made m = make(op, attrs, inputs, constant);
    BOOST_TEST_REQUIRE((in_place_inputs(*m.kernel) >> k & 1u) == 1u);
    BOOST_TEST_REQUIRE(m.workspace == 0u);  // no scratch copy of the input either
    const TensorView out_info = m.outs[0];
    BOOST_TEST_REQUIRE((out_info.dtype == inputs[k]->dtype()));
    BOOST_TEST_REQUIRE((out_info.dims == inputs[k]->dims()));
    Tensor want(out_info.dtype, out_info.dims);
    std::vector<ConstTensorView> ins;
    for (const Tensor* t : inputs) ins.push_back(t->view());
    std::vector<TensorView> outs{TensorView{want.data(), out_info.dtype, out_info.dims}};
    m.kernel->run(RunContext{ins, outs, {}, par, m.state.get()});

    Tensor shared = Tensor::copy_of(inputs[k]->view());
    ins[k] = ConstTensorView{shared.data(), shared.dtype(), shared.dims()};
    outs[0] = TensorView{shared.data(), out_info.dtype, out_info.dims};
    m.kernel->run(RunContext{ins, outs, {}, par, m.state.get()});
    BOOST_TEST(std::memcmp(shared.data(), want.data(), want.bytes()) == 0);
  }
}

const std::vector<std::string> kUnary = {
    "Relu", "LeakyRelu",  "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",  "Exp",      "Sqrt", "Abs",
    "Neg",  "Reciprocal", "Floor",   "Ceil",        "Round",     "Erf",   "Softplus", "Elu",  "Selu",
    "Gelu", "Sin",        "Cos",     "Sign",        "Log",       "Swish", "Mish"};
const std::vector<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};

}  // namespace

BOOST_AUTO_TEST_CASE(unary_kernels_and_clip_run_in_place) {
  const ThreadPool pool(3);
  const Parallel* pars[] = {&SerialParallel::instance(), &pool};
  // Big enough (> kGrain) to be split over the pool's threads; positive for Log and Sqrt.
  const Tensor x = random_f32(Dims{3, 5, 700}, 11, 0.01f, 4.f);
  const Tensor xs = random_f32(Dims{3, 5, 700}, 12, -4.f, 4.f);
  for (const Parallel* par : pars) {
    for (const std::string& op : kUnary)
      check_in_place(op, {}, {op == "Log" || op == "Sqrt" ? &x : &xs}, 0, *par);
    const Tensor lo = weave::test::make_f32(Dims{}, {-0.5f}), hi = weave::test::make_f32(Dims{}, {1.5f});
    check_in_place("Clip", {}, {&xs, &lo, &hi}, 0, *par);
    // Constant bounds and exponents: the fast kernels' forms where the CPU has them.
    check_in_place("Clip", {}, {&xs, &lo, &hi}, 0, *par, {false, true, true});
    const Tensor two = weave::test::make_f32(Dims{}, {2.f});
    check_in_place("Pow", {}, {&xs, &two}, 0, *par, {false, true});
  }
}

BOOST_AUTO_TEST_CASE(binary_kernels_run_in_place_over_either_full_size_input) {
  const ThreadPool pool(3);
  const Parallel* pars[] = {&SerialParallel::instance(), &pool};
  const Tensor a = random_f32(Dims{4, 3, 500}, 21, 0.5f, 2.f);
  const Tensor b = random_f32(Dims{4, 3, 500}, 22, 0.5f, 2.f);
  const Tensor row = random_f32(Dims{500}, 23, 0.5f, 2.f);      // broadcast along the outer dims
  const Tensor col = random_f32(Dims{4, 3, 1}, 24, 0.5f, 2.f);  // broadcast along the inner dim
  const Tensor one = random_f32(Dims{1}, 25, 0.5f, 2.f);
  for (const Parallel* par : pars)
    for (const std::string& op : kBinary) {
      check_in_place(op, {}, {&a, &b}, 0, *par);
      check_in_place(op, {}, {&a, &b}, 1, *par);
      check_in_place(op, {}, {&a, &row}, 0, *par);
      check_in_place(op, {}, {&col, &a}, 1, *par);
      check_in_place(op, {}, {&one, &a}, 1, *par);
      check_in_place(op, {}, {&a, &a}, 0, *par);  // the same buffer on both sides
    }
}

BOOST_AUTO_TEST_CASE(other_kernels_are_never_offered_in_place) {
  const Tensor x = random_f32(Dims{1, 2, 5, 5}, 31);
  const Tensor w = random_f32(Dims{2, 2, 3, 3}, 32);
  Attributes conv;
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  BOOST_TEST(in_place_inputs(*make("Conv", conv, {&x, &w}, {false, true}).kernel) == 0u);
  BOOST_TEST(in_place_inputs(*make("Identity", {}, {&x}).kernel) == 0u);  // memcpy
  BOOST_TEST(in_place_inputs(*make("Softmax", {}, {&x}).kernel) == 0u);   // reads the whole row
  BOOST_TEST(in_place_inputs(*make("Cast",
                                   [] {
                                     Attributes a;
                                     a.set("to", int64_t{7});
                                     return a;
                                   }(),
                                   {&x})
                                  .kernel) == 0u);
  // Sum accumulates into its output: a third input would be overwritten before it is read.
  BOOST_TEST(in_place_inputs(*make("Sum", {}, {&x, &x, &x}).kernel) == 0u);
  BOOST_TEST(in_place_inputs(*make("Equal", {}, {&x, &x}).kernel) == 0u);  // bool output
  BOOST_TEST(in_place_inputs(*make("Add", {}, {&x, &x}).kernel) == 3u);
  BOOST_TEST(in_place_inputs(*make("Relu", {}, {&x}).kernel) == 1u);
}
