// A small fork-join pool implementing Parallel for kernels. The caller always works on a chunk
// too, so a pool of N threads runs N-1 workers. Chunks are handed out through an atomic counter;
// for_range returns only when every chunk is done. A job of few chunks takes only as many
// workers as it can use (min(N, n / grain) threads in all). One job runs at a time per pool;
// executors that share a pool serialize their parallel sections instead of oversubscribing cores.
//
// Joining and leaving a job take no lock: with a mutex there, 15 workers queued on it at the
// start and at the end of every operator, and a small model ran slower at 16 threads than at 8.
// A job is announced by one word, the ticket: (generation, closed, workers allowed, workers
// joined). A worker joins with a compare-and-swap on it; the caller, once it runs out of chunks,
// closes the ticket (no worker joins after that) and waits until every worker that joined has
// left. Only then may the next job be written, so a worker never reads a job being replaced.
// Idle workers spin for a while (spin.h), then sleep on a condition variable that the caller
// signals only when some worker sleeps.
//
// A ThreadPool is private: its threads are outside the process-wide budget (thread_budget.h),
// which executors use by default. It is for tests and benchmarks that want exactly N threads.
// Its workers run chunks under the slot of the job's caller, and a for_range nested in a chunk
// runs serially, so an Executor run from a chunk neither waits for a slot nor deadlocks.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "core/common/parallel.h"

namespace weave {

class ThreadPool final : public Parallel {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  [[nodiscard]] int threads() const override { return static_cast<int>(workers_.size()) + 1; }
  void for_range(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) const override;

  // The ticket's layout (public for the unit tests): joined in bits 0-8, allowed in 9-17,
  // closed in bit 18, the generation above.
  static constexpr uint64_t kCountBits = 9;
  static constexpr uint64_t kCountMask = (uint64_t{1} << kCountBits) - 1;
  static constexpr uint64_t kClosed = uint64_t{1} << (2 * kCountBits);
  static constexpr int kGenerationShift = 2 * kCountBits + 1;
  static constexpr uint64_t ticket(uint64_t generation, uint64_t allowed) {
    return (generation << kGenerationShift) | (allowed << kCountBits);
  }
  static constexpr uint64_t generation(uint64_t t) { return t >> kGenerationShift; }
  static constexpr uint64_t joined(uint64_t t) { return t & kCountMask; }
  static constexpr uint64_t allowed(uint64_t t) { return (t >> kCountBits) & kCountMask; }

 private:
  struct Job {
    FunctionRef<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0;
    int64_t chunk = 0;
    int64_t chunks = 0;
  };
  void worker_loop();
  // Spins, then sleeps, until a job newer than `seen` is announced; false when stopping.
  bool wait_for_job(uint64_t seen) const;
  void work_on(const Job& job) const;

  std::vector<std::thread> workers_;
  mutable std::mutex job_mutex_;     // one job at a time
  mutable Job job_;                  // written only while the ticket is closed and nobody is in
  mutable uint64_t generation_ = 0;  // under job_mutex_
  mutable std::atomic<uint64_t> ticket_{0};
  mutable std::atomic<int64_t> next_{0};  // the next chunk to hand out
  mutable std::atomic<int> left_{0};      // workers that joined the current job and left it
  mutable std::atomic<int> sleepers_{0};  // workers asleep on wake_ (or about to be)
  mutable std::mutex sleep_mutex_;
  mutable std::condition_variable wake_;
  std::atomic<bool> stop_{false};
};

}  // namespace weave
