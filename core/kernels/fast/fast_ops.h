// The fast CPU path's inner routines, one table per instruction set (isa_avx2.cpp,
// isa_avx512.cpp), chosen at run time (cpu.h). The Kernel classes around them (conv_nhwc.cpp,
// pool_nhwc.cpp, ...) are ISA-independent: they validate, pack weights for the table's panel
// width at create, and call the table at run.
//
// Layout: activations are NHWC (channels innermost, a pixel's channels contiguous), which the
// layout pass (core/compiler/layout_nhwc.h) keeps from one fast op to the next. GEMM-shaped work
// runs one register-tile micro-kernel: MR pixels (rows) x NR output channels (columns), over
// weights packed once into panels of NR columns.
#pragma once

#include <cstdint>

#include "core/common/parallel.h"
#include "core/kernels/fast/cpu.h"

namespace weave::fast {

// Activation applied in a kernel's epilogue (after bias and the residual sum), then
// y * post_mul + post_add.
struct Activation {
  // The kinds after gelu_tanh are the standalone unary ops of the fast unary kernel
  // (unary_fast.cpp); no fusion pass puts them in an epilogue.
  enum Kind : uint8_t {
    none,
    relu,
    clip,
    leaky_relu,
    hard_swish,
    sigmoid,
    hard_sigmoid,
    tanh,
    swish,
    gelu,
    gelu_tanh,
    exp,
    log,
    erf,
    sqrt,
    reciprocal,
    square,
    softplus,
    mish,
  };
  Kind kind = none;
  // clip: lo, hi; leaky_relu: alpha; hard_sigmoid: alpha, beta; swish: alpha
  float p0 = 0.f, p1 = 0.f;
  float post_mul = 1.f, post_add = 0.f;
  // The residual is added after the activation and the affine instead of before (a YOLO
  // bottleneck's x + SiLU(conv(x))): set by core/compiler/fuse_residual_after_activation.h for
  // the convolution GEMM and Winograd epilogues only.
  bool residual_last = false;
};

// Packed weights of a convolution or GEMM: per group, panels of `nr` output channels (the last
// panel may be narrower, rounded up to a vector), each panel [taps][channels][width] floats,
// zero-padded, followed by nothing else. Offsets are in floats from the start of the buffer.
struct PackedLayout {
  int64_t nr = 0;            // full panel width (columns)
  int64_t panel_floats = 0;  // floats of a full-width panel: taps * channels * nr
  int64_t group_floats = 0;  // floats of one group's panels
};

// Windows up to this many taps use the implicit GEMM: its per-task address table (and the
// taps' offsets, WindowTaps) are bounded (a static_assert in impl_conv_gemm.h).
inline constexpr int64_t kMaxGemmTaps = 121;

// Implicit-GEMM convolution over NHWC data; also plain GEMM (a 1x1 convolution over "pixels"
// that are the rows of A). y[n, oh, ow, g*Mg + m] = act(sum_{kh,kw,c} x[n, ih, iw, g*Cg + c] *
// w[g][m][c][kh][kw] + bias[g*Mg + m] + residual[...]).
struct ConvGemmArgs {
  const float* x = nullptr;
  int64_t N = 1, IH = 1, IW = 1;
  int64_t ldx = 0;      // floats between two pixels of x (>= groups * Cg)
  int64_t x_image = 0;  // floats between two images of x
  float* y = nullptr;
  int64_t OH = 1, OW = 1;
  int64_t ldy = 0;      // floats between two pixels of y (>= groups * Mg)
  int64_t y_image = 0;  // floats between two images of y
  int64_t KH = 1, KW = 1, SH = 1, SW = 1, DH = 1, DW = 1, PT = 0, PL = 0;
  int64_t groups = 1, Cg = 0, Mg = 0;
  const float* w = nullptr;  // packed (PackedLayout)
  PackedLayout layout;
  const float* bias = nullptr;      // [groups * Mg] or null
  const float* residual = nullptr;  // pixels ldr floats apart (images r_image), or null
  int64_t ldr = 0, r_image = 0;
  Activation act;
  const float* zeros = nullptr;  // >= KW * Cg zero floats (the padding rows read)
};

// Depthwise convolution (one input channel per output channel) over NHWC data.
struct DepthwiseArgs {
  const float* x = nullptr;
  int64_t N = 1, IH = 1, IW = 1, C = 0;  // x pixels are C floats apart
  float* y = nullptr;
  int64_t OH = 1, OW = 1;
  int64_t KH = 1, KW = 1, SH = 1, SW = 1, DH = 1, DW = 1, PT = 0, PL = 0;
  const float* w = nullptr;  // [KH*KW][gw][Cpad] (channels padded to a vector)
  int64_t c_pad = 0;
  // Input channels per group: 1 for depthwise; a grouped convolution with as many outputs as
  // inputs per group and gw dividing the vector (Ops::grouped) reads channel gw * (c / gw) + i
  // with weight row i.
  int64_t gw = 1;
  int64_t ldy = 0;              // floats between two output pixels (grouped only; depthwise writes C apart)
  const float* bias = nullptr;  // [C] or null
  const float* residual = nullptr;
  Activation act;
};

// 3x3 stride-1 convolution by Winograd's F(4x4, 3x3) over NHWC data: 6x6 input tiles are
// transformed, multiplied per tile point by the transformed weights (36 GEMMs on the same
// micro-kernel) and transformed back into 4x4 outputs with bias, residual and activation.
// 4x fewer multiplications than the direct convolution for 9x the weights' memory / 4.
struct WinogradArgs {
  const float* x = nullptr;
  int64_t N = 1, IH = 1, IW = 1, C = 0;  // x pixels are C floats apart
  float* y = nullptr;
  int64_t OH = 1, OW = 1, M = 0;
  int64_t ldy = 0;  // floats between two pixels of y (0: M); the residual's are M apart
  int64_t PT = 0, PL = 0;
  const float* u = nullptr;  // 36 packed GEMM B operands [C][M], `layout.group_floats` apart
  PackedLayout layout;
  const float* bias = nullptr;
  const float* residual = nullptr;
  Activation act;
  // Scratch of winograd_workspace(args) bytes: one lane per thread that takes whole blocks of
  // tiles, for up to `lanes` threads (the same `lanes` when sizing and when running).
  float* workspace = nullptr;
  int64_t lanes = 1;
};

// Max or average pooling over NHWC data (2-D windows).
struct PoolArgs {
  const float* x = nullptr;
  int64_t N = 1, IH = 1, IW = 1, C = 0;
  float* y = nullptr;
  int64_t OH = 1, OW = 1;
  int64_t KH = 1, KW = 1, SH = 1, SW = 1, DH = 1, DW = 1, PT = 0, PL = 0;
  int64_t PB = 0, PR = 0;  // end pads: count_include_pad counts taps inside the padded extent
  bool max = true;
  bool count_include_pad = false;  // average pooling only
};

// A fixed reordering or selection of the last axis (Gather by constant indices): output vector
// v of a row is one or two windows of W input floats permuted into place (planned once per
// input width by plan_permute, gather_fast.cpp).
struct PermutePlan {
  int64_t n_in = 0, n_out = 0;
  // Per output vector {a, len_a, b, len_b}: the windows start at a and b (b < 0: one window; a < 0:
  // lane by lane from idx), len_* of their floats lie in the row (fewer than W: a masked load).
  const int32_t* blocks = nullptr;
  const int32_t* lanes = nullptr;  // per output vector, W lanes: < W from window a, >= W from b
  const int32_t* idx = nullptr;    // n_out source indices, each in [0, n_in)
};

struct Ops {
  Isa isa = Isa::none;
  int vec = 1;  // floats per vector
  int mr = 1;   // rows of the GEMM register tile
  int nr = 1;   // columns of a full panel
  void (*conv_gemm)(const ConvGemmArgs&, const Parallel&) = nullptr;
  void (*depthwise)(const DepthwiseArgs&, const Parallel&) = nullptr;
  // Grouped convolution of narrow groups (DepthwiseArgs::gw channels in and out per group, gw
  // dividing the vector): one channel vector holds whole groups, and each input channel of a
  // group reaches its outputs by a lane permutation.
  void (*grouped)(const DepthwiseArgs&, const Parallel&) = nullptr;
  void (*pool)(const PoolArgs&, const Parallel&) = nullptr;
  void (*winograd)(const WinogradArgs&, const Parallel&) = nullptr;
  std::size_t (*winograd_workspace)(const WinogradArgs&) = nullptr;
  // Softmax (or log-softmax) of `rows` rows of n floats.
  void (*softmax_rows)(const float* x, float* y, int64_t rows, int64_t n, bool log_softmax,
                       const Parallel&) = nullptr;
  // The same along an inner axis of k elements, `inner` floats apart: outer x k x inner floats
  // (YOLOv8's distribution decode: a softmax over 16 bins, axis 1 of [N, 16, 4, A]).
  void (*softmax_columns)(const float* x, float* y, int64_t outer, int64_t k, int64_t inner, bool log_softmax,
                          const Parallel&) = nullptr;
  // Layer normalization of `rows` rows of n floats: (x - mean) / sqrt(var + eps) * scale[i] +
  // bias[i] (bias may be null).
  void (*layer_norm_rows)(const float* x, float* y, int64_t rows, int64_t n, const float* scale,
                          const float* bias, float eps, const Parallel&) = nullptr;
  // y = act(x * a[i] + b[i]) over rows of n floats (a per-channel affine of NHWC data: an
  // inference BatchNormalization, y may be x).
  void (*channel_affine_rows)(const float* x, float* y, int64_t rows, int64_t n, const float* a,
                              const float* b, Activation act, const Parallel&) = nullptr;
  // One LSTM cell update (core/kernels/lstm_gemm.h, LstmGemm::cell).
  void (*lstm_cell)(const float* gs, const float* gx, float* c, float* h, int64_t H) = nullptr;
  // y[r][j] = x[r][idx[j]] over `rows` rows (PermutePlan).
  void (*permute_rows)(const float* x, float* y, int64_t rows, const PermutePlan& p,
                       const Parallel&) = nullptr;
  // A tile of a 2-D transpose of 4-byte values (kern::TransposeTile).
  void (*transpose_tile)(const uint32_t* src, int64_t lds, int64_t rows, int64_t cols, uint32_t* dst,
                         int64_t ldd) = nullptr;
  // y[i] = act(x[i]) for n floats (in place when y == x).
  void (*activate)(const float* x, float* y, int64_t n, Activation act) = nullptr;
  // n interleaved 3-channel 8-bit pixels to three planes: p_c[x] = src[3x + c] * a[c] + b[c].
  void (*pixels_to_planes)(const std::uint8_t* src, int64_t n, float* p0, float* p1, float* p2,
                           const float* a, const float* b) = nullptr;
};

// How many threads of a layer may each work in a scratch slice of their own in the kernel's
// workspace: one per hardware thread, at most `most`. The workspace is sized when planning,
// before a run's threads() is known, so kernels size it for this many and use
// min(this, threads()) (Winograd lanes, ExpandDepthwise bands).
[[nodiscard]] int64_t scratch_lanes(int64_t most);

// The table for active_isa(), or nullptr when the CPU (or WEAVE_ISA) allows no fast path or the
// build has none.
[[nodiscard]] const Ops* ops();

// Tables per instruction set (defined in the ISA translation units).
const Ops& ops_avx2();
const Ops& ops_avx512();

}  // namespace weave::fast
