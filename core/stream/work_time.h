// The time an element spends on its frames, for its read-only statistics: frames counted, work
// added up as it happens (possibly several pieces per frame), the mean per frame read from any
// thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace weave::stream {

class WorkTime {
 public:
  using Clock = std::chrono::steady_clock;

  void count_frame() { ++frames_; }
  // Adds the time from `start` until now.
  void add_since(Clock::time_point start) {
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    double total = total_ms_.load();
    while (!total_ms_.compare_exchange_weak(total, total + ms)) {
    }
  }
  void reset() {
    frames_ = 0;
    total_ms_ = 0.0;
  }

  [[nodiscard]] uint64_t frames() const { return frames_.load(); }
  [[nodiscard]] double total_ms() const { return total_ms_.load(); }
  // Milliseconds per frame counted; 0 before the first.
  [[nodiscard]] double mean_ms() const {
    const uint64_t n = frames_.load();
    return n == 0 ? 0.0 : total_ms_.load() / static_cast<double>(n);
  }

 private:
  std::atomic<uint64_t> frames_{0};
  std::atomic<double> total_ms_{0.0};
};

}  // namespace weave::stream
