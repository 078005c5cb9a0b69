#include "core/threads/thread_budget.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <semaphore>
#include <thread>
#include <vector>

#include "core/common/buffer.h"
#include "core/threads/cpu_spread.h"
#include "core/threads/spin.h"

namespace weave {

namespace {

// Per thread: how deep in ComputeToken/ParallelChunkScope scopes it is (> 0: it holds or works
// under a slot) and whether it is running chunks of a for_range.
thread_local int t_depth = 0;
thread_local bool t_in_chunk = false;

// A worker's state word: (assignment sequence << 2) | phase. The sequence makes a revoke by the
// borrower of assignment s fail once the worker has moved past s (no ABA on reuse).
enum Phase : uint64_t { kIdle = 0, kAssigned = 1, kRunning = 2, kRevoked = 3 };
constexpr uint64_t word(uint64_t seq, Phase p) {
  return (seq << 2) | p;
}

struct Job {
  FunctionRef<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0;
  int64_t chunk = 0;
  int64_t chunks = 0;
  std::atomic<int64_t> next{0};
  std::mutex mutex;
  std::condition_variable done;
  int finished_helpers = 0;             // under mutex
  std::atomic<int> helpers_through{0};  // the same count, for the caller's spin before it sleeps

  void work() {
    for (;;) {
      const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) return;
      const int64_t b = c * chunk;
      (*fn)(b, std::min(n, b + chunk));
    }
  }
};

// A borrowed worker gets its job through `posted`: it spins on it for kSpin after each job,
// then sleeps on `wake`. `sleeping` tells the borrower whether to release `wake`; with both
// sides sequentially consistent, either the borrower sees the worker asleep and wakes it, or the
// worker sees the job before it sleeps, and every release of `wake` is acquired exactly once.
struct Worker {
  std::binary_semaphore wake{0};
  std::atomic<uint64_t> state{word(0, kIdle)};
  std::atomic<Job*> posted{nullptr};
  std::atomic<bool> sleeping{false};
  uint64_t seq = 0;          // under Impl::mutex
  std::atomic<long> tid{0};  // the worker thread's id, once it runs
  // Set once the thread runs (tid is stored); its first borrower waits for it (for_range).
  std::atomic<bool> started{false};
  int avoided = -1;  // CPU kept off (CpuSpread::keep_off_my_cpu); by its borrower only

  // Borrower side: hands over the job (once per borrow).
  void post(Job* job) {
    posted.store(job, std::memory_order_seq_cst);
    if (sleeping.exchange(false, std::memory_order_seq_cst)) wake.release();
  }

  // Worker side: the next job posted, spinning first, then sleeping.
  Job* next_post() {
    if (!spin_until([&] { return posted.load(std::memory_order_acquire) != nullptr; })) {
      sleeping.store(true, std::memory_order_seq_cst);
      if (posted.load(std::memory_order_seq_cst) == nullptr)
        wake.acquire();  // the borrower clears `sleeping` and releases
      else if (!sleeping.exchange(false, std::memory_order_seq_cst))
        wake.acquire();  // the borrower saw us asleep and releases: take that release
    }
    return posted.exchange(nullptr, std::memory_order_acq_rel);
  }
};

struct Helper {
  Worker* worker;
  uint64_t seq;
};

// One buffer of a pool. `leased` and `retired` are under ScratchPool::ws_mutex.
struct Scratch {
  AlignedBuffer mem;
  bool leased = false;
  bool retired = false;  // too small since a reserve_workspace(); freed when given back
};

// A pool of 64-byte-aligned buffers, at least one per slot (see SlotWorkspace / SlotArena); its
// own mutex, off the slot hand-out path. The budget has two: kernel scratch and lent arenas.
struct ScratchPool {
  // Adds a free buffer. ws_free keeps room for every buffer, so giving one back never allocates.
  void ws_add_locked(std::unique_ptr<Scratch> s) {
    ws_all.push_back(std::move(s));
    ws_free.reserve(ws_all.size());
    ws_free.push_back(ws_all.back().get());
  }

  // At least `want` usable (not retired) buffers of ws_reserved bytes. Returns whether it
  // allocated.
  bool ws_fill_locked(int want) {
    if (ws_reserved == 0) return false;
    int usable = 0;
    for (const auto& s : ws_all) usable += s->retired ? 0 : 1;
    bool allocated = false;
    for (; usable < want; ++usable) {
      ws_add_locked(std::make_unique<Scratch>(Scratch{AlignedBuffer(ws_reserved, /*zero=*/false)}));
      allocated = true;
    }
    return allocated;
  }

  bool ws_reserve(std::size_t bytes, int budget) {
    std::lock_guard<std::mutex> lock(ws_mutex);
    bool allocated = false;
    if (bytes > ws_reserved) {
      ws_reserved = bytes;
      for (const auto& s : ws_all) {
        if (s->mem.size() >= bytes) continue;
        if (s->leased) {
          s->retired = true;  // its run may be using it right now; ws_fill_locked replaces it
        } else {
          s->mem = AlignedBuffer(bytes, false);
          allocated = true;
        }
      }
    }
    // The budget may grow later; set_threads fills up to the new size then.
    return ws_fill_locked(budget) || allocated;
  }

  Scratch* ws_lease(std::size_t bytes) {
    std::size_t size = bytes;
    {
      std::lock_guard<std::mutex> lock(ws_mutex);
      // Most recently given back first: its pages are the likeliest to be resident already.
      for (auto it = ws_free.rbegin(); it != ws_free.rend(); ++it) {
        Scratch* s = *it;
        if (s->mem.size() < bytes) continue;
        ws_free.erase(std::next(it).base());
        s->leased = true;
        return s;
      }
      size = std::max(size, ws_reserved);
    }
    // None free and big enough: a nested run, or scratch nobody reserved. Allocated outside the
    // lock; it joins the pool and is free for later leases once given back.
    auto fresh = std::make_unique<Scratch>(Scratch{AlignedBuffer(size, /*zero=*/false)});
    Scratch* s = fresh.get();
    s->leased = true;
    std::lock_guard<std::mutex> lock(ws_mutex);
    // A reserve_workspace() since the read above may have raised the size everyone gets.
    s->retired = s->mem.size() < ws_reserved;
    ws_all.push_back(std::move(fresh));
    ws_free.reserve(ws_all.size());
    return s;
  }

  void ws_give_back(Scratch* s) {
    std::unique_ptr<Scratch> dead;  // freed after the lock is released
    std::lock_guard<std::mutex> lock(ws_mutex);
    s->leased = false;
    if (!s->retired) {
      ws_free.push_back(s);  // within the reserved capacity
      return;
    }
    for (auto it = ws_all.begin(); it != ws_all.end(); ++it)
      if (it->get() == s) {
        dead = std::move(*it);
        ws_all.erase(it);
        break;
      }
  }

  mutable std::mutex ws_mutex;
  std::size_t ws_reserved = 0;
  std::vector<std::unique_ptr<Scratch>> ws_all;  // every buffer, leased or free
  std::vector<Scratch*> ws_free;
};

int default_threads() {
  const int env = parse_thread_count(std::getenv("WEAVE_NUM_THREADS"));
  return env > 0 ? env : hardware_threads();
}

class BudgetParallel;

}  // namespace

struct ThreadBudget::Impl {
  explicit Impl(int n) : budget(n), free(n), budget_now(n) {}

  // A thread waiting for a slot: a record on its own stack, queued first come first served.
  // The releasing thread hands the slot over directly (the waiter never takes the mutex again)
  // and wakes that one waiter only: with a condition variable and notify_all, every release
  // woke every waiter, and they queued on the mutex the releaser still held (with 4 streams on
  // 2 slots, about two futex sleeps per inference, and cores left idle meanwhile).
  struct Waiter {
    std::binary_semaphore granted{0};
    Waiter* next = nullptr;
  };

  // Blocking, first come first served.
  void acquire() {
    Waiter me;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (queue_head == nullptr && free > 0) {
        --free;
        return;
      }
      (queue_tail != nullptr ? queue_tail->next : queue_head) = &me;
      queue_tail = &me;
    }
    me.granted.acquire();  // the slot is ours: hand_over_locked() counted it
  }

  // Gives free slots to the waiters at the head of the queue, one each. After granted.release()
  // the record may be gone (its thread returns), so it is not touched again.
  void hand_over_locked() {
    while (free > 0 && queue_head != nullptr) {
      Waiter* w = queue_head;
      queue_head = w->next;
      if (queue_head == nullptr) queue_tail = nullptr;
      --free;
      w->granted.release();
    }
  }

  void release_locked(int k = 1) {
    free += k;
    hand_over_locked();
  }

  void release(int k = 1) {
    std::lock_guard<std::mutex> lock(mutex);
    release_locked(k);
  }

  // Reserves up to `want` idle workers, each with a slot; never waits. Returns how many.
  int borrow(int want, Helper* out) {
    std::lock_guard<std::mutex> lock(mutex);
    if (queue_head != nullptr) return 0;  // whole inferences waiting for a slot go first
    const int n = std::min(want, free);
    int got = 0;
    while (got < n) {
      Worker* w = nullptr;
      if (!idle.empty()) {
        w = idle.back();
        idle.pop_back();
      } else if (static_cast<int>(workers.size()) < budget - 1) {
        workers.push_back(std::make_unique<Worker>());
        // Room for every worker on the idle list now: a worker going idle late (after its
        // borrower's run ended, possibly during another executor's run) must not allocate.
        idle.reserve(workers.size());
        w = workers.back().get();
        // Detached: the budget is never destroyed, and a worker blocked in wake.acquire() at
        // exit holds nothing.
        std::thread([this, w] { worker_main(w); }).detach();
      } else {
        break;
      }
      ++w->seq;
      w->state.store(word(w->seq, kAssigned), std::memory_order_relaxed);
      out[got++] = Helper{w, w->seq};
    }
    free -= got;
    return got;
  }

  void worker_main(Worker* w) {
    w->tid.store(CpuSpread::thread_id(), std::memory_order_release);
    w->started.store(true, std::memory_order_release);
    w->started.notify_all();
    for (;;) {
      Job* const posted = w->next_post();
      uint64_t s = w->state.load(std::memory_order_acquire);
      Job* job = nullptr;
      if ((s & 3) == kAssigned &&
          w->state.compare_exchange_strong(s, (s & ~uint64_t{3}) | kRunning, std::memory_order_acq_rel)) {
        job = posted;
        ParallelChunkScope scope;
        job->work();
      }
      // Back to idle before telling the caller, so that its next for_range can borrow us again.
      {
        std::lock_guard<std::mutex> lock(mutex);
        w->state.store(word(w->seq, kIdle), std::memory_order_relaxed);
        idle.push_back(w);
        if (job) release_locked();  // a revoked assignment's slot was given back by its caller
      }
      if (job) {
        // Notify under the job's mutex: the caller cannot see the count, return and destroy
        // the job (on its stack) until we let go of the mutex, and we touch nothing after.
        job->helpers_through.fetch_add(1, std::memory_order_release);
        std::lock_guard<std::mutex> lock(job->mutex);
        ++job->finished_helpers;
        job->done.notify_one();
      }
    }
  }

  mutable std::mutex mutex;
  int budget;
  int free;
  Waiter* queue_head = nullptr;  // threads waiting for a slot, first come first served
  Waiter* queue_tail = nullptr;
  std::atomic<int> budget_now;  // budget, readable without the mutex
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<Worker*> idle;
  std::vector<std::unique_ptr<const Parallel>> caps;  // index = cap, 0..kMaxThreads

  ScratchPool ws;     // kernel scratch (SlotWorkspace)
  ScratchPool arena;  // arenas lent to executors (SlotArena)
};

namespace {

class BudgetParallel final : public Parallel {
 public:
  BudgetParallel(ThreadBudget::Impl* b, int cap) : b_(b), cap_(cap) {}

  [[nodiscard]] int threads() const override {
    const int budget = b_->budget_now.load(std::memory_order_relaxed);
    return cap_ == 0 ? budget : std::min(cap_, budget);
  }

  void for_range(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) const override {
    if (n <= 0) return;
    grain = std::max<int64_t>(1, grain);
    const int64_t max_chunks = std::max<int64_t>(1, n / grain);
    // The caller computes in any case: with a slot of its own, or under the one it already has.
    ComputeToken token;
    const int want = static_cast<int>(std::min<int64_t>(threads(), max_chunks)) - 1;
    std::array<Helper, kMaxThreads> helpers;
    const int h = (want <= 0 || t_in_chunk) ? 0 : b_->borrow(want, helpers.data());
    if (h == 0) {
      ParallelChunkScope scope;  // nested calls in fn stay serial, whoever runs fn
      fn(0, n);
      return;
    }
    Job job;
    job.fn = &fn;
    job.n = n;
    job.chunk = chunk_length(n, grain, h + 1);
    job.chunks = (n + job.chunk - 1) / job.chunk;
    for (int i = 0; i < h; ++i) {
      Worker* w = helpers[i].worker;
      // A thread just created may not have run yet. It starts on its creator's CPU: always when
      // the creator is pinned (the mask is inherited), and often otherwise (on a 2-core VM, in 6
      // of 15 tries of an unpinned creator), and there it waits for this caller to be preempted,
      // 1.4 to 4 ms. Sleeping until it runs gives it that CPU at once, and then it has an id to
      // be kept off the caller's pinned CPU with. Once per worker, for the process's life.
      w->started.wait(false, std::memory_order_acquire);
      CpuSpread::keep_off_my_cpu(w->tid.load(std::memory_order_acquire), w->avoided);
      w->post(&job);
    }
    {
      ParallelChunkScope scope;
      job.work();
    }
    // Helpers not started by now are not needed: take them back (their slots too) rather than
    // wait for a wake-up that may take a scheduler tick on a loaded machine.
    int running = 0, revoked = 0;
    for (int i = 0; i < h; ++i) {
      uint64_t expect = word(helpers[i].seq, kAssigned);
      if (helpers[i].worker->state.compare_exchange_strong(expect, word(helpers[i].seq, kRevoked),
                                                           std::memory_order_acq_rel))
        ++revoked;
      else
        ++running;
    }
    if (revoked > 0) b_->release(revoked);
    spin_until([&] { return job.helpers_through.load(std::memory_order_acquire) == running; });
    std::unique_lock<std::mutex> lock(job.mutex);
    job.done.wait(lock, [&] { return job.finished_helpers == running; });
  }

 private:
  ThreadBudget::Impl* b_;
  int cap_;
};

}  // namespace

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(std::min<unsigned>(n, kMaxThreads));
}

int parse_thread_count(const char* text) {
  if (text == nullptr || *text == '\0') return 0;
  const char* end = text + std::strlen(text);
  int v = 0;
  auto [p, ec] = std::from_chars(text, end, v);
  if (ec != std::errc() || p != end || v < 1 || v > kMaxThreads) return 0;
  return v;
}

ThreadBudget::ThreadBudget() : impl_(new Impl(default_threads())) {
  impl_->caps.reserve(kMaxThreads + 1);
  for (int c = 0; c <= kMaxThreads; ++c) impl_->caps.push_back(std::make_unique<BudgetParallel>(impl_, c));
}

ThreadBudget& ThreadBudget::global() {
  static ThreadBudget* budget = new ThreadBudget();  // never destroyed, see impl_
  return *budget;
}

int ThreadBudget::threads() const {
  return impl_->budget_now.load(std::memory_order_relaxed);
}

Status ThreadBudget::set_threads(int threads) {
  if (threads < 0 || threads > kMaxThreads)
    return make_error("ThreadBudget::set_threads: ", threads, " is out of range (0 = default, 1..",
                      kMaxThreads, ")");
  if (threads == 0) threads = default_threads();
  // Scratch and arenas for the new slots before they can be taken.
  for (ScratchPool* pool : {&impl_->ws, &impl_->arena}) {
    std::lock_guard<std::mutex> pool_lock(pool->ws_mutex);
    pool->ws_fill_locked(threads);
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->free += threads - impl_->budget;
  impl_->budget = threads;
  impl_->budget_now.store(threads, std::memory_order_relaxed);
  impl_->hand_over_locked();
  return {};
}

int ThreadBudget::busy() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->budget - impl_->free;
}

const Parallel& ThreadBudget::parallel(int cap) const {
  return *impl_->caps[std::clamp(cap, 0, kMaxThreads)];
}

namespace {

std::size_t pool_reserved(const ScratchPool& p) {
  std::lock_guard<std::mutex> lock(p.ws_mutex);
  return p.ws_reserved;
}

int pool_buffers(const ScratchPool& p) {
  std::lock_guard<std::mutex> lock(p.ws_mutex);
  return static_cast<int>(p.ws_all.size());
}

std::size_t pool_total_bytes(const ScratchPool& p) {
  std::lock_guard<std::mutex> lock(p.ws_mutex);
  std::size_t total = 0;
  for (const auto& s : p.ws_all) total += s->mem.size();
  return total;
}

}  // namespace

bool ThreadBudget::reserve_workspace(std::size_t bytes) {
  return impl_->ws.ws_reserve(bytes, impl_->budget_now.load(std::memory_order_relaxed));
}

std::size_t ThreadBudget::workspace_reserved() const {
  return pool_reserved(impl_->ws);
}

int ThreadBudget::workspace_buffers() const {
  return pool_buffers(impl_->ws);
}

std::size_t ThreadBudget::workspace_total_bytes() const {
  return pool_total_bytes(impl_->ws);
}

bool ThreadBudget::reserve_arena(std::size_t bytes) {
  return impl_->arena.ws_reserve(bytes, impl_->budget_now.load(std::memory_order_relaxed));
}

std::size_t ThreadBudget::arena_reserved() const {
  return pool_reserved(impl_->arena);
}

int ThreadBudget::arena_buffers() const {
  return pool_buffers(impl_->arena);
}

std::size_t ThreadBudget::arena_total_bytes() const {
  return pool_total_bytes(impl_->arena);
}

SlotWorkspace::SlotWorkspace(std::size_t bytes) {
  if (bytes == 0) return;
  Scratch* s = ThreadBudget::global().impl_->ws.ws_lease(bytes);
  scratch_ = s;
  span_ = s->mem.span();
}

SlotWorkspace::~SlotWorkspace() {
  if (scratch_) ThreadBudget::global().impl_->ws.ws_give_back(static_cast<Scratch*>(scratch_));
}

SlotArena::SlotArena(std::size_t bytes) {
  if (bytes == 0) return;
  Scratch* s = ThreadBudget::global().impl_->arena.ws_lease(bytes);
  scratch_ = s;
  span_ = s->mem.span();
}

SlotArena::~SlotArena() {
  if (scratch_) ThreadBudget::global().impl_->arena.ws_give_back(static_cast<Scratch*>(scratch_));
}

ComputeToken::ComputeToken() {
  if (t_depth++ > 0) return;
  ThreadBudget& budget = ThreadBudget::global();
  budget.impl_->acquire();
  owner_ = true;
  // With one slot there is no other holder to keep apart from.
  if (budget.threads() > 1) (void)CpuSpread::pin_current_thread();
}

ComputeToken::~ComputeToken() {
  --t_depth;
  if (!owner_) return;
  CpuSpread::unpin_current_thread();  // nothing to do when the thread was not pinned
  ThreadBudget::global().impl_->release();
}

bool ComputeToken::held() {
  return t_depth > 0;
}

ParallelChunkScope::ParallelChunkScope() : prev_chunk_(t_in_chunk), prev_depth_(t_depth) {
  t_in_chunk = true;
  if (t_depth == 0) t_depth = 1;  // works under the slot of the job's caller
}

ParallelChunkScope::~ParallelChunkScope() {
  t_in_chunk = prev_chunk_;
  t_depth = prev_depth_;
}

bool ParallelChunkScope::active() {
  return t_in_chunk;
}

}  // namespace weave
