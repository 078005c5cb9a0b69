// bench_fma_peak: the single-thread FMA throughput of this CPU, the peak that a model's GFLOP/s
// is quoted against (bench/run.py, latency section).
//
//   bench_fma_peak [--ms MS] [--reps R]
//
// For every SIMD instruction set the CPU has (weave::fast::detect_isa(): AVX2 + FMA, and
// AVX-512 when present), runs independent chains of vector FMAs on the
// calling thread (bench/fma_isa.cpp): R measurements of about MS milliseconds each (default 50 ms x 15). One
// FMA counts as 2 FLOP per lane. Prints one JSON line with the best and the median GFLOP/s per ISA and
// `peak_gflops`, the best of the widest ISA: noise on a shared machine only lowers a measurement, so the best
// one is the closest to what the hardware does.
//
// The loops live in fma_isa.cpp, built once per ISA with its own -m flags; this file is built
// for the baseline x86-64 and picks what to run at run time.
#include "bench/fma_peak.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "bench/bench_util.h"
#include "core/kernels/fast/cpu.h"

namespace weave::bench {
namespace {

struct Result {
  double best = 0, median = 0;
  int64_t iters = 0;
  float checksum = 0;
};

Result measure(const FmaLoop& loop, double ms, int reps) {
  Result r;
  // Calibrate: grow the iteration count until one run lasts at least a tenth of MS.
  int64_t iters = 1 << 14;
  for (;;) {
    auto t0 = Clock::now();
    r.checksum += loop.run(iters);
    const double t = ms_since(t0);
    if (t >= ms / 10 || iters > (int64_t{1} << 40)) {
      iters = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(iters) * ms / std::max(t, 1e-3)));
      break;
    }
    iters *= 4;
  }
  r.iters = iters;
  const double flop = static_cast<double>(iters) * loop.chains * loop.lanes * 2.0;
  std::vector<double> gflops;
  for (int k = 0; k < reps; ++k) {
    auto t0 = Clock::now();
    r.checksum += loop.run(iters);
    gflops.push_back(flop / (ms_since(t0) * 1e-3) / 1e9);
  }
  r.best = *std::max_element(gflops.begin(), gflops.end());
  r.median = median(gflops);
  return r;
}

int run(int argc, char** argv) {
  double ms = 50;
  int reps = 15;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) die("usage: bench_fma_peak [--ms MS] [--reps R]");
    const std::string v = argv[++i];
    if (k == "--ms")
      ms = std::clamp(std::atof(v.c_str()), 1.0, 10000.0);
    else if (k == "--reps")
      reps = std::clamp(std::atoi(v.c_str()), 1, 1000);
    else
      die("bench_fma_peak: unknown option " + k);
  }
  const fast::Isa have = fast::detect_isa();
  std::vector<FmaLoop> loops;
  if (have == fast::Isa::avx2 || have == fast::Isa::avx512) loops.push_back(fma_loop_avx2());
  if (have == fast::Isa::avx512) loops.push_back(fma_loop_avx512());
  nlohmann::json j;
  j["bench"] = "fma_peak";
  j["threads"] = 1;
  j["isa_detected"] = std::string(fast::isa_name(have));
  j["isa_active"] = std::string(fast::isa_name(fast::active_isa()));  // what the kernels use (WEAVE_ISA)
  if (loops.empty()) die("bench_fma_peak: the CPU has neither AVX2 + FMA nor AVX-512");
  nlohmann::json per = nlohmann::json::object();
  for (const FmaLoop& loop : loops) {
    const Result r = measure(loop, ms, reps);
    per[loop.isa] = {{"gflops_best", r.best}, {"gflops_median", r.median}, {"lanes", loop.lanes},
                     {"chains", loop.chains}, {"iters", r.iters},          {"reps", reps},
                     {"checksum", r.checksum}};
    j["peak_isa"] = loop.isa;  // loops are in order of width: the last is the widest
    j["peak_gflops"] = r.best;
  }
  j["isa"] = per;
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace
}  // namespace weave::bench

int main(int argc, char** argv) {
  return weave::bench::run(argc, argv);
}
