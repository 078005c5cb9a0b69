// A small fork-join pool implementing Parallel for kernels. The caller always works on a chunk
// too, so a pool of N threads runs N-1 workers. Chunks are handed out through an atomic counter;
// for_range returns only when every chunk is done. A job of few chunks wakes only as many
// workers as it can use (min(N, n / grain) threads in all, as the budget lends). One job runs at a time per
// pool; executors that share a pool serialize their parallel sections instead of oversubscribing cores.
//
// A ThreadPool is private: its threads are outside the process-wide budget (thread_budget.h),
// which executors use by default. It is for tests and benchmarks that want exactly N threads.
// Its workers run chunks under the slot of the job's caller, and a for_range nested in a chunk
// runs serially, so an Executor run from a chunk neither waits for a slot nor deadlocks.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
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

 private:
  struct Job {
    FunctionRef<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0;
    int64_t chunk = 0;
    int64_t chunks = 0;
    int helpers = 0;  // workers that may join (the caller works too)
  };
  void worker_loop();
  void work_on(const Job& job) const;

  std::vector<std::thread> workers_;
  mutable std::mutex job_mutex_;  // one job at a time
  mutable std::mutex mutex_;
  mutable std::condition_variable wake_;
  mutable std::condition_variable done_;
  mutable Job job_;
  mutable uint64_t generation_ = 0;
  mutable std::atomic<int64_t> next_{0};
  mutable std::atomic<int64_t> finished_{0};
  mutable int active_workers_ = 0;
  mutable int joined_ = 0;  // workers that joined the current job (under mutex_)
  // Lock-free copies for the spins before sleeping (spin.h): generation_ as published to the
  // workers, and active_workers_. The mutex-held values stay authoritative.
  mutable std::atomic<uint64_t> published_{0};
  mutable std::atomic<int> active_now_{0};
  bool stop_ = false;
};

}  // namespace weave
