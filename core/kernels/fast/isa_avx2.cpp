// The fast path's inner routines compiled for AVX2 + FMA; this file alone is built
// with -mavx2 -mfma (see meson.build) and is only called after
// cpu.h found the instruction set on the running CPU.
#define WEAVE_FAST_ISA 2
#define WEAVE_ISA_NS avx2

#include "core/kernels/fast/impl_conv_gemm.h"
#include "core/kernels/fast/impl_pixels.h"
#include "core/kernels/fast/impl_rows.h"
#include "core/kernels/fast/impl_spatial.h"
#include "core/kernels/fast/impl_winograd.h"

namespace weave::fast {

const Ops& ops_avx2() {
  static const Ops ops = [] {
    Ops o;
    o.isa = Isa::avx2;
    o.vec = avx2::Simd::W;
    o.mr = avx2::kMR;
    o.nr = avx2::kNR;
    o.conv_gemm = &avx2::conv_gemm;
    o.depthwise = &avx2::depthwise;
    o.pool = &avx2::pool;
    o.winograd = &avx2::winograd;
    o.softmax_rows = &avx2::softmax_rows;
    o.lstm_cell = &avx2::lstm_cell;
    o.winograd_workspace = &avx2::winograd_workspace;
    o.activate = &avx2::activate_array;
    o.pixels_to_planes = &avx2::pixels_to_planes;
    return o;
  }();
  return ops;
}

}  // namespace weave::fast
