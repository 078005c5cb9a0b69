// The process-wide thread budget (R12): caps, slot accounting, the promise that N executors on
// a budget of B never compute on more than B threads at once, and no deadlock when runs nest
// (an Executor run from a kernel's chunk, on the caller, on a budget worker or on a ThreadPool).
//
// Concurrency is measured by a probe kernel (registered in a local KernelRegistry) that counts
// the threads computing at this moment: its calling thread for the whole run(), and every other
// thread while it runs one of the kernel's for_range chunks.
#define BOOST_TEST_MODULE threads
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <latch>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/kernels/registry.h"
#include "core/runtime/executor.h"
#include "core/runtime/factory.h"
#include "core/threads/cpu_spread.h"
#include "core/threads/thread_budget.h"
#include "core/threads/thread_pool.h"

using namespace weave;
using namespace std::chrono_literals;

namespace {

// ------------------------------------------------------------------ instrumentation

std::atomic<int> g_computing{0};      // threads computing right now
std::atomic<int> g_peak{0};           // most ever at once (reset per test)
std::atomic<int> g_max_team{0};       // most distinct threads in one for_range
std::atomic<int> g_seen_cap{0};       // Parallel::threads() the probe saw last
std::atomic<int> g_serial_nested{0};  // probe runs that found themselves inside a chunk
std::function<void()> g_in_chunk;     // called from every chunk when set (nesting tests)
thread_local int t_nesting = 0;

void reset_counters() {
  g_peak = 0;
  g_max_team = 0;
  g_seen_cap = 0;
  g_serial_nested = 0;
}

// Counts the calling thread as computing while in scope; nested scopes on one thread (a run
// nested in a chunk) count once.
thread_local int t_computing = 0;
struct Computing {
  Computing() {
    if (t_computing++ > 0) return;
    const int now = ++g_computing;
    int peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
    }
  }
  ~Computing() {
    if (--t_computing == 0) --g_computing;
  }
};

// Busy work, so that "computing" means using a core, like a real kernel.
void spin_for(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + 1;
}

// y = 2 * x over a 1-D float tensor; one for_range chunk per element, each spinning `us`.
class ProbeKernel final : public Kernel {
 public:
  explicit ProbeKernel(int64_t us) : us_(us) {}
  Status infer(ShapeContext& ctx) const override {
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    Computing me;
    g_seen_cap = ctx.parallel.threads();
    if (ParallelChunkScope::active()) ++g_serial_nested;
    const auto caller = std::this_thread::get_id();
    std::mutex m;
    std::vector<std::thread::id> team{caller};
    const float* x = ctx.inputs[0].as<float>();
    float* y = ctx.outputs[0].as<float>();
    ctx.parallel.for_range(ctx.inputs[0].numel(), 1, [&](int64_t b, int64_t e) {
      const auto self = std::this_thread::get_id();
      {
        std::lock_guard<std::mutex> lock(m);
        if (std::find(team.begin(), team.end(), self) == team.end()) team.push_back(self);
      }
      for (int64_t i = b; i < e; ++i) {
        if (self == caller) {
          spin_for(std::chrono::microseconds(us_));
        } else {
          Computing helper;
          spin_for(std::chrono::microseconds(us_));
        }
        y[i] = 2.f * x[i];
        if (g_in_chunk && t_nesting == 0) {
          ++t_nesting;
          g_in_chunk();
          --t_nesting;
        }
      }
    });
    int t = static_cast<int>(team.size()), best = g_max_team.load();
    while (t > best && !g_max_team.compare_exchange_weak(best, t)) {
    }
  }

 private:
  int64_t us_;
};

Expected<std::unique_ptr<Kernel>> make_probe(const KernelSetup& s) {
  return std::unique_ptr<Kernel>(new ProbeKernel(s.node.attrs.get_int("us", 0)));
}

const KernelRegistry& probe_registry() {
  static KernelRegistry r = [] {
    KernelRegistry reg;
    reg.add("Probe", make_probe);
    return reg;
  }();
  return r;
}

// x[n] -> Probe(us) -> y[n]
std::shared_ptr<const Factory> probe_factory(int64_t n, int64_t us) {
  Graph g;
  Value in;
  in.kind = ValueKind::input;
  in.dtype = DType::float32;
  in.shape = {n};
  const int32_t x = g.add_value(in);
  Value out;
  out.dtype = DType::float32;
  const int32_t y = g.add_value(out);
  g.inputs = {x};
  g.outputs = {y};
  g.input_infos = {TensorInfo{"x", DType::float32, {n}, {}}};
  g.output_infos = {TensorInfo{"y", DType::float32, {n}, {}}};
  Node node;
  node.op = "Probe";
  node.inputs = {x};
  node.outputs = {y};
  node.attrs.set("us", us);
  g.nodes = {node};
  FactoryOptions o;
  o.registry = &probe_registry();
  auto f = Factory::create(std::move(g), o);
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  return *f;
}

// Runs ex on x = [seed, seed + 1, ...] and checks y = 2x. Thread-safe (no Boost.Test macros:
// they are not), so threads count failures and the test checks the count.
bool run_and_check(Executor& ex, float seed) {
  const int64_t n = ex.factory().input_info(0).shape[0];
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = seed + static_cast<float>(i);
  auto outs = ex.run(std::vector<ConstTensorView>{ConstTensorView{x.data(), DType::float32, Dims{n}}});
  if (!outs.ok()) return false;
  const float* y = (*outs)[0].as<float>();
  for (int64_t i = 0; i < n; ++i)
    if (y[i] != 2.f * x[i]) return false;
  return true;
}

Executor make_executor(const std::shared_ptr<const Factory>& f, int cap,
                       std::shared_ptr<const Parallel> parallel = nullptr) {
  ExecutorOptions eo;
  eo.threads = cap;
  eo.parallel = std::move(parallel);
  auto ex = Executor::create(f, eo);
  if (!ex.ok()) {  // called from worker threads too, where Boost.Test macros are not safe
    std::fprintf(stderr, "Executor::create: %s\n", ex.message().c_str());
    std::abort();
  }
  return std::move(*ex);
}

void set_budget(int n) {
  Status st = ThreadBudget::global().set_threads(n);
  BOOST_TEST_REQUIRE(st.ok(), st.message());
  BOOST_TEST_REQUIRE(ThreadBudget::global().threads() == n);
}

// Runs fn on a thread and fails (and exits, since the stuck threads hold budget slots) if it
// has not finished after `limit`: the deadlock detector of the nesting tests.
void must_finish(const char* what, std::function<void()> fn, std::chrono::seconds limit = 60s) {
  std::atomic<bool> done{false};
  std::thread t([&] {
    fn();
    done = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  if (!done) {
    std::fprintf(stderr, "DEADLOCK: %s did not finish within %lld s\n", what,
                 static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::_Exit(1);
  }
  t.join();
}

}  // namespace

// ------------------------------------------------------------------ configuration

BOOST_AUTO_TEST_CASE(env_value_is_parsed_strictly) {
  BOOST_TEST(parse_thread_count("4") == 4);
  BOOST_TEST(parse_thread_count("1") == 1);
  BOOST_TEST(parse_thread_count("256") == 256);
  BOOST_TEST(parse_thread_count(nullptr) == 0);
  BOOST_TEST(parse_thread_count("") == 0);
  BOOST_TEST(parse_thread_count("0") == 0);
  BOOST_TEST(parse_thread_count("-2") == 0);
  BOOST_TEST(parse_thread_count("257") == 0);
  BOOST_TEST(parse_thread_count("8x") == 0);
  BOOST_TEST(parse_thread_count(" 4") == 0);
  BOOST_TEST(parse_thread_count("99999999999999999999") == 0);
  BOOST_TEST(hardware_threads() >= 1);
}

BOOST_AUTO_TEST_CASE(budget_resizes_and_caps_are_clamped_to_it) {
  auto& b = ThreadBudget::global();
  Status bad = b.set_threads(-1);
  BOOST_TEST(!bad.ok());
  BOOST_TEST(bad.message().find("-1 is out of range") != std::string::npos, bad.message());
  BOOST_TEST(!b.set_threads(257).ok());
  set_budget(3);
  BOOST_TEST(b.parallel(0).threads() == 3);
  BOOST_TEST(b.parallel(1).threads() == 1);
  BOOST_TEST(b.parallel(2).threads() == 2);
  BOOST_TEST(b.parallel(5).threads() == 3);
  BOOST_TEST(b.parallel(-4).threads() == 3);  // clamped to 0 = all
  BOOST_TEST(&b.parallel(2) == &b.parallel(2));
  // 0 restores the default: WEAVE_NUM_THREADS when valid, else the cores.
  BOOST_TEST_REQUIRE(b.set_threads(0).ok());
  const int env = parse_thread_count(std::getenv("WEAVE_NUM_THREADS"));
  BOOST_TEST(b.threads() == (env > 0 ? env : hardware_threads()));
  BOOST_TEST(b.busy() == 0);
}

BOOST_AUTO_TEST_CASE(for_range_covers_every_index_once_and_returns_every_slot) {
  set_budget(3);
  for (int cap : {0, 1, 2, 3}) {
    const Parallel& par = ThreadBudget::global().parallel(cap);
    for (int64_t n : {0, 1, 2, 7, 64, 1000, 4097}) {
      for (int64_t grain : {1, 3, 100}) {
        std::vector<std::atomic<int>> hits(n);
        std::atomic<int> empty_chunks{0};
        par.for_range(n, grain, [&](int64_t b, int64_t e) {
          if (b >= e) ++empty_chunks;
          for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        BOOST_TEST_REQUIRE(empty_chunks.load() == 0);
        for (int64_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(hits[i].load() == 1);
      }
    }
  }
  BOOST_TEST(ThreadBudget::global().busy() == 0);
  BOOST_TEST(!ComputeToken::held());
}

BOOST_AUTO_TEST_CASE(a_few_equal_tasks_go_one_per_chunk) {
  // Rounded up, 10 tasks on 2 threads made 5 chunks of 2: one thread ran 3 of them, the
  // other 2 (a convolution's tasks, 1.67x instead of 2x).
  BOOST_TEST(chunk_length(10, 1, 2) == 1);
  BOOST_TEST(chunk_length(15, 1, 2) == 1);
  BOOST_TEST(chunk_length(32, 1, 2) == 2);
  BOOST_TEST(chunk_length(1000000, 1, 2) == 62500);
  BOOST_TEST(chunk_length(10, 4, 2) == 4);  // never below the grain
  set_budget(2);
  const Parallel& par = ThreadBudget::global().parallel(2);
  std::mutex m;
  std::vector<int64_t> lengths;
  par.for_range(10, 1, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(m);
    lengths.push_back(e - b);
  });
  // Without a helper (none idle) the caller runs the whole range as one chunk.
  if (lengths.size() > 1)
    for (int64_t l : lengths) BOOST_TEST(l == 1);
  else
    BOOST_TEST_MESSAGE("no helper was free: the range ran as one chunk");
  BOOST_TEST(ThreadBudget::global().busy() == 0);
}

// ------------------------------------------------------------------ the budget holds

BOOST_AUTO_TEST_CASE(four_executors_capped_at_two_on_a_budget_of_two_compute_on_two_threads) {
  set_budget(2);
  reset_counters();
  auto f = probe_factory(8, 300);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  // All four start together (on a loaded machine a thread may otherwise be created after the
  // others are done), and run on until two were seen computing at once or 100 runs.
  std::latch start(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Executor ex = make_executor(f, 2);
      start.arrive_and_wait();
      for (int r = 0; r < 15 || (r < 100 && g_peak.load() < 2); ++r)
        if (!run_and_check(ex, static_cast<float>(100 * t + r))) ++wrong;
    });
  }
  for (auto& t : threads) t.join();
  BOOST_TEST(wrong.load() == 0);
  BOOST_TEST(g_peak.load() <= 2);  // four executors, eight requested threads: never more than two
  BOOST_TEST(g_peak.load() == 2);  // and the budget was used
  BOOST_TEST(g_seen_cap.load() == 2);
  BOOST_TEST(ThreadBudget::global().busy() == 0);
  BOOST_TEST(g_computing.load() == 0);
}

BOOST_AUTO_TEST_CASE(a_larger_budget_lets_more_executors_compute_at_once) {
  // The control for the test above: the limit is the budget, not something else.
  set_budget(4);
  reset_counters();
  auto f = probe_factory(8, 300);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  // Started together and run until three were seen at once (or 100 runs): the check must not
  // depend on how soon a loaded machine schedules each new thread.
  std::latch start(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      Executor ex = make_executor(f, 1);
      start.arrive_and_wait();
      for (int r = 0; r < 10 || (r < 100 && g_peak.load() < 3); ++r)
        if (!run_and_check(ex, static_cast<float>(r))) ++wrong;
    });
  for (auto& t : threads) t.join();
  BOOST_TEST(wrong.load() == 0);
  BOOST_TEST(g_peak.load() <= 4);
  BOOST_TEST(g_peak.load() >= 3);
  BOOST_TEST(g_max_team.load() == 1);  // cap 1: the calling thread only
}

BOOST_AUTO_TEST_CASE(a_lone_executor_borrows_idle_threads_up_to_its_cap) {
  set_budget(2);
  auto f = probe_factory(8, 2000);
  reset_counters();
  Executor one = make_executor(f, 1);
  for (int r = 0; r < 3; ++r) BOOST_TEST(run_and_check(one, 1.f));
  BOOST_TEST(g_max_team.load() == 1);
  BOOST_TEST(g_seen_cap.load() == 1);
  // Cap 2: the helper is borrowed without waiting; on a loaded machine it may wake too late
  // for a run (the caller then takes its chunks back), so try a few runs.
  reset_counters();
  Executor two = make_executor(f, 2);
  for (int r = 0; r < 20 && g_max_team.load() < 2; ++r) BOOST_TEST(run_and_check(two, 2.f));
  BOOST_TEST(g_max_team.load() == 2);
  BOOST_TEST(g_seen_cap.load() == 2);
  BOOST_TEST(g_peak.load() <= 2);
  BOOST_TEST(ThreadBudget::global().busy() == 0);
}

BOOST_AUTO_TEST_CASE(a_run_waits_for_a_slot_and_a_shrink_is_honoured) {
  set_budget(2);
  auto f = probe_factory(4, 0);
  std::atomic<bool> ran{false}, right{false};
  std::optional<ComputeToken> mine;
  mine.emplace();
  BOOST_TEST(ComputeToken::held());
  BOOST_TEST(ThreadBudget::global().busy() == 1);
  set_budget(1);  // the slot held now is the whole budget
  std::thread t([&] {
    Executor ex = make_executor(f, 0);
    right = run_and_check(ex, 3.f);
    ran = true;
  });
  std::this_thread::sleep_for(150ms);
  BOOST_TEST(!ran.load());  // waiting for the slot held by this thread
  {
    ComputeToken nested;  // re-entrant: does not wait for a second slot
    BOOST_TEST(ThreadBudget::global().busy() == 1);
  }
  BOOST_TEST(!ran.load());
  mine.reset();
  t.join();
  BOOST_TEST(right.load());
  BOOST_TEST(ran.load());
  BOOST_TEST(!ComputeToken::held());
  for (int i = 0; i < 200 && ThreadBudget::global().busy() != 0; ++i) std::this_thread::sleep_for(5ms);
  BOOST_TEST(ThreadBudget::global().busy() == 0);
}

BOOST_AUTO_TEST_CASE(a_grown_budget_hands_its_new_slots_to_the_waiting_threads) {
  // Waiting threads are handed a slot by whoever frees one, here set_threads(): each of the
  // queued threads must get in without any slot being given back.
  set_budget(1);
  std::optional<ComputeToken> mine;
  mine.emplace();
  std::atomic<int> inside{0};
  std::atomic<bool> leave{false};
  std::vector<std::thread> waiting;
  for (int i = 0; i < 3; ++i)
    waiting.emplace_back([&] {
      ComputeToken t;
      ++inside;
      while (!leave) std::this_thread::sleep_for(1ms);
    });
  std::this_thread::sleep_for(50ms);
  BOOST_TEST(inside.load() == 0);  // the one slot is held by this thread
  set_budget(4);
  for (int i = 0; i < 2000 && inside.load() < 3; ++i) std::this_thread::sleep_for(5ms);
  BOOST_TEST(inside.load() == 3);
  BOOST_TEST(ThreadBudget::global().busy() == 4);
  leave = true;
  for (auto& t : waiting) t.join();
  mine.reset();
  BOOST_TEST(ThreadBudget::global().busy() == 0);
}

// ------------------------------------------------------------------ slot holders on their own CPUs

namespace {

cpu_set_t my_mask() {
  cpu_set_t m;
  CPU_ZERO(&m);
  BOOST_TEST_REQUIRE(sched_getaffinity(0, sizeof m, &m) == 0);
  return m;
}

int pinned_total() {
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) n += CpuSpread::pinned_on(c);
  return n;
}

// Whether this machine lets a thread of this process be pinned: two CPUs allowed, and
// sched_setaffinity not refused (a sandbox may forbid it; the budget then computes unpinned).
bool pinning_possible(const cpu_set_t& allowed) {
  if (CPU_COUNT(&allowed) < 2) {
    BOOST_TEST_MESSAGE("one CPU allowed: nothing to spread");
    return false;
  }
  if (sched_setaffinity(0, sizeof allowed, &allowed) != 0) {
    BOOST_TEST_MESSAGE("sched_setaffinity refused here: the budget computes unpinned");
    return false;
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(slot_holders_compute_on_different_cpus_and_get_their_mask_back) {
  const cpu_set_t before = my_mask();
  if (!pinning_possible(before)) return;
  set_budget(2);
  CpuSpread::set_enabled(true);  // whatever WEAVE_PIN_SLOTS says
  // Boost.Test is not thread-safe: the threads only record, the test thread checks.
  int cpu[2] = {-1, -1};
  cpu_set_t mine[2], held[2], after[2];
  std::latch both_in(2), both_seen(2);
  auto holder = [&](int i) {
    sched_getaffinity(0, sizeof mine[i], &mine[i]);
    {
      ComputeToken t;
      both_in.arrive_and_wait();
      cpu[i] = sched_getcpu();
      sched_getaffinity(0, sizeof held[i], &held[i]);
      both_seen.arrive_and_wait();
    }
    sched_getaffinity(0, sizeof after[i], &after[i]);
  };
  std::thread a(holder, 0), b(holder, 1);
  a.join();
  b.join();
  BOOST_TEST(CPU_EQUAL(&after[0], &mine[0]));  // each thread's own mask is back
  BOOST_TEST(CPU_EQUAL(&after[1], &mine[1]));
  BOOST_TEST(CPU_COUNT(&held[0]) == 1);
  BOOST_TEST(CPU_COUNT(&held[1]) == 1);
  BOOST_TEST(!CPU_EQUAL(&held[0], &held[1]));
  BOOST_TEST(cpu[0] != cpu[1]);
  BOOST_TEST(CPU_ISSET(cpu[0], &held[0]));
  BOOST_TEST(CPU_ISSET(cpu[1], &held[1]));
  BOOST_TEST(pinned_total() == 0);
}

// A pinned holder's helpers must run beside it, not on its CPU: a helper woken (or spinning)
// there shares that CPU with the holder, and a step on 2 threads ran slower than on 1
// (docs/performance.md, the pipeline overhead at 2 threads).
BOOST_AUTO_TEST_CASE(helpers_of_a_pinned_holder_stay_off_its_cpu) {
  const cpu_set_t before = my_mask();
  if (!pinning_possible(before)) return;
  set_budget(2);
  CpuSpread::set_enabled(true);
  const Parallel& par = ThreadBudget::global().parallel(2);
  std::mutex m;
  int holder_cpu = -1, helper_chunks = 0, helper_chunks_off = 0;
  const std::thread::id me = std::this_thread::get_id();
  for (int round = 0; round < 4; ++round) {
    ComputeToken t;  // pinned: budget 2, two CPUs allowed
    cpu_set_t held;
    sched_getaffinity(0, sizeof held, &held);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &held)) holder_cpu = c;
    // Chunks long enough that the helper starts before the caller has done them all.
    par.for_range(16, 1, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (std::this_thread::get_id() == me) return;
      cpu_set_t mask;
      sched_getaffinity(0, sizeof mask, &mask);
      const std::lock_guard<std::mutex> lock(m);
      ++helper_chunks;
      if (!CPU_ISSET(holder_cpu, &mask)) ++helper_chunks_off;
    });
  }
  BOOST_TEST_MESSAGE("chunks run by the helper: " << helper_chunks);
  BOOST_TEST(helper_chunks > 0);
  // Every chunk, the first borrow's too: a worker created by that borrow is waited for until it
  // runs, so it has an id to set the mask on before its job is posted.
  BOOST_TEST(helper_chunks_off == helper_chunks);
}

BOOST_AUTO_TEST_CASE(nothing_is_pinned_with_one_slot_one_allowed_cpu_or_pinning_off) {
  const cpu_set_t before = my_mask();
  if (!pinning_possible(before)) return;
  auto mask_while_holding = [] {
    ComputeToken t;
    return my_mask();
  };
  set_budget(1);
  cpu_set_t m = mask_while_holding();
  BOOST_TEST(CPU_EQUAL(&m, &before));

  set_budget(2);
  CpuSpread::set_enabled(false);
  m = mask_while_holding();
  BOOST_TEST(CPU_EQUAL(&m, &before));
  CpuSpread::set_enabled(true);

  // A thread the application keeps on one CPU stays there.
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
    if (CPU_ISSET(c, &before)) first = c;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  BOOST_TEST_REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  m = mask_while_holding();
  BOOST_TEST(CPU_EQUAL(&m, &one));
  BOOST_TEST_REQUIRE(sched_setaffinity(0, sizeof before, &before) == 0);

  // And with pinning on, a holder is pinned while it holds the slot only.
  m = mask_while_holding();
  BOOST_TEST(CPU_COUNT(&m) == 1);
  m = my_mask();
  BOOST_TEST(CPU_EQUAL(&m, &before));
  BOOST_TEST(pinned_total() == 0);
}

// ------------------------------------------------------------------ nesting: no deadlock

BOOST_AUTO_TEST_CASE(executors_run_from_chunks_do_not_deadlock) {
  for (int budget : {1, 2, 3}) {
    set_budget(budget);
    reset_counters();
    auto outer_f = probe_factory(8, 200);
    auto inner_f = probe_factory(4, 50);
    std::atomic<int> inner_runs{0}, inner_bad{0};
    // Every chunk (on the caller or on a worker) creates and runs an executor of another model:
    // it must run under the slot of the chunk's thread, its for_range serially.
    g_in_chunk = [&] {
      Executor inner = make_executor(inner_f, 0);
      if (!run_and_check(inner, 7.f)) ++inner_bad;
      ++inner_runs;
    };
    std::atomic<int> outer_bad{0};
    must_finish("nested runs on the budget", [&] {
      std::vector<std::thread> threads;
      for (int t = 0; t < 2; ++t)
        threads.emplace_back([&] {
          Executor outer = make_executor(outer_f, 0);
          for (int r = 0; r < 4; ++r)
            if (!run_and_check(outer, 1.f)) ++outer_bad;
        });
      for (auto& t : threads) t.join();
    });
    BOOST_TEST(outer_bad.load() == 0);
    g_in_chunk = nullptr;
    BOOST_TEST(inner_runs.load() == 2 * 4 * 8);
    BOOST_TEST(inner_bad.load() == 0);
    BOOST_TEST(g_serial_nested.load() == 2 * 4 * 8);  // each inner run knew it was nested
    BOOST_TEST(g_peak.load() <= budget);
    BOOST_TEST(ThreadBudget::global().busy() == 0);
  }
}

BOOST_AUTO_TEST_CASE(executors_run_from_thread_pool_chunks_do_not_deadlock) {
  // A private ThreadPool has one job at a time; before chunk scopes, an executor on the same
  // pool run from one of its chunks waited for the outer job forever.
  set_budget(1);
  reset_counters();
  auto pool = std::make_shared<ThreadPool>(3);
  auto outer_f = probe_factory(6, 100);
  auto inner_f = probe_factory(4, 10);
  std::atomic<int> inner_runs{0}, bad{0};
  g_in_chunk = [&] {
    Executor inner = make_executor(inner_f, 0, pool);
    if (!run_and_check(inner, 5.f)) ++bad;
    ++inner_runs;
  };
  must_finish("nested runs on a ThreadPool", [&] {
    Executor outer = make_executor(outer_f, 0, pool);
    for (int r = 0; r < 5; ++r)
      if (!run_and_check(outer, 2.f)) ++bad;
  });
  BOOST_TEST(bad.load() == 0);
  g_in_chunk = nullptr;
  BOOST_TEST(inner_runs.load() == 5 * 6);
  BOOST_TEST(ThreadBudget::global().busy() == 0);
}

BOOST_AUTO_TEST_CASE(direct_for_range_calls_from_many_threads_share_the_budget) {
  // Kernels used outside an executor still take a slot for their caller.
  set_budget(2);
  reset_counters();
  const Parallel& par = ThreadBudget::global().parallel(0);
  std::atomic<int64_t> total{0};
  must_finish("direct for_range", [&] {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (int j = 0; j < 200; ++j)
          par.for_range(16, 1, [&](int64_t b, int64_t e) {
            Computing c;
            total += e - b;
          });
      });
    for (auto& t : threads) t.join();
  });
  BOOST_TEST(total.load() == 4 * 200 * 16);
  BOOST_TEST(g_peak.load() <= 2);
  BOOST_TEST(ThreadBudget::global().busy() == 0);
}
