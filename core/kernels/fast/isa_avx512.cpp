// The fast path's inner routines compiled for AVX-512 (F, BW, DQ, VL); this file alone is built
// with -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma (see meson.build) and is only called after
// cpu.h found the instruction set on the running CPU.
#define WEAVE_FAST_ISA 512
#define WEAVE_ISA_NS avx512

#include "core/kernels/fast/impl_table.h"

namespace weave::fast {

const Ops& ops_avx512() {
  static const Ops ops = avx512::make_ops(Isa::avx512);
  return ops;
}

}  // namespace weave::fast
