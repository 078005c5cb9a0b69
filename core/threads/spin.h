// Spinning before sleeping, for the hand-offs of the thread budget and ThreadPool. A futex
// wake-up costs tens of microseconds on a virtual machine, as much as a whole small operator at
// 2 threads: a helper woken for one Conv of a small model would arrive after the caller had done
// every chunk. Consecutive operators of one inference come much closer together than kSpin, so a
// worker stays awake through a run and sleeps between frames.
#pragma once

#include <chrono>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace weave {

inline constexpr auto kSpin = std::chrono::microseconds(50);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until done() or kSpin has passed; returns done().
template <class Done>
bool spin_until(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 1;; ++i) {
    if (done()) return true;
    if ((i & 63) == 0 && std::chrono::steady_clock::now() >= deadline) return done();
    cpu_relax();
  }
}

}  // namespace weave
