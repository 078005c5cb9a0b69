// Timing a workload the way benchmarks should (R11): `repeat` measurements, each the mean of
// `number` back-to-back runs. A single run of a small model is shorter than the clock's noise,
// so when a repeat takes less than `min_repeat_ms` the evaluator raises `number` (and measures
// that repeat again) until it does not; every repeat then uses the same `number`. The median
// over repeats is the figure to compare; min shows the best case.
//
//   TimeEvaluator te{.repeat = 10, .number = 1, .min_repeat_ms = 50};
//   auto r = te.measure(executor);           // or te.measure([&] { return my_work(); })
//   r->median_ms; r->min_ms; r->repeat_ms;    // ms per run
//
// Per-operator times: measure(executor) with ExecutorOptions::profile on also fills
// `operators`, every step's time summed over all timed runs (ProfileAggregator).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/runtime/executor.h"

namespace weave {

// One operator (plan step) over many runs.
struct OpTotals {
  int32_t node = 0;
  std::string op;
  std::string label;
  std::string shapes;
  double total_ms = 0;
  uint64_t calls = 0;
  [[nodiscard]] double mean_ms() const { return calls ? total_ms / static_cast<double>(calls) : 0.0; }
};

// Sums Executor::profile() rows over runs, by node. Rows from a different plan (other input
// dims) are kept apart by their shapes text.
class ProfileAggregator {
 public:
  void add(std::span<const OpProfile> rows);
  // Slowest first (by total time).
  [[nodiscard]] std::vector<OpTotals> operators() const;
  // Total ms by op type ("Conv" -> ms), over all runs.
  [[nodiscard]] std::map<std::string, double> by_op() const;
  [[nodiscard]] double total_ms() const;
  [[nodiscard]] bool empty() const { return rows_.empty(); }
  void clear() { rows_.clear(); }

 private:
  std::map<std::pair<int32_t, std::string>, OpTotals> rows_;
};

struct TimeResult {
  std::vector<double> repeat_ms;  // per repeat: mean ms of one run
  int number = 1;                 // runs per repeat after calibration
  int calibration_rounds = 0;     // repeats discarded while `number` was raised
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double mean_ms = 0;
  std::vector<OpTotals> operators;  // measure(Executor&) with profiling on; slowest first
};

struct TimeEvaluator {
  int repeat = 10;
  int number = 1;
  double min_repeat_ms = 0;
  // Upper limit on `number` while calibrating (a workload that takes no measurable time
  // would otherwise never reach min_repeat_ms).
  int max_number = 1 << 20;
  // Milliseconds on a monotonic clock; empty = std::chrono::steady_clock. Tests inject a fake.
  std::function<double()> clock;

  // Runs `work` repeat x number times (plus calibration). The first failure stops and is returned.
  [[nodiscard]] Expected<TimeResult> measure(const std::function<Status()>& work) const;
  // Times executor.run() on the inputs already set or bound; aggregates its profile rows when
  // the executor profiles.
  [[nodiscard]] Expected<TimeResult> measure(Executor& executor) const;
};

// Median of a list (mean of the two middle values for an even count); 0 for an empty list.
[[nodiscard]] double median_of(std::vector<double> values);

}  // namespace weave
