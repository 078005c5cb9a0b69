// What one parallel section costs beyond its work: the microseconds a for_range of tiny chunks
// takes on a private ThreadPool and on the process-wide budget, at each thread count. This is
// what an operator pays per call at T threads, and what made small models slower at 16 threads
// than at 8 when workers queued on a mutex to join and leave each job (docs/performance.md).
//
//   bench_fork_join [--threads 1,2,4,8,16] [--calls N] [--chunk-us U]
//
// Each call hands out 8 chunks per thread of about U microseconds of arithmetic (default 1), so
// a perfect pool would take 8*U us per call at any T; prints one JSON line per pool and T.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/threads/thread_budget.h"
#include "core/threads/thread_pool.h"

namespace {

volatile double g_sink = 0;

// About `us` microseconds of dependent arithmetic, calibrated once.
double spin_work(int64_t iters) {
  double x = 1.0;
  for (int64_t i = 0; i < iters; ++i) x = x * 0.999999 + 1e-7;
  return x;
}

int64_t calibrate(double us) {
  int64_t iters = 1000;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    g_sink = spin_work(iters);
    const double took =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (took > 2000) return static_cast<int64_t>(static_cast<double>(iters) * us / took);
    iters *= 4;
  }
}

double per_call_us(const weave::Parallel& par, int threads, int calls, int64_t iters) {
  const int64_t n = 8 * static_cast<int64_t>(threads);
  auto one = [&] {
    par.for_range(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) g_sink = spin_work(iters);
    });
  };
  for (int i = 0; i < calls / 10 + 1; ++i) one();  // workers started and warm
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) one();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> threads = {1, 2, 4, 8, 16};
  int calls = 20000;
  double chunk_us = 1.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0) {
      threads.clear();
      for (const char* p = argv[i + 1]; *p != '\0';) {
        char* end = nullptr;
        threads.push_back(static_cast<int>(std::strtol(p, &end, 10)));
        p = *end == ',' ? end + 1 : end;
      }
    } else if (std::strcmp(argv[i], "--calls") == 0) {
      calls = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--chunk-us") == 0) {
      chunk_us = std::atof(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: bench_fork_join [--threads 1,2,4,8,16] [--calls N] [--chunk-us U]\n");
      return 2;
    }
  }
  const int64_t iters = calibrate(chunk_us);
  for (int t : threads) {
    if (t < 1 || t > weave::kMaxThreads) continue;
    const double ideal = 8.0 * chunk_us;
    weave::ThreadPool pool(t);
    const double p = per_call_us(pool, t, calls, iters);
    std::printf("{\"pool\":\"ThreadPool\",\"threads\":%d,\"us_per_call\":%.2f,\"ideal_us\":%.2f}\n", t, p,
                ideal);
    auto& budget = weave::ThreadBudget::global();
    if (!budget.set_threads(t).ok()) continue;
    // As Executor::run() does: one slot held for the whole run, so each for_range borrows
    // helpers without taking (and pinning) a slot of its own.
    weave::ComputeToken token;
    const double b = per_call_us(budget.parallel(t), t, calls, iters);
    std::printf("{\"pool\":\"budget\",\"threads\":%d,\"us_per_call\":%.2f,\"ideal_us\":%.2f}\n", t, b, ideal);
    std::fflush(stdout);
  }
  return 0;
}
