// The process-wide thread budget (R12): every Executor of every element, thread and model in the
// process computes on the same B "compute slots" (B = WEAVE_NUM_THREADS, else the number of
// cores), so four elements on two cores run two threads, not eight.
//
// How the slots are used:
//  - Executor::run() holds one slot for its calling thread for the whole inference
//    (ComputeToken). When all B slots are taken it waits, first come first served, so at most
//    B inferences compute at once and each waiting one starts as soon as a slot frees up.
//    While it holds the slot the thread is pinned to a CPU no other holder is on (cpu_spread.h).
//  - A kernel's for_range() (through parallel(cap)) borrows up to cap - 1 more slots, each with
//    one of the budget's B - 1 worker threads, without ever waiting: it takes what is idle right
//    now and runs the rest of the chunks itself. A thread waiting for a whole inference has
//    priority over such borrowing, so a busy executor cannot starve the others by grabbing every
//    slot freed between two of its kernels.
//  So `threads` on an executor or element is a cap on its share, not a pool of its own.
//
// No deadlock by construction: only a thread holding no slot ever waits for one, and a thread
// running chunks of a for_range (the caller or a worker) counts as holding its job's slot. So an
// Executor run from inside a kernel, from a budget or ThreadPool worker, or nested in another
// run, reuses the slot of the thread it runs on, and a for_range nested in a chunk runs serially
// on that thread (the cap of the outer call stays the cap).
//
// Worker threads start on first need and live until the process exits.
//
// Kernel scratch (RunContext::workspace, e.g. im2col) belongs to the slots, not to executors:
// the budget keeps a pool of 64-byte-aligned scratch buffers, at least one per slot, each of at
// least workspace_reserved() bytes. Executor::run() leases one (SlotWorkspace) for the whole
// inference, right after taking its slot, and gives it back at the end; so an added executor
// costs its arena only, and B slots cost B scratch buffers however many executors exist.
// Executor::create and re-planning for a bigger plan call reserve_workspace() (which allocates),
// so run() never allocates: at most B inferences hold a slot at once and there are at least B
// buffers big enough. A run nested in another (from inside a kernel, or in a chunk, where the
// thread works under a slot whose scratch is in use) leases another buffer, a spare that is
// allocated the first time nesting needs it and kept for later nested runs.
#pragma once

#include <cstddef>
#include <span>

#include "core/common/parallel.h"
#include "core/common/status.h"

namespace weave {

// Largest budget or cap accepted.
inline constexpr int kMaxThreads = 256;

// std::thread::hardware_concurrency(), at least 1.
[[nodiscard]] int hardware_threads();

// The value of WEAVE_NUM_THREADS: a decimal integer in [1, kMaxThreads]; anything else (unset,
// empty, "0", "-2", "8x", "100000") gives 0, meaning "not set": the hardware default applies.
[[nodiscard]] int parse_thread_count(const char* text);

class ThreadBudget {
 public:
  // The one budget of the process, sized on first use from WEAVE_NUM_THREADS or the cores.
  [[nodiscard]] static ThreadBudget& global();

  // Number of compute slots (>= 1).
  [[nodiscard]] int threads() const;
  // Resizes the budget; 0 restores the default (WEAVE_NUM_THREADS, else the cores). Takes effect
  // at once: a shrink below the slots in use is honoured as they are given back.
  [[nodiscard]] Status set_threads(int threads);
  // Slots in use right now (inferences running plus borrowed helpers); for statistics and tests.
  [[nodiscard]] int busy() const;

  // The Parallel kernels get: it lends for_range() at most `cap` threads of the budget, the
  // caller included (0 = as many as the budget has; values above kMaxThreads are clamped).
  // The object lives as long as the process.
  [[nodiscard]] const Parallel& parallel(int cap) const;

  // Grows the scratch of every slot (and of every spare) to at least `bytes`, allocating now
  // rather than in run(); never shrinks. A buffer leased at this moment is replaced by a new one
  // and freed when given back. Returns whether anything was allocated.
  bool reserve_workspace(std::size_t bytes);
  // The size every slot's scratch has at least: the largest reserve_workspace() so far.
  [[nodiscard]] std::size_t workspace_reserved() const;
  // Scratch buffers alive (slots' and spares', leased or not), and their bytes; for statistics
  // and tests.
  [[nodiscard]] int workspace_buffers() const;
  [[nodiscard]] std::size_t workspace_total_bytes() const;

  // The same for the arenas lent to executors with ExecutorOptions::lend_arena (SlotArena): a
  // second pool, at least one buffer per slot of at least arena_reserved() bytes, so N idle
  // lending executors of a model cost no arena each, and B slots cost B arenas.
  bool reserve_arena(std::size_t bytes);
  [[nodiscard]] std::size_t arena_reserved() const;
  [[nodiscard]] int arena_buffers() const;
  [[nodiscard]] std::size_t arena_total_bytes() const;

  struct Impl;
  ThreadBudget(const ThreadBudget&) = delete;
  ThreadBudget& operator=(const ThreadBudget&) = delete;

 private:
  ThreadBudget();
  Impl* impl_;  // owned, never freed: workers may still run while static destructors do
  friend class ComputeToken;
  friend class SlotWorkspace;
  friend class SlotArena;
};

// A scratch buffer of the global budget's pool, leased for the scope (see the top of this
// file): at least `bytes` bytes, 64-byte aligned, used by no other thread or scope until the
// lease ends. bytes == 0 leases nothing (an empty span). Allocates only when no free buffer is
// big enough: bytes above workspace_reserved(), or more leases at once than buffers (nesting).
// Strictly scoped like ComputeToken.
class SlotWorkspace {
 public:
  explicit SlotWorkspace(std::size_t bytes);
  ~SlotWorkspace();
  SlotWorkspace(const SlotWorkspace&) = delete;
  SlotWorkspace& operator=(const SlotWorkspace&) = delete;

  [[nodiscard]] std::span<std::byte> span() const { return span_; }

 private:
  void* scratch_ = nullptr;  // the pool's buffer record, given back by the destructor
  std::span<std::byte> span_;
};

// An arena of the global budget's arena pool, leased for the scope exactly as SlotWorkspace leases
// scratch (same rules: reserved up front by reserve_arena, a spare for nested runs).
class SlotArena {
 public:
  explicit SlotArena(std::size_t bytes);
  ~SlotArena();
  SlotArena(const SlotArena&) = delete;
  SlotArena& operator=(const SlotArena&) = delete;

  [[nodiscard]] std::span<std::byte> span() const { return span_; }

 private:
  void* scratch_ = nullptr;
  std::span<std::byte> span_;
};

// Holds one compute slot of the global budget for the calling thread while in scope, waiting
// for one if needed, and keeps the thread on a CPU no other slot holder is on meanwhile
// (core/threads/cpu_spread.h). Re-entrant: a thread that already holds a slot (an outer token, or a
// worker running chunks for a slot holder) just keeps it. Strictly scoped: not copyable or
// movable, destroyed on the thread that made it.
class ComputeToken {
 public:
  ComputeToken();
  ~ComputeToken();
  ComputeToken(const ComputeToken&) = delete;
  ComputeToken& operator=(const ComputeToken&) = delete;

  // Whether the calling thread holds (or works under) a slot now.
  [[nodiscard]] static bool held();

 private:
  bool owner_ = false;
};

// Marks the calling thread as running chunks of a parallel job for the duration of the scope:
// it works under the slot of the job's caller (ComputeToken does not wait) and a for_range
// nested in a chunk runs serially. Used by the budget's workers and by ThreadPool.
class ParallelChunkScope {
 public:
  ParallelChunkScope();
  ~ParallelChunkScope();
  ParallelChunkScope(const ParallelChunkScope&) = delete;
  ParallelChunkScope& operator=(const ParallelChunkScope&) = delete;

  // Whether the calling thread is inside a chunk of some for_range.
  [[nodiscard]] static bool active();

 private:
  bool prev_chunk_;
  int prev_depth_;
};

}  // namespace weave
