// Which SIMD instruction set the fast kernels use on this machine. Chosen once per process at
// run time from CPUID (never from the build machine): AVX-512 (F, BW, DQ, VL) when the CPU and
// the OS support it, else AVX2 + FMA, else none (the reference kernels run everything).
//
// WEAVE_ISA=avx2 | avx512 | none in the environment caps the choice (a CPU without the
// requested set falls back to what it has), so one machine can test every path.
#pragma once

#include <string_view>

namespace weave::fast {

enum class Isa { none, avx2, avx512 };

// What the CPU offers, ignoring WEAVE_ISA.
[[nodiscard]] Isa detect_isa();
// detect_isa() capped by WEAVE_ISA; computed once.
[[nodiscard]] Isa active_isa();
[[nodiscard]] std::string_view isa_name(Isa isa);

}  // namespace weave::fast
