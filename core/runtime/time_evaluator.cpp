#include "core/runtime/time_evaluator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace weave {

void ProfileAggregator::add(std::span<const OpProfile> rows) {
  for (const OpProfile& r : rows) {
    OpTotals& t = rows_[{r.node, r.shapes}];
    if (t.calls == 0) {
      t.node = r.node;
      t.op = r.op;
      t.label = r.label;
      t.shapes = r.shapes;
    }
    t.total_ms += r.ms;
    ++t.calls;
  }
}

std::vector<OpTotals> ProfileAggregator::operators() const {
  std::vector<OpTotals> out;
  out.reserve(rows_.size());
  for (const auto& [key, t] : rows_) out.push_back(t);
  std::stable_sort(out.begin(), out.end(),
                   [](const OpTotals& a, const OpTotals& b) { return a.total_ms > b.total_ms; });
  return out;
}

std::map<std::string, double> ProfileAggregator::by_op() const {
  std::map<std::string, double> out;
  for (const auto& [key, t] : rows_) out[t.op] += t.total_ms;
  return out;
}

double ProfileAggregator::total_ms() const {
  double s = 0;
  for (const auto& [key, t] : rows_) s += t.total_ms;
  return s;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {

double steady_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Expected<TimeResult> TimeEvaluator::measure(const std::function<Status()>& work) const {
  if (repeat < 1 || number < 1 || max_number < 1)
    return make_error("time evaluator: repeat (", repeat, "), number (", number, ") and max_number (",
                      max_number, ") must be at least 1");
  if (!(min_repeat_ms >= 0) || !std::isfinite(min_repeat_ms))
    return make_error("time evaluator: min_repeat_ms must be a finite number >= 0, got ", min_repeat_ms);
  const auto now = [this] { return clock ? clock() : steady_ms(); };
  TimeResult r;
  int n = std::min(number, max_number);
  // One timed repeat of n runs; returns total ms.
  auto timed = [&](int runs) -> Expected<double> {
    const double t0 = now();
    for (int i = 0; i < runs; ++i) WEAVE_TRY(work());
    return now() - t0;
  };
  for (int rep = 0; rep < repeat; ++rep) {
    auto ms = timed(n);
    if (!ms) return ms.error();
    // Too short to trust: raise number (aiming a little above the minimum) and measure again.
    // Only the first repeats can be short; later ones keep the calibrated number.
    while (*ms < min_repeat_ms && n < max_number && r.repeat_ms.empty()) {
      const double per_run = std::max(*ms / n, 1e-6);
      const double want = std::ceil(1.2 * min_repeat_ms / per_run);
      n = static_cast<int>(std::min<double>(max_number, std::max<double>(2.0 * n, want)));
      ++r.calibration_rounds;
      ms = timed(n);
      if (!ms) return ms.error();
    }
    r.repeat_ms.push_back(*ms / n);
  }
  r.number = n;
  r.median_ms = median_of(r.repeat_ms);
  r.min_ms = *std::min_element(r.repeat_ms.begin(), r.repeat_ms.end());
  r.max_ms = *std::max_element(r.repeat_ms.begin(), r.repeat_ms.end());
  r.mean_ms =
      std::accumulate(r.repeat_ms.begin(), r.repeat_ms.end(), 0.0) / static_cast<double>(r.repeat_ms.size());
  return r;
}

Expected<TimeResult> TimeEvaluator::measure(Executor& executor) const {
  ProfileAggregator agg;
  bool calibrating = true;
  auto work = [&]() -> Status {
    WEAVE_TRY(executor.run());
    if (!calibrating) agg.add(executor.profile());
    return {};
  };
  // Calibrate number first (untimed rows are not aggregated), then measure with it fixed.
  TimeEvaluator cal = *this;
  cal.repeat = 1;
  auto c = cal.measure(work);
  if (!c) return c.error();
  calibrating = false;
  TimeEvaluator fixed = *this;
  fixed.number = c->number;
  fixed.min_repeat_ms = 0;
  auto r = fixed.measure(work);
  if (!r) return r.error();
  r->calibration_rounds = c->calibration_rounds;
  r->operators = agg.operators();
  return r;
}

}  // namespace weave
