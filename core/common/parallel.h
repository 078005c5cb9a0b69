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
  virtual void for_range(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) const = 0;
};

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
