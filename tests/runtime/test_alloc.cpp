// R8 proof: with FactoryOptions::max_shapes, run() makes zero heap allocations for any input
// dims within the bound once those dims have been seen, including when alternating between
// several shapes (plan switches). Every allocation of this executable is counted: operator new
// (all forms) here, and malloc/calloc/realloc/aligned_alloc/posix_memalign called by the test and
// the statically linked core through the linker's --wrap (see meson.build).
#define BOOST_TEST_MODULE alloc
// The replacement operator delete below frees what the replacement operator new got from
// malloc; GCC cannot see that pairing once it inlines them.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/runtime/executor.h"
#include "core/runtime/factory.h"
#include "core/threads/thread_budget.h"
#include "core/threads/thread_pool.h"
#include "tests/runtime/runtime_graphs.h"

namespace {
std::atomic<uint64_t> g_allocs{0};
}

extern "C" {
void* __real_malloc(std::size_t);
void* __real_calloc(std::size_t, std::size_t);
void* __real_realloc(void*, std::size_t);
void* __real_aligned_alloc(std::size_t, std::size_t);
int __real_posix_memalign(void**, std::size_t, std::size_t);
void* __wrap_malloc(std::size_t n) {
  ++g_allocs;
  return __real_malloc(n);
}
void* __wrap_calloc(std::size_t n, std::size_t s) {
  ++g_allocs;
  return __real_calloc(n, s);
}
void* __wrap_realloc(void* p, std::size_t n) {
  ++g_allocs;
  return __real_realloc(p, n);
}
void* __wrap_aligned_alloc(std::size_t a, std::size_t n) {
  ++g_allocs;
  return __real_aligned_alloc(a, n);
}
int __wrap_posix_memalign(void** p, std::size_t a, std::size_t n) {
  ++g_allocs;
  return __real_posix_memalign(p, a, n);
}
}

void* operator new(std::size_t n) {
  ++g_allocs;
  if (void* p = __real_malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  return operator new(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++g_allocs;
  return __real_malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept {
  return operator new(n, t);
}
void* operator new(std::size_t n, std::align_val_t a) {
  ++g_allocs;
  void* p = nullptr;
  if (__real_posix_memalign(&p, std::max(sizeof(void*), static_cast<std::size_t>(a)), n ? n : 1) == 0)
    return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return operator new(n, a);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

using namespace weave;

namespace {

struct Shape2 {
  int64_t h, w;
};
constexpr Shape2 kShapes[] = {{8, 8}, {3, 7}, {1, 1}, {8, 2}, {5, 5}, {2, 8}};

std::shared_ptr<const Factory> bounded_factory() {
  FactoryOptions o;
  o.max_shapes["x"] = {1, 2, 8, 8};
  auto f = Factory::create(weave::test::conv_graph(), o);
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  return *f;
}

bool set_and_run(Executor& ex, const std::vector<float>& x, const Shape2& s) {
  return ex.set_input(0, ConstTensorView{x.data(), DType::float32, Dims{1, 2, s.h, s.w}}).ok() &&
         ex.run().ok();
}

// Runs every shape once (its plan is made or looked up), then `rounds` more times over all
// shapes; returns the allocations of those later rounds, or -1 if a run failed.
int64_t allocs_after_warm_up(Executor& ex, const std::vector<float>& x, int rounds) {
  for (const Shape2& s : kShapes)
    if (!set_and_run(ex, x, s)) return -1;
  const uint64_t before = g_allocs.load();
  bool all_ok = true;
  for (int round = 0; round < rounds; ++round)
    for (const Shape2& s : kShapes) all_ok = set_and_run(ex, x, s) && all_ok;
  const uint64_t allocs = g_allocs.load() - before;
  return all_ok ? static_cast<int64_t>(allocs) : -1;
}

// The expected "y" of conv_graph for each of kShapes, from the first values of x.
std::vector<std::vector<float>> expected_outputs(const std::vector<float>& x) {
  std::vector<std::vector<float>> want(std::size(kShapes));
  for (std::size_t k = 0; k < std::size(kShapes); ++k) {
    std::vector<float> relu;
    weave::test::conv_graph_reference(
        std::vector<float>(x.begin(), x.begin() + 2 * kShapes[k].h * kShapes[k].w), kShapes[k].h,
        kShapes[k].w, relu, want[k]);
  }
  return want;
}

struct Alternation {
  bool all_ok = true, all_right = true;
  uint64_t allocs = 0;
};

// Three rounds over kShapes in changing orders: set_input, run, check output 0 against `want`;
// counts the allocations of all of it.
Alternation alternate_and_check(Executor& ex, const std::vector<float>& x,
                                const std::vector<std::vector<float>>& want) {
  Alternation r;
  const uint64_t before = g_allocs.load();
  for (int round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < std::size(kShapes); ++i) {
      const std::size_t k = (i * (round + 1) + round) % std::size(kShapes);
      const Shape2& s = kShapes[k];
      r.all_ok =
          r.all_ok && ex.set_input(0, ConstTensorView{x.data(), DType::float32, Dims{1, 2, s.h, s.w}}).ok();
      r.all_ok = r.all_ok && ex.run().ok();
      auto y = ex.output(0);
      r.all_ok = r.all_ok && y.ok();
      for (std::size_t j = 0; r.all_ok && j < want[k].size(); ++j)
        r.all_right = r.all_right && std::fabs(y->as<float>()[j] - want[k][j]) < 1e-5f;
    }
  r.allocs = g_allocs.load() - before;
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_counter_sees_allocations) {
  const uint64_t before = g_allocs.load();
  auto* v = new std::vector<int>(100);
  void* p = std::malloc(10);
  // Keep the compiler from eliding the new/delete and malloc/free pairs (it may).
  asm volatile("" : : "g"(v), "g"(p) : "memory");
  AlignedBuffer b(1000);
  const uint64_t after = g_allocs.load();
  std::free(p);
  delete v;
  BOOST_TEST(after - before >= 4u);  // the vector object, its storage, malloc, aligned_alloc
}

BOOST_AUTO_TEST_CASE(alternating_in_bound_shapes_with_set_input_allocates_nothing) {
  auto f = bounded_factory();
  auto ex = Executor::create(f);
  BOOST_TEST_REQUIRE(ex.ok());
  const std::vector<float> x = weave::test::ramp(128);
  const auto want = expected_outputs(x);
  // First sight of each shape: its plan is made (allocates, once), and the counter sees it.
  const uint64_t planning = g_allocs.load();
  for (const Shape2& s : kShapes) {
    BOOST_TEST_REQUIRE(
        ex->set_input(0, ConstTensorView{x.data(), DType::float32, Dims{1, 2, s.h, s.w}}).ok());
    BOOST_TEST_REQUIRE(ex->run().ok());
  }
  BOOST_TEST(g_allocs.load() - planning > 0u);
  const std::size_t arena = ex->arena_bytes();
  // From now on: not one allocation, whatever the order.
  const Alternation r = alternate_and_check(*ex, x, want);
  const uint64_t allocs = r.allocs;
  BOOST_TEST(r.all_ok);
  BOOST_TEST(r.all_right);
  BOOST_TEST(allocs == 0u);
  BOOST_TEST_MESSAGE("allocations over 18 runs alternating 6 in-bound shapes (set_input): " << allocs);
  BOOST_TEST(ex->arena_bytes() == arena);
  BOOST_TEST(ex->stats().arena_growths == 0u);
  BOOST_TEST(ex->stats().plan_switches >= 18u);
}

BOOST_AUTO_TEST_CASE(alternating_shapes_with_bound_buffers_allocates_and_copies_nothing) {
  auto f = bounded_factory();
  auto ex = Executor::create(f);
  BOOST_TEST_REQUIRE(ex.ok());
  AlignedBuffer in(2 * 64 * 4), out(3 * 64 * 4);
  std::memset(in.data(), 0, in.size());
  auto bind = [&](const Shape2& s) {
    return ex->bind_input(0, ConstTensorView{in.data(), DType::float32, Dims{1, 2, s.h, s.w}}).ok() &&
           ex->bind_output(0, TensorView{out.data(), DType::float32, Dims{1, 3, s.h, s.w}}).ok();
  };
  for (const Shape2& s : kShapes) {
    BOOST_TEST_REQUIRE(bind(s));
    BOOST_TEST_REQUIRE(ex->run().ok());
  }
  const uint64_t copies = ex->stats().total.input_copies + ex->stats().total.output_copies;
  bool all_ok = true;
  const uint64_t before = g_allocs.load();
  for (int round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < std::size(kShapes); ++i) {
      all_ok = all_ok && bind(kShapes[(i + 2 * round) % std::size(kShapes)]);
      all_ok = all_ok && ex->run().ok();
    }
  const uint64_t allocs = g_allocs.load() - before;
  BOOST_TEST(all_ok);
  BOOST_TEST(allocs == 0u);
  BOOST_TEST(copies == 0u);
  BOOST_TEST(ex->stats().total.input_copies + ex->stats().total.output_copies == 0u);
  BOOST_TEST_MESSAGE("allocations over 18 zero-copy runs alternating 6 in-bound shapes: " << allocs);
}

BOOST_AUTO_TEST_CASE(a_second_executor_of_a_bounded_factory_allocates_only_at_creation) {
  auto f = bounded_factory();
  auto first = Executor::create(f);
  std::vector<float> x(128, 0.5f);
  BOOST_TEST(allocs_after_warm_up(*first, x, 1) == 0);  // plans made once, in the factory
  auto second = Executor::create(f);
  BOOST_TEST_REQUIRE(second.ok());
  // Its first run of each shape takes the factory's plan (a lookup and a log line's worth of
  // allocation at most); from the second round on it allocates nothing.
  BOOST_TEST(allocs_after_warm_up(*second, x, 2) == 0);
  BOOST_TEST(second->stats().arena_growths == 0u);
}

BOOST_AUTO_TEST_CASE(runs_on_a_thread_pool_allocate_nothing_either) {
  auto f = bounded_factory();
  ExecutorOptions eo;
  eo.parallel = std::make_shared<ThreadPool>(2);
  auto ex = Executor::create(f, eo);
  BOOST_TEST_REQUIRE(ex.ok());
  std::vector<float> x(128, 0.25f);
  const int64_t allocs = allocs_after_warm_up(*ex, x, 3);
  BOOST_TEST(allocs == 0);
  BOOST_TEST_MESSAGE("allocations over 18 runs on a 2-thread pool: " << allocs);
}

BOOST_AUTO_TEST_CASE(a_lending_executor_alternating_shapes_allocates_nothing) {
  auto f = bounded_factory();
  ExecutorOptions eo;
  eo.lend_arena = true;
  auto ex = Executor::create(f, eo);
  BOOST_TEST_REQUIRE(ex.ok());
  BOOST_TEST(ex->arena_bytes() == 0u);
  BOOST_TEST(ThreadBudget::global().arena_reserved() >= f->bound_plan()->arena_bytes);
  const std::vector<float> x = weave::test::ramp(128);
  const auto want = expected_outputs(x);
  // Its own input and output buffers are made on first use, for the bound's dims: the first
  // (smallest) shape already makes them as big as any in-bound shape needs.
  const ShapePlan& bound = *f->bound_plan();
  const auto bytes = [&](int32_t v) { return bound.slots[v].dims.numel() * sizeof(float); };
  std::size_t want_io = bytes(f->graph().inputs[0]);
  for (int32_t v : f->graph().outputs)  // outputs known at plan time are not written by a run
    if (bound.slots[v].kind == SlotKind::arena) want_io += bytes(v);
  BOOST_TEST(ex->io_bytes() == 0u);
  BOOST_TEST_REQUIRE(ex->set_input(0, ConstTensorView{x.data(), DType::float32, Dims{1, 2, 1, 1}}).ok());
  BOOST_TEST_REQUIRE(ex->run().ok());
  BOOST_TEST(ex->io_bytes() == want_io);
  for (const Shape2& s : kShapes) {
    BOOST_TEST_REQUIRE(
        ex->set_input(0, ConstTensorView{x.data(), DType::float32, Dims{1, 2, s.h, s.w}}).ok());
    BOOST_TEST_REQUIRE(ex->run().ok());
  }
  const Alternation r = alternate_and_check(*ex, x, want);
  const uint64_t allocs = r.allocs;
  BOOST_TEST(r.all_ok);
  BOOST_TEST(r.all_right);
  BOOST_TEST(allocs == 0u);
  BOOST_TEST_MESSAGE("allocations over 18 lending runs alternating 6 in-bound shapes: " << allocs);
  BOOST_TEST(ex->arena_bytes() == 0u);
  BOOST_TEST(ex->io_bytes() == want_io);  // never grown
  BOOST_TEST(ex->stats().arena_growths == 0u);
}

// Shapes known only at run time (plan.h): once each value of the shape-deciding tensor has been
// seen, alternating among them allocates nothing (the continuation stages are reused).
BOOST_AUTO_TEST_CASE(run_time_shapes_allocate_nothing_while_their_values_repeat) {
  auto f = Factory::create(weave::test::run_time_shape_graph());
  BOOST_TEST_REQUIRE(f.ok());
  auto ex = Executor::create(*f);
  BOOST_TEST_REQUIRE(ex.ok());
  const std::vector<float> x = {-1.f, 2.f, -3.f, 4.f, -5.f, 6.f};
  int64_t n = 0;
  bool all_ok = ex->set_input(0, ConstTensorView{x.data(), DType::float32, Dims{6}}).ok() &&
                ex->bind_input(1, ConstTensorView{&n, DType::int64, Dims{1}}).ok();
  for (int64_t v : {2, 3}) {
    n = v;
    all_ok = all_ok && ex->run().ok();
  }
  const uint64_t before = g_allocs.load();
  bool right = true;
  for (int i = 0; i < 6; ++i) {
    n = i % 2 ? 3 : 2;  // the same values: one continuation each, cached by the executor
    all_ok = all_ok && ex->run().ok();
    auto y = ex->output(0);
    right = right && y.ok() && y->dims == (Dims{n, 6 / n}) && y->as<float>()[1] == 2.f;
  }
  const uint64_t allocs = g_allocs.load() - before;
  BOOST_TEST(all_ok);
  BOOST_TEST(right);
  BOOST_TEST(allocs == 0u);
}
