// Intra-op parallelism as kernels see it. A kernel splits its work with for_range(); who runs
// the chunks (the calling thread alone, or a share of the process-wide thread budget) is the
// runtime's business, so kernels never own threads.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace weave {

// A non-owning, non-allocating reference to a callable (like std::function_ref of C++26).
template <class Sig>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT: implicit by design
      : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o, Args... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(a)...);
        }) {}
  R operator()(Args... a) const { return call_(obj_, std::forward<Args>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

class Parallel {
 public:
  virtual ~Parallel() = default;
  // Threads that may run chunks at once (>= 1).
  [[nodiscard]] virtual int threads() const = 0;
  // Calls fn(begin, end) on disjoint chunks covering [0, n), each at least `grain` long except
  // possibly the last, and returns when all are done. fn must not throw.
  // for_range uses at most min(threads(), n / grain) threads, the caller's included.
  virtual void for_range(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) const = 0;
};

// ---- threads an op's work justifies ----
//
// Each thread a for_range wakes costs the op a few microseconds when it spins, tens when it
// sleeps, and the op ends only when the last one is back. With a fixed split (four tasks per
// thread) a small convolution on 16 threads spent more on that than on its arithmetic: small
// models ran slower at 16 threads than at 8. So every thread must get at least
// kMinWorkPerThread of work, in float operations (a multiply-add counts 2; a memory-bound
// element counts what its bytes cost, kElementWork): about 20 us of one core's vector units.
inline constexpr double kMinWorkPerThread = 1.0e6;
// The work of one element of an elementwise or row op that streams memory (load and store 8
// bytes, ~1 ns per core), in the same units; transcendental ones count more.
inline constexpr double kElementWork = 32.0;

// Threads that `work` justifies on `par`: floor(work / kMinWorkPerThread), at least 1, at
// most par.threads(). Never decreasing in `work`.
[[nodiscard]] inline int threads_for(const Parallel& par, double work) {
  const double t = work / kMinWorkPerThread;
  const int most = par.threads();
  return t >= most ? most : t < 1 ? 1 : static_cast<int>(t);
}

// The grain that makes for_range(n, ...) use at most threads_for(par, work) threads for `n`
// items of `work` in all: `grain` itself when every thread is justified, else about n / t.
[[nodiscard]] inline int64_t grain_for(const Parallel& par, int64_t n, double work, int64_t grain = 1) {
  const int t = threads_for(par, work);
  if (t >= par.threads()) return grain;
  const int64_t g = (n + t - 1) / t;
  return g > grain ? g : grain;
}

// The chunk length a for_range hands out to `threads` threads: at least `grain`, and about
// eight chunks per thread, rounded down so that a few equal tasks (a convolution's 10 tiles of
// work on 2 threads) go one per chunk and split evenly; rounded up, 10 tasks made 5 chunks of
// 2, 3 for one thread and 2 for the other.
[[nodiscard]] inline int64_t chunk_length(int64_t n, int64_t grain, int threads) {
  const int64_t per = n / (static_cast<int64_t>(threads) * 8);
  return per > grain ? per : grain;
}

// Runs everything on the calling thread.
class SerialParallel final : public Parallel {
 public:
  [[nodiscard]] int threads() const override { return 1; }
  void for_range(int64_t n, int64_t, FunctionRef<void(int64_t, int64_t)> fn) const override {
    if (n > 0) fn(0, n);
  }
  static const SerialParallel& instance() {
    static const SerialParallel s;
    return s;
  }
};

}  // namespace weave
