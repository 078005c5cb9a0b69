// Keeps the threads that hold compute slots of the budget on different CPUs.
//
// Why: a thread holding a slot computes for milliseconds, then gives the slot to a waiting
// thread and sleeps. Every such hand-over is a sleep and a wake-up, and the kernel is free to
// wake the next holder on the CPU where another holder is computing: on the 2-core VMs this
// project is measured on, 4 streams on a budget of 2 spent 15 % of the time with one core idle
// while two holders shared the other (perf sched: idle stretches of 2 to 12 ms), and the same
// streams with a budget of 4 (no hand-over) kept both cores busy. Pinning each holder for the
// length of its inference to a CPU no other holder of the process is on closes that gap.
//
// The pin is the least intrusive one that works: a holder stays on the CPU it runs on when no
// other holder is there (no migration), and moves to the least used CPU of its own allowed set
// otherwise (an application's or a container's CPU mask is respected). Its former mask is put
// back when the slot is given back, so a GStreamer streaming thread or an application thread is
// pinned only while it computes. Nothing is pinned when the budget has one slot, the thread may
// run on one CPU only, or the system refuses (the inference runs unpinned).
//
// WEAVE_PIN_SLOTS=0 in the environment turns it off (read once, when first needed).
#pragma once

namespace weave {

class CpuSpread {
 public:
  // Pins the calling thread as above and returns true, or changes nothing and returns false.
  // A thread pins at most once at a time (the budget's owning ComputeToken does it).
  [[nodiscard]] static bool pin_current_thread();
  // Gives back the CPU taken by pin_current_thread() and restores the thread's former mask;
  // does nothing when the calling thread is not pinned.
  static void unpin_current_thread();
  // The calling thread's system id (for keep_off_my_cpu), or 0 where there is none.
  [[nodiscard]] static long thread_id();
  // Keeps the thread `tid` (a budget worker about to help the calling thread) off the calling
  // thread's pinned CPU, or lets it run anywhere again when the caller is not pinned. `avoided`
  // is the worker's record of the CPU it avoids now (-1: none), so that the system call comes
  // only when that changes. Without it, a helper woken or spinning on its borrower's pinned CPU
  // shares that CPU with the borrower instead of running beside it.
  static void keep_off_my_cpu(long tid, int& avoided);

  // On unless WEAVE_PIN_SLOTS=0; the setter is for tests and embedders that place threads
  // themselves. Threads pinned now stay pinned until they unpin.
  [[nodiscard]] static bool enabled();
  static void set_enabled(bool on);
  // Threads of the process pinned to `cpu` right now; for tests.
  [[nodiscard]] static int pinned_on(int cpu);
};

}  // namespace weave
