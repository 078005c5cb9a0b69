// The implicit-GEMM convolution (and plain GEMM) of the fast path, for one instruction set.
// ISA translation units only (see simd.h).
//
// Work is split into tasks of (image, group, chunk of pixel blocks, range of panels). A task
// first resolves, for every tap of the kernel window and every row of every MR-pixel block of
// its chunk, the address of that input pixel's channels (or of a zero row in the padding), then
// runs the micro-kernel over each panel x block. The micro-kernel keeps an MR x NV-vector tile
// of outputs in registers over the whole depth (taps x channels) and applies bias, residual and
// activation before its single store, so every output is written once.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/impl_epilogue.h"
#include "core/kernels/fast/simd.h"

namespace weave::fast::WEAVE_ISA_NS {

#if WEAVE_FAST_ISA == 512
inline constexpr int kMR = 12;  // 12 x 2 zmm accumulators + 2 weights + 1 broadcast of 32 registers
#else
inline constexpr int kMR = 6;  // 6 x 2 ymm accumulators + 2 weights + 1 broadcast of 16 registers
#endif
inline constexpr int kNV = 2;  // vectors per full panel
inline constexpr int kNR = kNV * Simd::W;
// Bound on the row-address table of one task (taps x rows), kept on the stack.
inline constexpr int64_t kMaxAddr = 4096;
// Window-row mode, for few input channels (a network's first layer): in NHWC the KW taps of
// one window row are KW x C contiguous floats, so a window row becomes one "tap" of depth
// KW x C (the packed weights' order, tap-major then channel, is the same). Rows that cross the
// left or right border are copied with their zeros into a per-task buffer of this many floats.
inline constexpr int64_t kRowModeChannels = 16;
inline constexpr int64_t kRowFloats = 6144;
// Pixel blocks of one task, at most.
inline constexpr int64_t kMaxChunk = 16;
// How far ahead of its reads the micro-kernel prefetches a panel (Tile::prefetch). Weights are
// read once per inference, mostly from memory (resnet18 holds 45 MB of them), in one sequential
// stream the hardware prefetchers follow too late: on a 2-core Xeon, resnet18 at 1 thread ran
// 31.9 -> 26.6 ms (median of 5 interleaved rounds) with 4 KiB of lead into L2.
inline constexpr int64_t kPrefetchFloats = 1024;
inline constexpr int kLineFloats = 16;

// Fewest rows the micro-kernel is compiled for: a block of fewer rows (a map smaller than that)
// runs the kMinMR-row kernel and stores only its own rows.
inline constexpr int kMinMR = kMR * 2 / 3;

// A map of P pixels (or Winograd tiles) cut into as many blocks as kMR rows need, the rows
// spread evenly: the first `longer` blocks have lo + 1 rows, the others lo (169 pixels: 4
// blocks of 12 and 11 of 11, not 14 of 12 and one of 1). Each block runs through the
// micro-kernel compiled for its row count, so the time follows the real rows.
struct Blocks {
  int64_t count, lo, longer;
  explicit Blocks(int64_t P) : count(P > kMR ? (P + kMR - 1) / kMR : 1), lo(P / count), longer(P % count) {}
  [[nodiscard]] int64_t first(int64_t b) const { return b * lo + (b < longer ? b : longer); }
  [[nodiscard]] int rows(int64_t b) const { return static_cast<int>(lo + (b < longer ? 1 : 0)); }
  // Rows of the kernel that runs block b (>= rows(b); the extra rows repeat its last pixel).
  [[nodiscard]] int kernel_rows(int64_t b) const { return rows(b) > kMinMR ? rows(b) : kMinMR; }
};

struct Tile {
  const float* const* a;  // [taps][kMR] row addresses
  int64_t taps, depth;    // depth = channels per tap
  const float* b;         // panel: [taps][depth][nv * W]
  // The panel's taps that the `taps` rows of `a` are, when some were skipped (every row of the
  // block reads the padding there); null: taps 0 .. taps - 1. tap_stride: floats of one tap of
  // the panel (depth * nv * W).
  const int16_t* tap_ids = nullptr;
  int64_t tap_stride = 0;
  float* y;
  int64_t ldy;
  int rows;      // valid rows (<= the kernel's MR)
  int64_t cols;  // valid columns (<= nv * W)
  const float* bias;
  const float* res;
  int64_t ldr;
  const Activation* act;
  // Prefetch the panel kPrefetchFloats ahead into L2 as it is read: set for the first block that
  // runs a panel, which reads it from memory (the others find it in cache).
  bool prefetch = false;
  // kMR x kNR floats of the caller's for the accumulators of a tile stored out of line (see
  // store_tile_from); a buffer of the micro-kernel's own costs it the same registers.
  float* spill = nullptr;
};

// The epilogue of a whole tile (every row and column valid), activation known at compile time:
// fully unrolled, so the accumulators stay in registers.
template <int MR, int NV, Activation::Kind K>
__attribute__((always_inline)) inline void store_tile(const V (&acc)[MR][NV], const Tile& t) {
  const Activation a = *t.act;  // a copy: through the reference, its fields were reloaded after stores
  const bool post = a.post_mul != 1.f || a.post_add != 0.f;
  V bias[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) bias[v] = t.bias != nullptr ? Simd::load(t.bias + v * Simd::W) : Simd::zero();
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      V o = Simd::add(acc[r][v], bias[v]);
      if (t.res != nullptr && !a.residual_last) o = Simd::add(o, Simd::load(t.res + r * t.ldr + v * Simd::W));
      o = activation_of<K>(o, a);
      if (post) o = Simd::fma(o, Simd::set1(a.post_mul), Simd::set1(a.post_add));
      if (t.res != nullptr && a.residual_last) o = Simd::add(o, Simd::load(t.res + r * t.ldr + v * Simd::W));
      Simd::store(t.y + r * t.ldy + v * Simd::W, o);
    }
}

// acc += the tile's rows x its panel over every tap. PF: prefetch the panel ahead (Tile::prefetch),
// a compile-time choice that keeps the test and its branch out of the inner loop.
//
// The depth loop counts an offset up to 0 against row pointers moved to the end of their rows,
// so that no loop bound needs a register: 12 row pointers, the offset and the panel pointer take
// 14 of x86-64's general registers. Counting up to a bound, GCC 12 moved a row pointer through a
// vector register every iteration (vmovq runs on port 0, one of the two FMA ports).
template <int MR, int NV, bool PF>
__attribute__((always_inline)) inline void accumulate(V (&acc)[MR][NV], const Tile& t) {
  const float* b = t.b;
  const int64_t depth = t.depth;
  for (int64_t tap = 0; tap < t.taps; ++tap) {
    if (t.tap_ids != nullptr) b = t.b + t.tap_ids[tap] * t.tap_stride;
    const float* const* ar = t.a + tap * kMR;
    const float* a[MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) a[r] = ar[r] + depth;
#pragma GCC unroll 2
    for (int64_t k = -depth; k != 0; ++k) {
      V bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) bv[v] = Simd::load(b + v * Simd::W);
      if constexpr (PF) {
#pragma GCC unroll 4
        for (int v = 0; v < NV * Simd::W; v += kLineFloats) __builtin_prefetch(b + kPrefetchFloats + v, 0, 2);
      }
      b += NV * Simd::W;
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const V av = Simd::set1(a[r][k]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[r][v] = Simd::fma(av, bv[v], acc[r][v]);
      }
    }
  }
}

// The epilogue of any tile from its accumulators stored row-major in `acc` (rows x NV vectors):
// edge tiles and the activations whose polynomials need many registers. Out of line, so that
// the micro-kernel holds little more than its accumulators: with these paths inline, GCC 12
// spilled vector registers and, short of general ones, moved row pointers through vector
// registers in the depth loop.
//
// The tile and its activation are copied in: read through references, their fields (the output
// pointer and stride, the residual, SiLU's alpha) were loaded again after every store, since a
// store through float* may change them as far as the compiler knows.
template <int NV, Activation::Kind K>
__attribute__((noinline)) void store_tile_from_k(const float* acc, const Tile& tile) {
  const Tile t = tile;
  const Activation a = *t.act;
  const bool post = a.post_mul != 1.f || a.post_add != 0.f;
  auto finish = [&](V o) { return post ? Simd::fma(o, Simd::set1(a.post_mul), Simd::set1(a.post_add)) : o; };
  auto act = [&](V o) { return finish(activation_of<K>(o, a)); };
  V bias[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int64_t left = t.cols - v * Simd::W;
    bias[v] = t.bias == nullptr || left <= 0 ? Simd::zero()
              : left >= Simd::W              ? Simd::load(t.bias + v * Simd::W)
                                             : Simd::load(t.bias + v * Simd::W, Simd::mask(left));
  }
  int r = 0;
  // Whole-width rows, kInterleave<K> / NV at a time, through the activation's interleaved form
  // (impl_epilogue.h): GELU after a Gemm or MatMul.
  if constexpr (constexpr int kLanes = kInterleave<K>; kLanes > NV) {
    constexpr int R = kLanes / NV;
    using L = Lanes<R * NV>;
    if (t.cols == NV * Simd::W)
      for (; r + R <= t.rows; r += R) {
        typename L::V o;
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) {
            V x = Simd::add(Simd::load(acc + ((r + i) * NV + v) * Simd::W), bias[v]);
            if (t.res != nullptr && !a.residual_last)
              x = Simd::add(x, Simd::load(t.res + (r + i) * t.ldr + v * Simd::W));
            o.v[i * NV + v] = x;
          }
        o = activation_of<K, L>(o, a);
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) {
            V f = finish(o.v[i * NV + v]);
            if (t.res != nullptr && a.residual_last)
              f = Simd::add(f, Simd::load(t.res + (r + i) * t.ldr + v * Simd::W));
            Simd::store(t.y + (r + i) * t.ldy + v * Simd::W, f);
          }
      }
  }
  // Whole-width rows two at a time, no branch between their 2 x NV vectors: each activation is
  // one long chain of dependent operations, and the vectors of one row at a time, each behind the
  // tests of a partial tile, overlapped poorly (SiLU after a 1x1 convolution of 16 -> 96 channels
  // at 112x112 on the AVX2 EPYC, one thread: 1.63 -> 1.42 ms, the fastest of 5 alternated runs).
  if (t.cols == NV * Simd::W) {
    const bool res_first = t.res != nullptr && !a.residual_last,
               res_last = t.res != nullptr && a.residual_last;
    for (; r + 2 <= t.rows; r += 2) {
      V o[2][NV];
#pragma GCC unroll 2
      for (int i = 0; i < 2; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
          o[i][v] = Simd::add(Simd::load(acc + ((r + i) * NV + v) * Simd::W), bias[v]);
          if (res_first) o[i][v] = Simd::add(o[i][v], Simd::load(t.res + (r + i) * t.ldr + v * Simd::W));
        }
#pragma GCC unroll 2
      for (int i = 0; i < 2; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) o[i][v] = act(o[i][v]);
#pragma GCC unroll 2
      for (int i = 0; i < 2; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
          if (res_last) o[i][v] = Simd::add(o[i][v], Simd::load(t.res + (r + i) * t.ldr + v * Simd::W));
          Simd::store(t.y + (r + i) * t.ldy + v * Simd::W, o[i][v]);
        }
    }
  }
  for (; r < t.rows; ++r) {
    float* yr = t.y + r * t.ldy;
    const float* rr = t.res != nullptr ? t.res + r * t.ldr : nullptr;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const int64_t left = t.cols - v * Simd::W;
      if (left <= 0) break;
      V o = Simd::add(Simd::load(acc + (r * NV + v) * Simd::W), bias[v]);
      const auto m = Simd::mask(left);
      const bool full = left >= Simd::W;
      auto residual = [&] { return full ? Simd::load(rr + v * Simd::W) : Simd::load(rr + v * Simd::W, m); };
      if (rr != nullptr && !a.residual_last) o = Simd::add(o, residual());
      o = act(o);
      if (rr != nullptr && a.residual_last) o = Simd::add(o, residual());
      if (full)
        Simd::store(yr + v * Simd::W, o);
      else
        Simd::store(yr + v * Simd::W, o, m);
    }
  }
}

// The activation is dispatched once per tile, each kind's loop with its polynomial inline (a
// call per vector into a switch, and exp out of line, cost SiLU more than the GEMM producing it).
template <int NV>
inline void store_tile_from(const float* acc, const Tile& t) {
  with_activation(t.act->kind, [&](auto k) { store_tile_from_k<NV, decltype(k)::value>(acc, t); });
}

template <int MR, int NV>
inline void micro_kernel(const Tile& t) {
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = Simd::zero();
  if (t.prefetch)
    accumulate<MR, NV, true>(acc, t);
  else
    accumulate<MR, NV, false>(acc, t);
  // Whole tiles (the common case) with the activations of few instructions: one store per
  // output straight from the registers.
  if (t.rows == MR && t.cols == NV * Simd::W) {
    switch (t.act->kind) {
#define WEAVE_TILE_CASE(k)                     \
  case Activation::k:                          \
    store_tile<MR, NV, Activation::k>(acc, t); \
    return;
      WEAVE_TILE_CASE(none)
      WEAVE_TILE_CASE(relu)
      WEAVE_TILE_CASE(clip)
      WEAVE_TILE_CASE(leaky_relu)
      WEAVE_TILE_CASE(hard_swish)
      WEAVE_TILE_CASE(hard_sigmoid)
#undef WEAVE_TILE_CASE
      default:  // polynomials: through the buffer (see store_tile_from)
        break;
    }
  }
  // The rest through the caller's buffer.
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) Simd::store(t.spill + (r * NV + v) * Simd::W, acc[r][v]);
  store_tile_from<NV>(t.spill, t);
}

// The micro-kernel for a block of `mr` rows (kMinMR <= mr <= kMR) and a panel of `cols` columns.
template <int MR = kMR>
inline void run_tile(int mr, const Tile& t) {
  if constexpr (MR > kMinMR) {
    if (mr < MR) return run_tile<MR - 1>(mr, t);
  }
  if (t.cols > Simd::W)
    micro_kernel<MR, kNV>(t);
  else
    micro_kernel<MR, 1>(t);
}

// One row of A (a GEMV: a fully connected layer at batch 1, an LSTM step) times `np` <= 4 full
// panels at once: 2 x np independent accumulator chains where the tile would waste MR - 1 rows.
inline void gemv_panels(const float* a, int64_t depth, const float* b, int64_t panel_floats, int np, float* y,
                        const float* bias, const float* res, const Activation& act) {
  V acc[4][kNV];
#pragma GCC unroll 4
  for (int p = 0; p < 4; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) acc[p][v] = Simd::zero();
  if (np == 4) {
    for (int64_t k = 0; k < depth; ++k) {
      const V av = Simd::set1(a[k]);
#pragma GCC unroll 4
      for (int p = 0; p < 4; ++p)
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v)
          acc[p][v] = Simd::fma(av, Simd::load(b + p * panel_floats + k * kNR + v * Simd::W), acc[p][v]);
    }
  } else {
    for (int p = 0; p < np; ++p)
      for (int64_t k = 0; k < depth; ++k) {
        const V av = Simd::set1(a[k]);
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v)
          acc[p][v] = Simd::fma(av, Simd::load(b + p * panel_floats + k * kNR + v * Simd::W), acc[p][v]);
      }
  }
  for (int p = 0; p < np; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) {
      const int64_t c = p * kNR + v * Simd::W;
      V o = acc[p][v];
      if (bias != nullptr) o = Simd::add(o, Simd::load(bias + c));
      if (res != nullptr && !act.residual_last) o = Simd::add(o, Simd::load(res + c));
      o = activate(o, act);
      if (res != nullptr && act.residual_last) o = Simd::add(o, Simd::load(res + c));
      Simd::store(y + c, o);
    }
}

// Drops the taps of a block whose every row reads the padding (they add nothing): moves the
// row addresses of the others to the front of `ab` and lists their tap numbers in `ids`.
// Returns how many taps are left. A dilated convolution over a map not much wider than its
// window (DeepLab's rate-12 3x3 over 20x20) reads the padding for most of its taps.
inline int64_t skip_padding_taps(const float** ab, int64_t taps, const float* zeros, int16_t* ids) {
  int64_t n = 0;
  for (int64_t tap = 0; tap < taps; ++tap) {
    const float** rows = ab + tap * kMR;
    bool pad = true;
    for (int r = 0; r < kMR && pad; ++r) pad = rows[r] == zeros;
    if (pad) continue;
    if (n != tap)
      for (int r = 0; r < kMR; ++r) ab[n * kMR + r] = rows[r];
    ids[n++] = static_cast<int16_t>(tap);
  }
  return n;
}

// The row addresses of one block of a 1x1, stride-1, unpadded convolution: its pixels' rows;
// the rows past the block's own repeat its last pixel (computed, never stored).
inline void direct_rows(const float** ab, const float* x, int64_t ldx, int64_t first, int rows) {
  for (int r = 0; r < kMR; ++r) ab[r] = x + (first + (r < rows ? r : rows - 1)) * ldx;
}

// A windowed convolution's taps as the micro-kernel sees them, worked out once per run: in row
// mode a tap is one row of the window (KW * Cg contiguous floats), else one pixel of it; off[t]
// is tap t's distance in floats from the window's first pixel.
static_assert(kMaxGemmTaps <= kMaxAddr / kMR, "every tap of a window the implicit GEMM takes has its offset");
struct WindowTaps {
  bool rows_mode = false;
  int64_t count = 0;
  int64_t seg = 0;  // row mode: floats of one window row
  int64_t off[kMaxAddr / kMR];
};

inline void window_taps(WindowTaps& w, const ConvGemmArgs& g, bool rows_mode) {
  w.rows_mode = rows_mode;
  w.seg = g.KW * g.Cg;
  w.count = rows_mode ? g.KH : g.KH * g.KW;
  for (int64_t kh = 0; kh < g.KH; ++kh) {
    if (rows_mode) {
      w.off[kh] = kh * g.DH * g.IW * g.ldx;
      continue;
    }
    for (int64_t kw = 0; kw < g.KW; ++kw) w.off[kh * g.KW + kw] = (kh * g.DH * g.IW + kw * g.DW) * g.ldx;
  }
}

// The row addresses of one block of a windowed convolution (ab[tap * kMR + r]); true when some
// row reads the padding. A row whose window lies inside the input (most rows) takes base + off[t]
// for every tap; a row at the border takes each tap's row or the zeros, and in row mode a window
// row cut by the left or right border is copied with its padding into `border` (`used` floats of
// it taken). Out of line: inside the task loop the compiler kept the row and column counters in
// memory, which cost a 1x1 convolution of 16 channels 40% of its multiply-adds' time.
__attribute__((noinline)) inline bool window_rows(const float** ab, const ConvGemmArgs& g, const float* x,
                                                  const WindowTaps& w, int64_t first, int rows, float* border,
                                                  int64_t& used) {
  const int64_t IH = g.IH, IW = g.IW, OW = g.OW, ldx = g.ldx, taps = w.count;
  const int64_t last_h = (g.KH - 1) * g.DH, last_w = (g.KW - 1) * g.DW;  // the window's far tap
  const int64_t step = g.SW * ldx;                                       // one output pixel on
  int64_t ow = first % OW;
  int64_t ih0 = (first / OW) * g.SH - g.PT, iw0 = ow * g.SW - g.PL;
  bool rows_in = ih0 >= 0 && ih0 + last_h < IH;    // the window's rows all inside
  const float* base = x + (ih0 * IW + iw0) * ldx;  // the window's first pixel (maybe outside)
  // Most blocks: all of their pixels in one output row, every window inside the input. Their
  // addresses are a base and a stride, written in one loop without the per-row bookkeeping below
  // (which kept its counters on the stack: a 3-channel first layer spent 30% of its time here).
  if (rows_in && ow + rows <= OW && iw0 >= 0 && iw0 + (rows - 1) * g.SW + last_w < IW) {
    for (int64_t t = 0; t < taps; ++t) {
      const float* b = base + w.off[t];
      const float** a = ab + t * kMR;
#pragma GCC unroll 16
      for (int r = 0; r < kMR; ++r) a[r] = b + (r < rows ? r : rows - 1) * step;
    }
    return false;
  }
  bool pad = false;
  for (int r = 0; r < kMR; ++r) {
    if (r >= rows) {  // past the block's own: its last pixel again (never stored)
      for (int64_t t = 0; t < taps; ++t) ab[t * kMR + r] = ab[t * kMR + r - 1];
      continue;
    }
    if (r > 0) {
      if (++ow == OW) {
        ow = 0;
        ih0 += g.SH;
        iw0 = -g.PL;
        rows_in = ih0 >= 0 && ih0 + last_h < IH;
        base = x + (ih0 * IW + iw0) * ldx;
      } else {
        iw0 += g.SW;
        base += step;
      }
    }
    if (rows_in && iw0 >= 0 && iw0 + last_w < IW) {
      for (int64_t t = 0; t < taps; ++t) ab[t * kMR + r] = base + w.off[t];
      continue;
    }
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      const int64_t ih = ih0 + kh * g.DH;
      if (w.rows_mode) {
        const float*& a = ab[kh * kMR + r];
        if (ih < 0 || ih >= IH) {
          a = g.zeros;
          pad = true;
        } else if (iw0 >= 0 && iw0 + g.KW <= IW) {
          a = x + (ih * IW + iw0) * ldx;
        } else {
          float* b = border + used;
          used += w.seg;
          for (int64_t kw = 0; kw < g.KW; ++kw) {
            const int64_t iw = iw0 + kw;
            const float* src = x + (ih * IW + iw) * ldx;
            for (int64_t c = 0; c < g.Cg; ++c) b[kw * g.Cg + c] = iw >= 0 && iw < IW ? src[c] : 0.f;
          }
          a = b;
        }
        continue;
      }
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        const int64_t iw = iw0 + kw * g.DW;
        const bool in = ih >= 0 && ih < IH && iw >= 0 && iw < IW;
        ab[(kh * g.KW + kw) * kMR + r] = in ? x + (ih * IW + iw) * ldx : g.zeros;
        pad = pad || !in;
      }
    }
  }
  return pad;
}

inline void conv_gemm(const ConvGemmArgs& g, const Parallel& par) {
  const int64_t P = g.OH * g.OW, taps = g.KH * g.KW;
  // An empty output (a map of height or width 0) has no pixel whose rows a block could repeat.
  if (P == 0 || g.N == 0 || g.Mg == 0) return;
  const int64_t panels = (g.Mg + kNR - 1) / kNR;
  const bool direct =
      taps == 1 && g.SH == 1 && g.SW == 1 && g.PT == 0 && g.PL == 0 && g.OH == g.IH && g.OW == g.IW;
  if (direct && P == 1 && g.groups == 1) {
    // GEMV: full panels up to four at a time (fewer when that leaves threads without a task),
    // split over the threads; the last (narrower) panel and any left over go through the tile.
    // A batch-1 product reads each weight once for 2 flops: memory-bound, so the weights count
    // as the elements of a streaming op do (parallel.h), not by their arithmetic alone. A
    // 1280x960 classifier is 2.5 MFLOP (2 threads) but 4.9 MB to stream (every thread).
    const int64_t full = g.Mg / kNR;
    const double work = std::max(2.0 * static_cast<double>(g.N * g.Mg * g.Cg),
                                 static_cast<double>(g.Mg * g.Cg) * kElementWork / 2);
    const int64_t threads = threads_for(par, work);
    const int64_t per = full >= 4 * threads ? 4 : full >= 2 * threads ? 2 : 1;  // panels per task
    const int64_t groups = (full + per - 1) / per;
    par.for_range(g.N * groups, grain_for(par, g.N * groups, work), [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t n = q / groups, j0 = (q % groups) * per;
        const int np = static_cast<int>(full - j0 < per ? full - j0 : per);
        const int64_t col0 = j0 * kNR;
        gemv_panels(g.x + n * g.x_image, g.Cg, g.w + j0 * g.layout.panel_floats, g.layout.panel_floats, np,
                    g.y + n * g.y_image + col0, g.bias != nullptr ? g.bias + col0 : nullptr,
                    g.residual != nullptr ? g.residual + n * g.r_image + col0 : nullptr, g.act);
      }
    });
    if (full * kNR == g.Mg) return;
    alignas(64) float spill[kMR * kNR];
    for (int64_t n = 0; n < g.N; ++n) {
      const float* addr[kMR];
      for (int r = 0; r < kMR; ++r) addr[r] = g.x + n * g.x_image;
      const int64_t col0 = full * kNR;
      Tile t{};
      t.a = addr;
      t.taps = 1;
      t.depth = g.Cg;
      t.b = g.w + full * g.layout.panel_floats;
      t.y = g.y + n * g.y_image + col0;
      t.ldy = g.ldy;
      t.rows = 1;
      t.cols = g.Mg - col0;
      t.bias = g.bias != nullptr ? g.bias + col0 : nullptr;
      t.res = g.residual != nullptr ? g.residual + n * g.r_image + col0 : nullptr;
      t.ldr = g.ldr;
      t.act = &g.act;
      t.spill = spill;
      run_tile(kMR, t);
    }
    return;
  }
  const int64_t seg = g.KW * g.Cg;  // floats of one window row in row mode
  const bool rows_mode = g.KW > 1 && g.DW == 1 && g.groups == 1 && g.ldx == g.Cg &&
                         g.Cg <= kRowModeChannels && g.KH * kMR * seg <= kRowFloats;
  const int64_t ttaps = rows_mode ? g.KH : taps;  // "taps" of the micro-kernel
  const int64_t depth = rows_mode ? seg : g.Cg;   // channels of one of those taps
  const Blocks bl(P);
  const int64_t blocks = bl.count;
  // Pixel blocks per task: bounded by the address table (and the border copies), and small
  // enough that a task's input rows stay in the L2 cache while every panel passes over them.
  int64_t chunk = kMaxAddr / (ttaps * kMR);
  if (rows_mode && chunk > kRowFloats / (g.KH * kMR * seg)) chunk = kRowFloats / (g.KH * kMR * seg);
  if (chunk > kMaxChunk) chunk = kMaxChunk;
  if (chunk < 1) chunk = 1;
  if (chunk > blocks) chunk = blocks;
  // Too few tasks to feed every thread a few (small maps: 13x13 is 15 blocks, one chunk):
  // halve the pixel chunks or split the panels, whichever side of a task is the larger, so
  // that tasks stay about square (each reloads its rows and its panels) and even.
  // Threads the arithmetic justifies (parallel.h), not every thread there is.
  const double work = 2.0 * static_cast<double>(g.N * g.groups * P * g.Mg * g.Cg * taps);
  const int threads = threads_for(par, work);
  int64_t splits = 1;
  auto tasks = [&] { return g.N * g.groups * ((blocks + chunk - 1) / chunk) * splits; };
  while (threads > 1 && tasks() < 4 * threads) {
    const int64_t per = (panels + splits - 1) / splits;
    if (chunk > 1 && (chunk >= per || splits >= panels))
      chunk = (chunk + 1) / 2;
    else if (splits < panels)
      ++splits;
    else
      break;
  }
  const int64_t chunks = (blocks + chunk - 1) / chunk;
  const int64_t items = g.N * g.groups * chunks;
  WindowTaps geo;
  if (!direct) window_taps(geo, g, rows_mode);
  const int64_t per_split = (panels + splits - 1) / splits;

  par.for_range(items * splits, grain_for(par, items * splits, work), [&](int64_t t0, int64_t t1) {
    const float* addr[kMaxAddr];
    int16_t ids[kMaxAddr / kMR];  // the taps each block keeps (skip_padding_taps)
    int64_t kept[kMaxChunk];      // how many
    alignas(64) float border[kRowFloats];
    alignas(64) float spill[kMR * kNR];
    int64_t used = 0;  // floats of `border` taken by this task
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t split = task % splits;
      const int64_t item = task / splits;
      const int64_t ck = item % chunks;
      const int64_t gi = (item / chunks) % g.groups;
      const int64_t n = item / (chunks * g.groups);
      const float* x = g.x + n * g.x_image + gi * g.Cg;
      const int64_t b0 = ck * chunk, b1 = b0 + chunk < blocks ? b0 + chunk : blocks;
      // Row addresses: addr[(blk - b0) * ttaps * kMR + tap * kMR + r].
      used = 0;
      for (int64_t blk = b0; blk < b1; ++blk) {
        const float** ab = addr + (blk - b0) * ttaps * kMR;
        bool pad = false;  // some row reads the padding: some tap may be all padding
        if (direct)
          direct_rows(ab, x, g.ldx, bl.first(blk), bl.rows(blk));
        else
          pad = window_rows(ab, g, x, geo, bl.first(blk), bl.rows(blk), border, used);
        kept[blk - b0] = pad ? skip_padding_taps(ab, ttaps, g.zeros, ids + (blk - b0) * ttaps) : ttaps;
      }
      const int64_t j0 = split * per_split, j1 = j0 + per_split < panels ? j0 + per_split : panels;
      const float* wg = g.w + gi * g.layout.group_floats;
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t col0 = j * kNR;
        const int64_t cols = g.Mg - col0 < kNR ? g.Mg - col0 : kNR;
        Tile t{};
        t.taps = ttaps;
        t.depth = depth;
        t.b = wg + j * g.layout.panel_floats;
        t.cols = cols;
        t.bias = g.bias != nullptr ? g.bias + gi * g.Mg + col0 : nullptr;
        t.act = &g.act;
        t.ldy = g.ldy;
        t.ldr = g.ldr;
        t.spill = spill;
        for (int64_t blk = b0; blk < b1; ++blk) {
          const int64_t p0 = bl.first(blk);
          t.a = addr + (blk - b0) * ttaps * kMR;
          t.taps = kept[blk - b0];
          t.tap_ids = t.taps < ttaps ? ids + (blk - b0) * ttaps : nullptr;
          t.tap_stride = depth * (cols > Simd::W ? kNR : Simd::W);
          t.rows = bl.rows(blk);
          t.y = g.y + n * g.y_image + p0 * g.ldy + gi * g.Mg + col0;
          t.res =
              g.residual != nullptr ? g.residual + n * g.r_image + p0 * g.ldr + gi * g.Mg + col0 : nullptr;
          t.prefetch = blk == b0;
          run_tile(bl.kernel_rows(blk), t);
        }
      }
    }
  });
}

}  // namespace weave::fast::WEAVE_ISA_NS
