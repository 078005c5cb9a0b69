#include "core/kernels/fast/cpu.h"

#include <cpuid.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace weave::fast {
namespace {

uint64_t xgetbv0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t{edx} << 32) | eax;
}

}  // namespace

Isa detect_isa() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return Isa::none;
  const bool fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
  if (!fma || !osxsave || !avx) return Isa::none;
  const uint64_t xcr0 = xgetbv0();
  if ((xcr0 & 0x6) != 0x6) return Isa::none;  // the OS saves XMM and YMM state
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return Isa::none;
  const bool avx2 = (b >> 5) & 1;
  if (!avx2) return Isa::none;
  const bool f = (b >> 16) & 1, dq = (b >> 17) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1;
  const bool os512 = (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM0-15 upper halves, ZMM16-31
  if (f && dq && bw && vl && os512) return Isa::avx512;
  return Isa::avx2;
#else
  return Isa::none;
#endif
}

Isa active_isa() {
  static const Isa isa = [] {
    Isa have = detect_isa();
    const char* env = std::getenv("WEAVE_ISA");
    if (env == nullptr) return have;
    const std::string want(env);
    if (want == "none" || want == "reference") return Isa::none;
    if (want == "avx2" && have != Isa::none) return Isa::avx2;
    return have;
  }();
  return isa;
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
    case Isa::none:
      break;
  }
  return "none";
}

}  // namespace weave::fast
