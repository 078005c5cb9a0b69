// The per-ISA loops of bench_fma_peak (bench/fma_peak.cpp), both defined by bench/fma_isa.cpp,
// compiled once per ISA with that ISA's flags. Call one only when the CPU has that ISA
// (weave::fast::detect_isa()).
#pragma once

#include <cstdint>

namespace weave::bench {

struct FmaLoop {
  const char* isa;
  int lanes;   // floats per vector
  int chains;  // independent accumulators
  // Runs `iters` iterations of `chains` vector FMAs; returns a checksum of the accumulators.
  float (*run)(int64_t iters);
};

[[nodiscard]] FmaLoop fma_loop_avx2();
[[nodiscard]] FmaLoop fma_loop_avx512();

}  // namespace weave::bench
