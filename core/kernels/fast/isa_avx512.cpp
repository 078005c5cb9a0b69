// The fast path's inner routines compiled for AVX-512 (F, BW, DQ, VL); this file alone is built
// with -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma (see meson.build) and is only called after
// cpu.h found the instruction set on the running CPU.
#define WEAVE_FAST_ISA 512
#define WEAVE_ISA_NS avx512

#include "core/kernels/fast/impl_conv_gemm.h"
#include "core/kernels/fast/impl_pixels.h"
#include "core/kernels/fast/impl_rows.h"
#include "core/kernels/fast/impl_spatial.h"
#include "core/kernels/fast/impl_winograd.h"

namespace weave::fast {

const Ops& ops_avx512() {
  static const Ops ops = [] {
    Ops o;
    o.isa = Isa::avx512;
    o.vec = avx512::Simd::W;
    o.mr = avx512::kMR;
    o.nr = avx512::kNR;
    o.conv_gemm = &avx512::conv_gemm;
    o.depthwise = &avx512::depthwise;
    o.pool = &avx512::pool;
    o.winograd = &avx512::winograd;
    o.softmax_rows = &avx512::softmax_rows;
    o.lstm_cell = &avx512::lstm_cell;
    o.winograd_workspace = &avx512::winograd_workspace;
    o.activate = &avx512::activate_array;
    o.pixels_to_planes = &avx512::pixels_to_planes;
    return o;
  }();
  return ops;
}

}  // namespace weave::fast
