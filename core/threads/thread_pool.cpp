#include "core/threads/thread_pool.h"

#include <algorithm>

#include "core/threads/spin.h"
#include "core/threads/thread_budget.h"

namespace weave {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < std::max(1, threads); ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::work_on(const Job& job) const {
  for (;;) {
    int64_t c = next_.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.chunks) break;
    int64_t b = c * job.chunk;
    (*job.fn)(b, std::min(job.n, b + job.chunk));
    finished_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    Job job;
    {
      spin_until([&] { return published_.load(std::memory_order_acquire) != seen; });
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (joined_ >= job_.helpers) continue;  // the job has all the threads it can use
      ++joined_;
      job = job_;
      ++active_workers_;
      active_now_.store(active_workers_, std::memory_order_relaxed);
    }
    {
      ParallelChunkScope scope;
      work_on(job);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --active_workers_;
      active_now_.store(active_workers_, std::memory_order_release);
    }
    done_.notify_all();
  }
}

void ThreadPool::for_range(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) const {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t max_chunks = std::max<int64_t>(1, n / grain);
  // Nested in a chunk (of this pool or another): this pool's one job may be the outer one.
  if (workers_.empty() || max_chunks == 1 || ParallelChunkScope::active()) {
    fn(0, n);
    return;
  }
  const int64_t chunk = chunk_length(n, grain, threads());
  std::lock_guard<std::mutex> one_job(job_mutex_);
  {
    // A worker that woke late for the previous job may still hold it; let it leave before the
    // shared counters are reset, or it would run the old job's function on new chunks.
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return active_workers_ == 0; });
    job_ = Job{&fn, n, chunk, (n + chunk - 1) / chunk,
               static_cast<int>(std::min<int64_t>(static_cast<int64_t>(workers_.size()), max_chunks - 1))};
    joined_ = 0;
    next_.store(0, std::memory_order_relaxed);
    finished_.store(0, std::memory_order_relaxed);
    ++generation_;
    published_.store(generation_, std::memory_order_release);
  }
  // Workers spinning on published_ join without a notification; the rest sleep, and waking
  // more than the job can take would only make them skip it.
  for (int i = 0; i < job_.helpers; ++i) wake_.notify_one();
  {
    ParallelChunkScope scope;
    work_on(job_);
  }
  spin_until([&] {
    return finished_.load(std::memory_order_acquire) == job_.chunks &&
           active_now_.load(std::memory_order_acquire) == 0;
  });
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(
      lock, [&] { return finished_.load(std::memory_order_acquire) == job_.chunks && active_workers_ == 0; });
}

}  // namespace weave
