// Runtime units: the memory planner (a pure function), the thread pool, and Factory/Executor/
// FactoryCache behaviour on small graphs built by hand with test-local kernels, so these tests
// depend on no real operator.
#define BOOST_TEST_MODULE runtime
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <random>
#include <thread>

#include "core/kernels/registry.h"
#include "core/runtime/executor.h"
#include "core/runtime/factory.h"
#include "core/runtime/factory_cache.h"
#include "core/runtime/memory_planner.h"
#include "core/threads/thread_pool.h"

using namespace weave;

// ---------------------------------------------------------------- memory planner

BOOST_AUTO_TEST_CASE(planner_reuses_memory_of_dead_tensors) {
  // a: steps 0-1, b: 1-2, c: 2-3. a and c never live together, so they share offset 0.
  std::vector<TensorLifetime> t{{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}};
  MemoryPlan p = plan_memory(t);
  BOOST_TEST(plan_is_valid(t, p));
  BOOST_TEST(p.arena_bytes == 2 * align_up(1000));
  BOOST_TEST(p.offsets[0] == p.offsets[2]);
  BOOST_TEST(p.offsets[0] != p.offsets[1]);
}

BOOST_AUTO_TEST_CASE(planner_offsets_are_aligned_and_valid_on_random_lifetimes) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<TensorLifetime> t(1 + rng() % 60);
    std::size_t sum = 0;
    for (auto& x : t) {
      x.bytes = 1 + rng() % 5000;
      x.first = static_cast<int32_t>(rng() % 40);
      x.last = x.first + static_cast<int32_t>(rng() % 10);
      sum += align_up(x.bytes);
    }
    MemoryPlan p = plan_memory(t);
    BOOST_TEST_REQUIRE(plan_is_valid(t, p));
    BOOST_TEST(p.arena_bytes <= sum);
    for (std::size_t o : p.offsets) BOOST_TEST(o % kAlignment == 0);
  }
}

BOOST_AUTO_TEST_CASE(planner_detects_overlap_in_a_bad_plan) {
  std::vector<TensorLifetime> t{{100, 0, 2}, {100, 1, 3}};
  MemoryPlan bad{{0, 0}, 128};
  BOOST_TEST(!plan_is_valid(t, bad));
}

// ---------------------------------------------------------------- thread pool

BOOST_AUTO_TEST_CASE(thread_pool_covers_every_index_once) {
  ThreadPool pool(3);
  BOOST_TEST(pool.threads() == 3);
  for (int64_t n : {1, 2, 7, 64, 1000, 4097}) {
    for (int64_t grain : {1, 3, 100}) {
      std::vector<std::atomic<int>> hits(n);
      pool.for_range(n, grain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(hits[i].load() == 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(thread_pool_survives_many_back_to_back_jobs_from_two_callers) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  auto caller = [&] {
    for (int j = 0; j < 500; ++j) pool.for_range(16, 1, [&](int64_t b, int64_t e) { total += e - b; });
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  BOOST_TEST(total.load() == 2 * 500 * 16);
}

// ---------------------------------------------------------------- factory / executor

namespace {

// y = x + c, where c is the float attribute "c" (or a param second input if present).
class AddConstKernel final : public Kernel {
 public:
  explicit AddConstKernel(float c) : c_(c) {}
  Status infer(ShapeContext& ctx) const override {
    if (ctx.inputs[0].dtype != DType::float32) return make_error(ctx.label, ": float32 only");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const float* x = ctx.inputs[0].as<float>();
    float* y = ctx.outputs[0].as<float>();
    float c = c_;
    if (ctx.inputs.size() > 1) c = *ctx.inputs[1].as<float>();
    for (int64_t i = 0; i < ctx.inputs[0].numel(); ++i) y[i] = x[i] + c;
  }

 private:
  float c_;
};

Expected<std::unique_ptr<Kernel>> make_add_const(const KernelSetup& s) {
  return std::unique_ptr<Kernel>(new AddConstKernel(s.node.attrs.get_float("c", 0.f)));
}

// Shape: int64 dims of its input, computed from dims only.
class ShapeKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    ctx.outputs[0].dtype = DType::int64;
    ctx.outputs[0].dims = Dims{ctx.inputs[0].dims.rank()};
    return {};
  }
  void run(const RunContext& ctx) const override {
    for (int i = 0; i < ctx.inputs[0].dims.rank(); ++i)
      ctx.outputs[0].as<int64_t>()[i] = ctx.inputs[0].dims[i];
  }
};

Expected<std::unique_ptr<Kernel>> make_shape(const KernelSetup&) {
  return std::unique_ptr<Kernel>(new ShapeKernel());
}

const KernelRegistry& test_registry() {
  static KernelRegistry r = [] {
    KernelRegistry reg;
    reg.add("AddConst", make_add_const);
    reg.add("Shape", make_shape);
    return reg;
  }();
  return r;
}

// x[?,4] -> AddConst(1) -> t -> AddConst(param 10) -> y ; Shape(x) -> s (second output)
Graph small_graph() {
  Graph g;
  Value in;
  in.kind = ValueKind::input;
  in.dtype = DType::float32;
  in.shape = {kDynamic, 4};
  int32_t x = g.add_value(in);
  g.inputs = {x};
  g.input_infos = {TensorInfo{"x", DType::float32, {kDynamic, 4}, {"batch", ""}}};
  float ten = 10.f;
  int32_t c = g.add_param(DType::float32, {1}, SharedBytes::copy_of(std::as_bytes(std::span(&ten, 1))));
  Value mid;
  mid.dtype = DType::float32;
  int32_t t = g.add_value(mid);
  int32_t y = g.add_value(mid);
  Value sv;
  sv.dtype = DType::int64;
  int32_t s = g.add_value(sv);
  Node a;
  a.op = "AddConst";
  a.inputs = {x};
  a.outputs = {t};
  a.attrs.set("c", 1.f);
  Node b;
  b.op = "AddConst";
  b.inputs = {t, c};
  b.outputs = {y};
  Node sh;
  sh.op = "Shape";
  sh.inputs = {x};
  sh.outputs = {s};
  g.nodes = {a, b, sh};
  g.outputs = {y, s};
  g.output_infos = {TensorInfo{"y", DType::float32, {kDynamic, 4}, {}},
                    TensorInfo{"x_shape", DType::int64, {2}, {}}};
  g.names.nodes[0] = "first_add";
  return g;
}

std::shared_ptr<const Factory> small_factory() {
  FactoryOptions o;
  o.registry = &test_registry();
  auto f = Factory::create(small_graph(), o);
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  return *f;
}

}  // namespace

BOOST_AUTO_TEST_CASE(factory_counts_real_inputs_and_params_apart) {
  auto f = small_factory();
  BOOST_TEST(f->num_inputs() == 1);
  BOOST_TEST(f->num_params() == 1);
  BOOST_TEST(f->param_bytes() == 4);
  BOOST_TEST(f->num_outputs() == 2);
  BOOST_TEST(*f->input_index("x") == 0);
  BOOST_TEST(*f->output_index("x_shape") == 1);
  auto bad = f->output_index("logits");
  BOOST_TEST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.message().find("'logits'") != std::string::npos);
  BOOST_TEST(bad.message().find("'y', 'x_shape'") != std::string::npos);
  // Dynamic batch alone defaults to batch 1, so a plan exists from the start.
  BOOST_TEST_REQUIRE(f->default_plan() != nullptr);
  BOOST_TEST(f->default_plan()->folded_nodes == 1);  // Shape(x) is computed while planning
  BOOST_TEST(f->default_plan()->steps.size() == 2u);
}

BOOST_AUTO_TEST_CASE(executor_stateful_and_stateless_runs_agree) {
  auto f = small_factory();
  auto ex = Executor::create(f);
  BOOST_TEST_REQUIRE(ex.ok());
  std::vector<float> xs{1, 2, 3, 4, 5, 6, 7, 8};
  ConstTensorView x{xs.data(), DType::float32, Dims{2, 4}};
  BOOST_TEST_REQUIRE(ex->set_input("x", x).ok());
  BOOST_TEST_REQUIRE(ex->run().ok());
  auto y = ex->output("y");
  BOOST_TEST_REQUIRE(y.ok());
  BOOST_TEST(y->dims == (Dims{2, 4}));
  for (int i = 0; i < 8; ++i) BOOST_TEST(y->as<float>()[i] == xs[i] + 11.f);
  auto s = ex->output("x_shape");
  BOOST_TEST(s->as<int64_t>()[0] == 2);
  BOOST_TEST(s->as<int64_t>()[1] == 4);

  auto ex2 = Executor::create(f);
  std::vector<ConstTensorView> ins{x};
  auto outs = ex2->run(ins);
  BOOST_TEST_REQUIRE(outs.ok());
  BOOST_TEST(std::memcmp((*outs)[0].data(), y->data, 32) == 0);
}

BOOST_AUTO_TEST_CASE(executors_share_the_factory_plan_for_equal_dims) {
  auto f = small_factory();
  auto a = Executor::create(f);
  auto b = Executor::create(f);
  BOOST_TEST(a->plan() == b->plan());
  std::vector<float> xs(12, 1.f);
  BOOST_TEST_REQUIRE(a->set_input(0, ConstTensorView{xs.data(), DType::float32, Dims{3, 4}}).ok());
  BOOST_TEST_REQUIRE(b->set_input(0, ConstTensorView{xs.data(), DType::float32, Dims{3, 4}}).ok());
  BOOST_TEST_REQUIRE(a->run().ok());
  BOOST_TEST_REQUIRE(b->run().ok());
  BOOST_TEST(a->plan() == b->plan());
  BOOST_TEST(a->plan()->input_dims[0] == (Dims{3, 4}));
}

BOOST_AUTO_TEST_CASE(executor_rejects_bad_inputs_with_clear_messages) {
  auto f = small_factory();
  auto ex = Executor::create(f);
  std::vector<float> xs(8, 0.f);
  std::vector<int64_t> is(8, 0);
  Status s = ex->set_input("nope", ConstTensorView{xs.data(), DType::float32, Dims{2, 4}});
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.message().find("'nope'") != std::string::npos);
  BOOST_TEST(s.message().find("'x'") != std::string::npos);
  s = ex->set_input("x", ConstTensorView{is.data(), DType::int64, Dims{2, 4}});
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.message().find("expected dtype float32, got int64") != std::string::npos);
  s = ex->set_input("x", ConstTensorView{xs.data(), DType::float32, Dims{4, 2}});
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.message().find("float32[batch,4]") != std::string::npos);
  BOOST_TEST(s.message().find("4x2") != std::string::npos);
  s = ex->set_input(3, ConstTensorView{xs.data(), DType::float32, Dims{2, 4}});
  BOOST_TEST(!s.ok());
  auto out = ex->output("y");
  BOOST_TEST(!out.ok());  // not run yet
  BOOST_TEST(!ex->output(5).ok());
  auto fresh = Executor::create(f);
  BOOST_TEST(!fresh->run().ok());  // input never set
}

BOOST_AUTO_TEST_CASE(factory_reports_every_unsupported_node) {
  Graph g = small_graph();
  g.nodes[0].op = "Mystery";
  g.nodes[1].op = "Enigma";
  FactoryOptions o;
  o.registry = &test_registry();
  auto f = Factory::create(g, o);
  BOOST_TEST_REQUIRE(!f.ok());
  BOOST_TEST(f.message().find("Mystery") != std::string::npos);
  BOOST_TEST(f.message().find("first_add") != std::string::npos);
  BOOST_TEST(f.message().find("Enigma") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_value_planned_as_another_dtype_than_stated_is_refused) {
  // The graph states t is int32 but AddConst makes float32: the second AddConst was made for
  // the stated dtype, so the plan refuses before it reads the value (fuzz_onnx: a bool read as
  // floats by a Softmax made for an output declared float).
  Graph g = small_graph();
  g.values[g.nodes[0].outputs[0]].dtype = DType::int32;
  FactoryOptions o;
  o.registry = &test_registry();
  auto f = Factory::create(g, o);
  BOOST_TEST_REQUIRE(!f.ok());
  BOOST_TEST(f.message().find("node 1") != std::string::npos, f.message());
  BOOST_TEST(f.message().find("is float32 when planned, but the graph states int32") != std::string::npos,
             f.message());
}

BOOST_AUTO_TEST_CASE(profile_has_one_row_per_step) {
  auto f = small_factory();
  ExecutorOptions eo;
  eo.profile = true;
  auto ex = Executor::create(f, eo);
  std::vector<float> xs(4, 0.f);
  BOOST_TEST_REQUIRE(ex->set_input(0, ConstTensorView{xs.data(), DType::float32, Dims{1, 4}}).ok());
  BOOST_TEST_REQUIRE(ex->run().ok());
  BOOST_TEST(ex->profile().size() == 2u);
  BOOST_TEST(ex->profile()[0].op == "AddConst");
  BOOST_TEST(ex->profile()[0].label.find("first_add") != std::string::npos);
  BOOST_TEST(ex->profile()[0].shapes == "1x4 -> 1x4 ");
}

BOOST_AUTO_TEST_CASE(factory_cache_shares_and_frees) {
  auto& cache = FactoryCache::global();
  int loads = 0;
  auto loader = [&]() -> Expected<std::shared_ptr<const Factory>> {
    ++loads;
    return small_factory();
  };
  auto a = cache.get("test-key", loader);
  auto b = cache.get("test-key", loader);
  BOOST_TEST_REQUIRE(a.ok());
  BOOST_TEST(a->get() == b->get());
  BOOST_TEST(loads == 1);
  std::weak_ptr<const Factory> w = *a;
  *a = nullptr;
  *b = nullptr;
  BOOST_TEST(w.expired());  // the cache holds no strong reference
  auto c = cache.get("test-key", loader);
  BOOST_TEST(loads == 2);
  auto missing = model_cache_key("/nonexistent/model.onnx", "");
  BOOST_TEST(!missing.ok());
  BOOST_TEST(missing.message().find("/nonexistent/model.onnx") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(factory_cache_loads_once_under_concurrent_requests) {
  auto& cache = FactoryCache::global();
  std::atomic<int> loads{0};
  std::vector<std::shared_ptr<const Factory>> got(8);
  std::vector<std::thread> ts;
  for (int i = 0; i < 8; ++i)
    ts.emplace_back([&, i] {
      auto f = cache.get("concurrent-key", [&]() -> Expected<std::shared_ptr<const Factory>> {
        ++loads;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return small_factory();
      });
      got[i] = *f;
    });
  for (auto& t : ts) t.join();
  BOOST_TEST(loads.load() == 1);
  for (auto& g : got) BOOST_TEST(g.get() == got[0].get());
}
