// ThreadPool (core/threads/thread_pool.h): workers join and leave each job through one atomic
// ticket, with no lock. Every chunk must run exactly once whatever the pool size, the job's
// length and grain, callers racing for the pool, and workers asleep between jobs; the ticket's
// fields must not spill into each other. scripts/tsan.sh runs this under ThreadSanitizer.
#define BOOST_TEST_MODULE thread_pool
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/threads/thread_pool.h"

using namespace weave;

namespace {

// Runs for_range(n, grain) and checks that each index was visited once.
void check_once(const ThreadPool& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
  std::atomic<int> empty{0};  // Boost.Test's assertions are not for worker threads
  pool.for_range(n, grain, [&](int64_t b, int64_t e) {
    if (b >= e) empty.fetch_add(1);
    for (int64_t i = b; i < e; ++i) seen[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
  });
  int64_t wrong = 0;
  for (auto& s : seen) wrong += s.load() != 1;
  BOOST_TEST(empty.load() == 0);
  BOOST_TEST(wrong == 0, "n " << n << " grain " << grain << " threads " << pool.threads());
}

}  // namespace

BOOST_AUTO_TEST_CASE(ticket_fields_stay_apart) {
  const uint64_t t = ThreadPool::ticket(12345, 255);
  BOOST_TEST(ThreadPool::generation(t) == 12345u);
  BOOST_TEST(ThreadPool::allowed(t) == 255u);
  BOOST_TEST(ThreadPool::joined(t) == 0u);
  // Joining up to the allowed count changes neither the generation nor the allowance.
  const uint64_t full = t + 255;
  BOOST_TEST(ThreadPool::joined(full) == 255u);
  BOOST_TEST(ThreadPool::allowed(full) == 255u);
  BOOST_TEST(ThreadPool::generation(full) == 12345u);
  BOOST_TEST((full & ThreadPool::kClosed) == 0u);
  const uint64_t closed = full | ThreadPool::kClosed;
  BOOST_TEST(ThreadPool::generation(closed) == 12345u);
  BOOST_TEST(ThreadPool::joined(closed) == 255u);
}

BOOST_AUTO_TEST_CASE(every_chunk_runs_once) {
  for (int threads : {1, 2, 3, 8, 16}) {
    ThreadPool pool(threads);
    BOOST_TEST(pool.threads() == threads);
    for (int64_t n : {1, 2, 7, 16, 100, 1000, 4099})
      for (int64_t grain : {1, 3, 64}) check_once(pool, n, grain);
  }
}

BOOST_AUTO_TEST_CASE(many_small_jobs_back_to_back) {
  // Jobs closer together than the workers' spin: they stay awake and race to join each one.
  ThreadPool pool(8);
  std::atomic<int64_t> sum{0};
  for (int job = 0; job < 20000; ++job)
    pool.for_range(16, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b, std::memory_order_relaxed); });
  BOOST_TEST(sum.load() == 20000 * 16);
}

BOOST_AUTO_TEST_CASE(sleeping_workers_wake_for_a_job) {
  ThreadPool pool(4);
  for (int round = 0; round < 5; ++round) {
    // Longer than the spin: the workers sleep on the condition variable.
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    std::atomic<int64_t> sum{0};
    pool.for_range(64, 1, [&](int64_t b, int64_t e) {
      sum.fetch_add(e - b);
      // Slow chunks, so a woken worker has something left to take.
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
    BOOST_TEST(sum.load() == 64);
  }
}

BOOST_AUTO_TEST_CASE(callers_racing_for_one_pool) {
  // Several threads share the pool; its jobs run one at a time and each caller gets its own
  // chunks back complete.
  ThreadPool pool(4);
  std::vector<std::thread> callers;
  std::atomic<int> bad{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&, c] {
      for (int job = 0; job < 2000; ++job) {
        const int64_t n = 1 + (job * 7 + c) % 97;
        std::atomic<int64_t> sum{0};
        pool.for_range(n, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b, std::memory_order_relaxed); });
        if (sum.load() != n) bad.fetch_add(1);
      }
    });
  for (auto& t : callers) t.join();
  BOOST_TEST(bad.load() == 0);
}

BOOST_AUTO_TEST_CASE(nested_calls_run_serially) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  pool.for_range(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.for_range(10, 1,
                     [&](int64_t b2, int64_t e2) { sum.fetch_add(e2 - b2, std::memory_order_relaxed); });
  });
  BOOST_TEST(sum.load() == 80);
}
