// The table of one instruction set's routines (fast_ops.h, Ops): what each ISA translation unit
// returns from ops_avx2() / ops_avx512(). ISA translation units only (see simd.h).
#pragma once

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/impl_conv_gemm.h"
#include "core/kernels/fast/impl_pixels.h"
#include "core/kernels/fast/impl_rows.h"
#include "core/kernels/fast/impl_spatial.h"
#include "core/kernels/fast/impl_winograd.h"

namespace weave::fast::WEAVE_ISA_NS {

inline Ops make_ops(Isa isa) {
  Ops o;
  o.isa = isa;
  o.vec = Simd::W;
  o.mr = kMR;
  o.nr = kNR;
  o.conv_gemm = &conv_gemm;
  o.depthwise = &depthwise;
  o.grouped = &grouped_narrow;
  o.pool = &pool;
  o.winograd = &winograd;
  o.softmax_rows = &softmax_rows;
  o.softmax_columns = &softmax_columns;
  o.layer_norm_rows = &layer_norm_rows;
  o.lstm_cell = &lstm_cell;
  o.winograd_workspace = &winograd_workspace;
  o.activate = &activate_array;
  o.channel_affine_rows = &channel_affine_rows;
  o.pixels_to_planes = &pixels_to_planes;
  o.permute_rows = &permute_rows;
  o.transpose_tile = &transpose_tile;
  return o;
}

}  // namespace weave::fast::WEAVE_ISA_NS
