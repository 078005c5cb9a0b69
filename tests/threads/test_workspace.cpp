// Kernel scratch per compute slot (core/threads/thread_budget.h): executors on the budget own no
// scratch, the budget's pool has one buffer per slot sized up front by Executor::create, leases
// never share a buffer, and executors running at once on different slots (and nested runs)
// compute exactly what they compute alone.
#define BOOST_TEST_MODULE workspace
#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "core/kernels/registry.h"
#include "core/runtime/executor.h"
#include "core/runtime/factory.h"
#include "core/threads/thread_budget.h"
#include "core/threads/thread_pool.h"

using namespace weave;

namespace {

// Deterministic values in [-0.5, 0.5).
std::vector<float> noise(std::size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return v;
}

int32_t param(Graph& g, std::vector<int64_t> shape, uint32_t seed, float scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  auto v = noise(static_cast<std::size_t>(n), seed);
  for (auto& x : v) x *= scale;
  return g.add_param(DType::float32, shape, SharedBytes::copy_of(std::as_bytes(std::span(v))));
}

int32_t value(Graph& g) {
  Value v;
  v.dtype = DType::float32;
  return g.add_value(v);
}

Node conv(int32_t x, int32_t w, int32_t b, int32_t y, int64_t k, int64_t stride) {
  Node n;
  n.op = "Conv";
  n.inputs = {x, w, b};
  n.outputs = {y};
  const int64_t p = k / 2;
  n.attrs.set("kernel_shape", std::vector<int64_t>{k, k});
  n.attrs.set("strides", std::vector<int64_t>{stride, stride});
  n.attrs.set("pads", std::vector<int64_t>{p, p, p, p});
  return n;
}

Node unary(const char* op, std::vector<int32_t> in, int32_t out) {
  Node n;
  n.op = op;
  n.inputs = std::move(in);
  n.outputs = {out};
  return n;
}

// A resnet18-like stem and basic block: x[1,3,H,W] -> Conv 7x7/2 (16) -> Relu -> a
//   -> Conv 3x3 (16) -> Relu -> Conv 3x3 (16) -> Add(a) -> Relu -> y[1,16,H/2,W/2].
// The 7x7 convolution's im2col scratch is the biggest workspace, as in resnet18.
Graph stem_graph(int64_t h, int64_t w) {
  Graph g;
  Value in;
  in.kind = ValueKind::input;
  in.dtype = DType::float32;
  in.shape = {1, 3, h, w};
  const int32_t x = g.add_value(in);
  g.inputs = {x};
  g.input_infos = {TensorInfo{"x", DType::float32, {1, 3, h, w}, {}}};
  const int32_t w1 = param(g, {16, 3, 7, 7}, 1, 0.2f), b1 = param(g, {16}, 2, 0.1f);
  const int32_t w2 = param(g, {16, 16, 3, 3}, 3, 0.2f), b2 = param(g, {16}, 4, 0.1f);
  const int32_t w3 = param(g, {16, 16, 3, 3}, 5, 0.2f), b3 = param(g, {16}, 6, 0.1f);
  const int32_t c1 = value(g), a = value(g), c2 = value(g), r2 = value(g), c3 = value(g), s = value(g),
                y = value(g);
  g.nodes = {conv(x, w1, b1, c1, 7, 2), unary("Relu", {c1}, a),     conv(a, w2, b2, c2, 3, 1),
             unary("Relu", {c2}, r2),   conv(r2, w3, b3, c3, 3, 1), unary("Add", {c3, a}, s),
             unary("Relu", {s}, y)};
  g.outputs = {y};
  g.output_infos = {TensorInfo{"y", DType::float32, {1, 16, (h + 1) / 2, (w + 1) / 2}, {}}};
  return g;
}

// The reference kernels: their im2col scratch is what these tests lease and size.
std::shared_ptr<const Factory> stem_factory(int64_t h, int64_t w) {
  FactoryOptions o;
  o.registry = &KernelRegistry::reference();
  auto f = Factory::create(stem_graph(h, w), o);
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  return *f;
}

std::vector<float> to_vector(const ConstTensorView& v) {
  const float* p = v.as<float>();
  return {p, p + v.numel()};
}

std::vector<float> run_once(Executor& ex, const std::vector<float>& x, int64_t h, int64_t w) {
  auto st = ex.set_input(0, ConstTensorView{x.data(), DType::float32, Dims{1, 3, h, w}});
  BOOST_TEST_REQUIRE(st.ok(), (st.ok() ? "" : st.message()));
  st = ex.run();
  BOOST_TEST_REQUIRE(st.ok(), (st.ok() ? "" : st.message()));
  auto y = ex.output(0);
  BOOST_TEST_REQUIRE(y.ok());
  return to_vector(*y);
}

// Restores the budget's size at the end of a test.
struct BudgetOf {
  explicit BudgetOf(int n) { BOOST_TEST_REQUIRE(ThreadBudget::global().set_threads(n).ok()); }
  ~BudgetOf() { (void)ThreadBudget::global().set_threads(0); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(an_empty_lease_takes_no_buffer) {
  const int before = ThreadBudget::global().workspace_buffers();
  const SlotWorkspace ws(0);
  BOOST_TEST(ws.span().empty());
  BOOST_TEST(ThreadBudget::global().workspace_buffers() == before);
}

BOOST_AUTO_TEST_CASE(reserve_gives_every_slot_a_buffer_and_nested_leases_never_share) {
  BudgetOf budget(3);
  auto& b = ThreadBudget::global();
  b.reserve_workspace(4096);
  BOOST_TEST(b.workspace_reserved() >= 4096u);
  BOOST_TEST(b.workspace_buffers() >= 3);
  const int buffers = b.workspace_buffers();
  {
    // Three leases at once (as three slots would hold): distinct, aligned, big enough, and no
    // allocation of a new buffer.
    const SlotWorkspace l1(4096), l2(100), l3(4096);
    const std::byte* p[] = {l1.span().data(), l2.span().data(), l3.span().data()};
    BOOST_TEST((p[0] != p[1] && p[1] != p[2] && p[0] != p[2]));
    for (const SlotWorkspace* l : {&l1, &l2, &l3}) {
      BOOST_TEST(l->span().size() >= 4096u);
      BOOST_TEST(reinterpret_cast<std::uintptr_t>(l->span().data()) % 64 == 0u);
    }
    BOOST_TEST(b.workspace_buffers() == buffers);
    // More leases than slots (a run nested in another one's kernel): a spare, not a shared one.
    const SlotWorkspace l4(10);
    for (const std::byte* q : p) BOOST_TEST(l4.span().data() != q);
  }
  // The spare stays in the pool for the next nested run.
  BOOST_TEST(b.workspace_buffers() == buffers + 1);
  {
    const SlotWorkspace l1(1), l2(1), l3(1), l4(1);
    BOOST_TEST(b.workspace_buffers() == buffers + 1);
  }
}

BOOST_AUTO_TEST_CASE(a_bigger_reserve_while_leased_keeps_the_lease_valid) {
  auto& b = ThreadBudget::global();
  b.reserve_workspace(1 << 12);
  const std::size_t big = b.workspace_reserved() + (1 << 16);
  {
    const SlotWorkspace lease(1 << 12);
    const std::span<std::byte> mine = lease.span();
    std::memset(mine.data(), 0x5a, mine.size());
    BOOST_TEST(b.reserve_workspace(big));  // the free buffers grow, this one is replaced
    BOOST_TEST(b.workspace_reserved() == big);
    // The lease still owns its (now too small) buffer: intact, and not handed out again.
    BOOST_TEST(std::to_integer<int>(mine[0]) == 0x5a);
    BOOST_TEST(std::to_integer<int>(mine[mine.size() - 1]) == 0x5a);
    const SlotWorkspace other(big);
    BOOST_TEST(other.span().size() >= big);
    BOOST_TEST(other.span().data() != mine.data());
  }
  // The replaced buffer was freed when given back: everything left is big enough.
  BOOST_TEST(b.workspace_total_bytes() >= static_cast<std::size_t>(b.workspace_buffers()) * big);
  BOOST_TEST(!b.reserve_workspace(big));  // nothing to do twice
}

BOOST_AUTO_TEST_CASE(a_bigger_budget_gets_scratch_for_its_new_slots) {
  BudgetOf budget(2);
  auto& b = ThreadBudget::global();
  b.reserve_workspace(1024);
  BOOST_TEST_REQUIRE(b.set_threads(5).ok());
  BOOST_TEST(b.workspace_buffers() >= 5);
}

BOOST_AUTO_TEST_CASE(executors_on_the_budget_own_no_workspace) {
  auto f = stem_factory(64, 48);
  const std::size_t ws = f->default_plan()->workspace_bytes;
  BOOST_TEST_REQUIRE(ws >= std::size_t{3 * 49 * 32 * 24 * 4});  // the 7x7 im2col
  auto& b = ThreadBudget::global();
  const int before = b.workspace_buffers();
  std::vector<Executor> executors;
  for (int k = 0; k < 8; ++k) {
    auto ex = Executor::create(f);
    BOOST_TEST_REQUIRE(ex.ok());
    BOOST_TEST(ex->workspace_bytes() == 0u);
    BOOST_TEST(ex->arena_bytes() > 0u);
    executors.push_back(std::move(*ex));
  }
  BOOST_TEST(b.workspace_reserved() >= ws);
  // Eight executors, but scratch only per slot (the earlier tests' spares and slots stay).
  const int buffers = b.workspace_buffers();
  BOOST_TEST(buffers <= std::max(before, b.threads()));
  const auto x = noise(3 * 64 * 48, 7);
  const auto want = run_once(executors[0], x, 64, 48);
  for (auto& ex : executors) BOOST_TEST(run_once(ex, x, 64, 48) == want);
  BOOST_TEST(b.workspace_buffers() == buffers);

  // A private thread pool keeps its own scratch, as before.
  ExecutorOptions eo;
  eo.parallel = std::make_shared<ThreadPool>(2);
  auto own = Executor::create(f, eo);
  BOOST_TEST_REQUIRE(own.ok());
  BOOST_TEST(own->workspace_bytes() == ws);
  const auto got = run_once(*own, x, 64, 48);
  BOOST_TEST_REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) BOOST_TEST(std::fabs(got[i] - want[i]) <= 1e-4f);
}

BOOST_AUTO_TEST_CASE(four_executors_on_two_slots_compute_what_they_compute_alone) {
  BudgetOf budget(2);
  // Two models of different workspace sizes, two executors each, every one with its own input.
  struct Case {
    int64_t h, w;
    int threads;  // 1: the calling thread only (bit-exact), 0: borrows budget workers
  };
  const Case cases[] = {{64, 64, 1}, {96, 80, 1}, {64, 64, 0}, {96, 80, 0}};
  const auto fa = stem_factory(64, 64), fb = stem_factory(96, 80);
  std::vector<std::vector<float>> inputs, want;
  std::vector<Executor> executors;
  for (std::size_t k = 0; k < std::size(cases); ++k) {
    const Case& c = cases[k];
    inputs.push_back(noise(static_cast<std::size_t>(3 * c.h * c.w), 100 + static_cast<uint32_t>(k)));
    ExecutorOptions alone;
    alone.threads = 1;
    auto ref = Executor::create(c.h == 64 ? fa : fb, alone);
    BOOST_TEST_REQUIRE(ref.ok());
    want.push_back(run_once(*ref, inputs[k], c.h, c.w));
    ExecutorOptions eo;
    eo.threads = c.threads;
    auto ex = Executor::create(c.h == 64 ? fa : fb, eo);
    BOOST_TEST_REQUIRE(ex.ok());
    executors.push_back(std::move(*ex));
  }
  BOOST_TEST(want[0] != want[2]);  // different inputs, so a swapped scratch would show
  constexpr int kRuns = 25;
  std::atomic<int> failed_runs{0}, exact_mismatches{0}, far_off{0};
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < std::size(cases); ++k)
    threads.emplace_back([&, k] {
      const Case& c = cases[k];
      for (int r = 0; r < kRuns; ++r) {
        Executor& ex = executors[k];
        if (!ex.set_input(0, ConstTensorView{inputs[k].data(), DType::float32, Dims{1, 3, c.h, c.w}}).ok() ||
            !ex.run().ok()) {
          ++failed_runs;
          continue;
        }
        const auto y = to_vector(*ex.output(0));
        for (std::size_t i = 0; i < y.size(); ++i) {
          if (c.threads == 1 && y[i] != want[k][i]) ++exact_mismatches;
          if (std::fabs(y[i] - want[k][i]) > 1e-4f) ++far_off;
        }
      }
    });
  for (auto& t : threads) t.join();
  BOOST_TEST(failed_runs.load() == 0);
  BOOST_TEST(exact_mismatches.load() == 0);
  BOOST_TEST(far_off.load() == 0);
  BOOST_TEST(ThreadBudget::global().busy() == 0);
}

// A run nested in a kernel's chunk (here: a for_range of the budget, on the caller and on a
// worker at once) leases a spare instead of the scratch its slot's outer run is using.
BOOST_AUTO_TEST_CASE(nested_runs_in_chunks_use_their_own_scratch) {
  BudgetOf budget(2);
  const auto f = stem_factory(32, 32);
  const auto x = noise(3 * 32 * 32, 9);
  std::vector<float> want;
  {
    auto ref = Executor::create(f);
    BOOST_TEST_REQUIRE(ref.ok());
    want = run_once(*ref, x, 32, 32);
  }
  std::vector<Executor> inner;
  for (int k = 0; k < 4; ++k) {
    auto ex = Executor::create(f);
    BOOST_TEST_REQUIRE(ex.ok());
    inner.push_back(std::move(*ex));
  }
  std::atomic<int> wrong{0};
  const ComputeToken outer_slot;
  const SlotWorkspace outer(f->default_plan()->workspace_bytes);  // the outer run's scratch
  std::memset(outer.span().data(), 0x33, outer.span().size());
  ThreadBudget::global().parallel(2).for_range(4, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      Executor& ex = inner[static_cast<std::size_t>(k)];
      if (!ex.set_input(0, ConstTensorView{x.data(), DType::float32, Dims{1, 3, 32, 32}}).ok() ||
          !ex.run().ok() || to_vector(*ex.output(0)) != want)
        ++wrong;
    }
  });
  BOOST_TEST(wrong.load() == 0);
  // Nobody wrote into the outer scratch.
  bool untouched = true;
  for (std::byte v : outer.span()) untouched = untouched && std::to_integer<int>(v) == 0x33;
  BOOST_TEST(untouched);
}

// The same for arenas lent by the budget (ExecutorOptions::lend_arena): lending executors nested
// in chunks lease spare arenas, never the one the outer run holds, and own none themselves.
BOOST_AUTO_TEST_CASE(nested_lending_runs_in_chunks_use_their_own_arena) {
  BudgetOf budget(2);
  const auto f = stem_factory(32, 32);
  const auto x = noise(3 * 32 * 32, 5);
  std::vector<float> want;
  {
    auto ref = Executor::create(f);
    BOOST_TEST_REQUIRE(ref.ok());
    want = run_once(*ref, x, 32, 32);
  }
  ExecutorOptions eo;
  eo.lend_arena = true;
  std::vector<Executor> inner;
  for (int k = 0; k < 4; ++k) {
    auto ex = Executor::create(f, eo);
    BOOST_TEST_REQUIRE(ex.ok());
    BOOST_TEST(ex->arena_bytes() == 0u);
    inner.push_back(std::move(*ex));
  }
  BOOST_TEST(ThreadBudget::global().arena_buffers() >= 2);
  BOOST_TEST(ThreadBudget::global().arena_reserved() >= f->default_plan()->arena_bytes);
  std::atomic<int> wrong{0};
  const ComputeToken outer_slot;
  const SlotArena outer(f->default_plan()->arena_bytes);  // the outer run's arena
  BOOST_TEST_REQUIRE(!outer.span().empty());
  std::memset(outer.span().data(), 0x33, outer.span().size());
  ThreadBudget::global().parallel(2).for_range(4, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      Executor& ex = inner[static_cast<std::size_t>(k)];
      if (!ex.set_input(0, ConstTensorView{x.data(), DType::float32, Dims{1, 3, 32, 32}}).ok() ||
          !ex.run().ok() || to_vector(*ex.output(0)) != want)
        ++wrong;
    }
  });
  BOOST_TEST(wrong.load() == 0);
  bool untouched = true;
  for (std::byte v : outer.span()) untouched = untouched && std::to_integer<int>(v) == 0x33;
  BOOST_TEST(untouched);
  // Outputs stay readable after the arenas went back.
  for (Executor& ex : inner) BOOST_TEST(to_vector(*ex.output(0)) == want);
}
