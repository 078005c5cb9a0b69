// The fast path's inner routines compiled for AVX2 + FMA; this file alone is built
// with -mavx2 -mfma (see meson.build) and is only called after
// cpu.h found the instruction set on the running CPU.
#define WEAVE_FAST_ISA 2
#define WEAVE_ISA_NS avx2

#include "core/kernels/fast/impl_table.h"

namespace weave::fast {

const Ops& ops_avx2() {
  static const Ops ops = avx2::make_ops(Isa::avx2);
  return ops;
}

}  // namespace weave::fast
