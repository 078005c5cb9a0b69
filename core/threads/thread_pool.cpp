#include "core/threads/thread_pool.h"

#include <algorithm>

#include "core/threads/spin.h"
#include "core/threads/thread_budget.h"

namespace weave {

ThreadPool::ThreadPool(int threads) {
  const int workers = std::clamp(threads, 1, static_cast<int>(kCountMask) + 1) - 1;
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_seq_cst);
  { std::lock_guard<std::mutex> lock(sleep_mutex_); }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::work_on(const Job& job) const {
  for (;;) {
    const int64_t c = next_.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.chunks) break;
    const int64_t b = c * job.chunk;
    (*job.fn)(b, std::min(job.n, b + job.chunk));
  }
}

bool ThreadPool::wait_for_job(uint64_t seen) const {
  auto ready = [&] {
    return generation(ticket_.load(std::memory_order_seq_cst)) != seen ||
           stop_.load(std::memory_order_relaxed);
  };
  if (!spin_until(ready)) {
    // The caller reads sleepers_ after announcing a job: either it sees us here and signals
    // under the mutex, or we see its job in ready() below (both sequentially consistent).
    std::unique_lock<std::mutex> lock(sleep_mutex_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    wake_.wait(lock, ready);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }
  return !stop_.load(std::memory_order_relaxed);
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    uint64_t t = ticket_.load(std::memory_order_acquire);
    if (generation(t) == seen) {
      if (!wait_for_job(seen)) return;
      continue;
    }
    seen = generation(t);
    bool in = false;
    while ((t & kClosed) == 0 && joined(t) < allowed(t)) {
      if (ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        in = true;
        break;
      }
      if (generation(t) != seen) break;  // already the next job: the loop looks at it afresh
    }
    if (!in) continue;
    // Joined: the caller neither returns nor rewrites job_ until we leave.
    const Job job = job_;
    {
      ParallelChunkScope scope;
      work_on(job);
    }
    left_.fetch_add(1, std::memory_order_release);
    left_.notify_one();
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
  const auto helpers =
      static_cast<uint64_t>(std::min<int64_t>(static_cast<int64_t>(workers_.size()), max_chunks - 1));
  std::lock_guard<std::mutex> one_job(job_mutex_);
  // The previous job's ticket is closed and everyone who joined it has left (below), so nobody
  // reads these while they are written.
  job_ = Job{&fn, n, chunk, (n + chunk - 1) / chunk};
  next_.store(0, std::memory_order_relaxed);
  left_.store(0, std::memory_order_relaxed);
  ++generation_;
  ticket_.store(ticket(generation_, helpers), std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(sleep_mutex_); }
    // Spinning workers may take the places first; a woken one that finds none sleeps again.
    const int wake = std::min<int>(sleepers_.load(std::memory_order_relaxed), static_cast<int>(helpers));
    for (int i = 0; i < wake; ++i) wake_.notify_one();
  }
  {
    ParallelChunkScope scope;
    work_on(job_);
  }
  // Every chunk is taken: close the ticket, then wait for the workers that joined.
  const auto in = static_cast<int>(joined(ticket_.fetch_or(kClosed, std::memory_order_acq_rel)));
  if (spin_until([&] { return left_.load(std::memory_order_acquire) >= in; })) return;
  for (int l = left_.load(std::memory_order_acquire); l < in; l = left_.load(std::memory_order_acquire))
    left_.wait(l, std::memory_order_acquire);
}

}  // namespace weave
