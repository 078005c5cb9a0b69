// Depthwise convolution, pooling and standalone activations of the fast path over NHWC data, for
// one instruction set. ISA translation units only (see simd.h).
//
// All three vectorize over channels (contiguous in NHWC); depthwise keeps up to four channel
// vectors in flight so the per-tap FMA chains overlap.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/impl_epilogue.h"
#include "core/kernels/fast/simd.h"

namespace weave::fast::WEAVE_ISA_NS {

// Taps [lo, hi) of one window axis that land inside the input.
inline void tap_range(int64_t o, int64_t s, int64_t pad, int64_t d, int64_t k, int64_t in, int64_t& lo,
                      int64_t& hi) {
  const int64_t start = o * s - pad;
  lo = start >= 0 ? 0 : (-start + d - 1) / d;
  hi = in - start <= 0 ? 0 : (in - start + d - 1) / d;
  if (hi > k) hi = k;
  if (lo > hi) lo = hi;
}

// The activation of an epilogue applied to one output vector: RuntimeAct picks the kind with a
// switch each time; KnownAct<K> is the kind inlined, which a kernel chooses once per call (the
// switch cost a depthwise 3x3 at 56x56x64 15% of its time: 0.056 -> 0.048 ms without it).
struct RuntimeAct {
  const Activation& a;
  V operator()(V v) const { return activate(v, a); }
};
template <Activation::Kind K>
struct KnownAct {
  const Activation a;  // a copy: through a reference, its fields were reloaded after each store
  V operator()(V v) const {
    const V y = activation_of<K>(v, a);
    if (a.post_mul == 1.f && a.post_add == 0.f) return y;
    return Simd::fma(y, Simd::set1(a.post_mul), Simd::set1(a.post_add));
  }
};

// Calls fn(act) with the KnownAct of the common kinds of depthwise and convolution epilogues
// (none, Relu, Clip, HardSwish, Swish), else with a RuntimeAct.
template <class Fn>
inline void with_act(const Activation& a, Fn&& fn) {
  using A = Activation;
  switch (a.kind) {
    case A::none:
      return fn(KnownAct<A::none>{a});
    case A::relu:
      return fn(KnownAct<A::relu>{a});
    case A::clip:
      return fn(KnownAct<A::clip>{a});
    case A::hard_swish:
      return fn(KnownAct<A::hard_swish>{a});
    case A::swish:
      return fn(KnownAct<A::swish>{a});
    default:
      return fn(RuntimeAct{a});
  }
}

// One finished channel vector of an output pixel: + residual (rp, when given), activation, stored
// (masked by m unless full).
template <class Act>
inline void finish_vector(V o, float* yp, const float* rp, bool full, typename Simd::Mask m, const Act& act) {
  if (rp != nullptr) o = Simd::add(o, full ? Simd::load(rp) : Simd::load(rp, m));
  o = act(o);
  if (full)
    Simd::store(yp, o);
  else
    Simd::store(yp, o, m);
}

// One output pixel, channels [c, c + NV*W) (the last vector masked by `left`).
template <int NV, class Act>
inline void dw_pixel(const DepthwiseArgs& a, const float* x, float* y, const float* res, int64_t oh,
                     int64_t ow, int64_t c, int64_t khl, int64_t khh, const Act& act) {
  int64_t kwl = 0, kwh = 0;
  tap_range(ow, a.SW, a.PL, a.DW, a.KW, a.IW, kwl, kwh);
  V acc[NV];
  const int64_t left = a.C - c;
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int64_t l = left - v * Simd::W;
    acc[v] = a.bias != nullptr ? Simd::load(a.bias + c + v * Simd::W, Simd::mask(l)) : Simd::zero();
  }
  const int64_t ih0 = oh * a.SH - a.PT, iw0 = ow * a.SW - a.PL;
  for (int64_t kh = khl; kh < khh; ++kh) {
    const float* xr = x + ((ih0 + kh * a.DH) * a.IW + iw0) * a.C + c;
    const float* wr = a.w + kh * a.KW * a.c_pad + c;
    for (int64_t kw = kwl; kw < kwh; ++kw) {
      const float* xp = xr + kw * a.DW * a.C;
      const float* wp = wr + kw * a.c_pad;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        const int64_t l = left - v * Simd::W;
        const V xv =
            l >= Simd::W ? Simd::load(xp + v * Simd::W) : Simd::load(xp + v * Simd::W, Simd::mask(l));
        acc[v] = Simd::fma(xv, Simd::load(wp + v * Simd::W), acc[v]);
      }
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int64_t l = left - v * Simd::W;
    if (l >= Simd::W) {
      V o = acc[v];
      if (res != nullptr) o = Simd::add(o, Simd::load(res + c + v * Simd::W));
      Simd::store(y + c + v * Simd::W, act(o));
    } else {
      const auto m = Simd::mask(l);
      V o = acc[v];
      if (res != nullptr) o = Simd::add(o, Simd::load(res + c + v * Simd::W, m));
      Simd::store(y + c + v * Simd::W, act(o), m);
    }
  }
}

// NP interior output pixels ow0.. (every tap of their window rows inside the input), one
// channel vector [c, c + W) (masked by `left`): NP independent accumulator chains, and each
// weight vector loaded once for all of them.
template <int NP, bool full, class Act>
__attribute__((always_inline)) inline void dw_pixels(const DepthwiseArgs& a, const float* x, float* y,
                                                     const float* res, int64_t oh, int64_t ow0, int64_t c,
                                                     int64_t khl, int64_t khh, const Act& act) {
  const auto m = Simd::mask(a.C - c);
  const V b = a.bias != nullptr ? Simd::load(a.bias + c, m) : Simd::zero();
  V acc[NP];
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) acc[p] = b;
  const int64_t ih0 = oh * a.SH - a.PT, iw0 = ow0 * a.SW - a.PL;
  const int64_t step = a.SW * a.C;  // floats between the windows of neighbouring outputs
  for (int64_t kh = khl; kh < khh; ++kh) {
    const float* xr = x + ((ih0 + kh * a.DH) * a.IW + iw0) * a.C + c;
    const float* wr = a.w + kh * a.KW * a.c_pad + c;
    for (int64_t kw = 0; kw < a.KW; ++kw) {
      const V w = Simd::load(wr + kw * a.c_pad);
      const float* xp = xr + kw * a.DW * a.C;
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p)
        acc[p] = Simd::fma(full ? Simd::load(xp + p * step) : Simd::load(xp + p * step, m), w, acc[p]);
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p)
    finish_vector(acc[p], y + (ow0 + p) * a.C + c, res != nullptr ? res + (ow0 + p) * a.C + c : nullptr, full,
                  m, act);
}

// NP interior output pixels ow0.. of a window KW wide at stride S across, undilated across (rows
// may be dilated), channels [c0, c1) a vector at a time (the last one masked): each input vector
// of a window row is loaded once and feeds every output pixel whose window holds it,
// (NP - 1) * S + KW loads a row where dw_pixels makes NP * KW, so the FMAs, not the loads, set
// the pace. The channel loop is inside, over row and weight pointers found once per block:
// called once per channel vector, the addressing and the call cost as much as the 9 x NP FMAs
// of a 3x3 window (single-thread, AVX2, 3x3 at 28x28x72: 30 -> 43 GFLOP/s, 56x56x144 28 -> 38
// in a bench of the loop alone).
template <int NP, int KW, int S, class Act>
inline void dw_block_slide(const DepthwiseArgs& a, const float* x, float* y, const float* res, int64_t oh,
                           int64_t ow0, int64_t c0, int64_t c1, int64_t khl, int64_t khh, const Act& act) {
  // Locals, not fields read through the references: the compiler reloaded those after every
  // store (a float store may change them, as far as it knows).
  const Act f = act;
  const int64_t C = a.C, cp = a.c_pad, rows = khh - khl;
  const int64_t row_step = a.DH * a.IW * C, w_step = KW * cp;
  const float* x0 = x + ((oh * a.SH - a.PT + khl * a.DH) * a.IW + ow0 * S - a.PL) * C;
  const float* w0 = a.w + khl * w_step;
  const float* bias = a.bias;
  float* y0 = y + ow0 * C;
  const float* r0 = res != nullptr ? res + ow0 * C : nullptr;
  auto vector = [&](int64_t c, auto whole) {
    constexpr bool full = decltype(whole)::value;
    const auto m = Simd::mask(c1 - c);
    const V b = bias == nullptr ? Simd::zero() : full ? Simd::load(bias + c) : Simd::load(bias + c, m);
    V acc[NP];
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) acc[p] = b;
    const float* xr = x0 + c;
    const float* wr = w0 + c;
    for (int64_t r = 0; r < rows; ++r, xr += row_step, wr += w_step) {
      V w[KW];
#pragma GCC unroll 7
      for (int kw = 0; kw < KW; ++kw) w[kw] = Simd::load(wr + kw * cp);
#pragma GCC unroll 32
      for (int i = 0; i < (NP - 1) * S + KW; ++i) {
        V xv = full ? Simd::load(xr + i * C) : Simd::load(xr + i * C, m);
        // Opaque to the compiler: otherwise it folds the load into each FMA's memory operand,
        // loading the vector once per tap again.
        __asm__("" : "+v"(xv));
#pragma GCC unroll 7
        for (int kw = 0; kw < KW; ++kw)
          if (i - kw >= 0 && (i - kw) % S == 0 && (i - kw) / S < NP)
            acc[(i - kw) / S] = Simd::fma(xv, w[kw], acc[(i - kw) / S]);
      }
    }
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p)
      finish_vector(acc[p], y0 + p * C + c, r0 != nullptr ? r0 + p * C + c : nullptr, full, m, f);
  };
  int64_t c = c0;
  for (; c + Simd::W <= c1; c += Simd::W) vector(c, std::true_type{});
  if (c < c1) vector(c, std::false_type{});
}

// NP interior output pixels x NV full channel vectors at [c, c + NV*W): NP*NV independent
// chains, each weight vector loaded once per tap for the NP pixels.
template <int NP, int NV, class Act>
__attribute__((always_inline)) inline void dw_tile(const DepthwiseArgs& a, const float* x, float* y,
                                                   const float* res, int64_t oh, int64_t ow0, int64_t c,
                                                   int64_t khl, int64_t khh, const Act& act) {
  V acc[NP][NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const V b = a.bias != nullptr ? Simd::load(a.bias + c + v * Simd::W) : Simd::zero();
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) acc[p][v] = b;
  }
  const int64_t ih0 = oh * a.SH - a.PT, iw0 = ow0 * a.SW - a.PL;
  const int64_t step = a.SW * a.C;
  for (int64_t kh = khl; kh < khh; ++kh) {
    const float* xr = x + ((ih0 + kh * a.DH) * a.IW + iw0) * a.C + c;
    const float* wr = a.w + kh * a.KW * a.c_pad + c;
#pragma GCC unroll 3
    for (int64_t kw = 0; kw < a.KW; ++kw) {
      V w[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) w[v] = Simd::load(wr + kw * a.c_pad + v * Simd::W);
      const float* xp = xr + kw * a.DW * a.C;
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
          acc[p][v] = Simd::fma(Simd::load(xp + p * step + v * Simd::W), w[v], acc[p][v]);
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const int64_t off = (ow0 + p) * a.C + c + v * Simd::W;
      V o = acc[p][v];
      if (res != nullptr) o = Simd::add(o, Simd::load(res + off));
      Simd::store(y + off, act(o));
    }
}

// Channels a row is done in at once: a multiple of four vectors whose weights and the window
// rows of a block of pixels stay in L1 (about 24 KB) while the row's pixels go by, or all of
// them when they are not much more. Without it, a wide map of few pixels (7x7 at 1152 channels, 5x5 windows:
// 115 KB of weights) reloads every weight from L2 for every pixel.
inline int64_t depthwise_chunk(const DepthwiseArgs& a) {
  // Weights that fit in half of L1 stay there anyway; splitting the row would only cost (3x3
  // stride 2 at 144 channels: 8% slower in chunks).
  if (a.KH * a.KW * a.C * static_cast<int64_t>(sizeof(float)) <= (int64_t{16} << 10)) return a.C;
  const int64_t window_w = (a.KW - 1) * a.DW + 1;
  const int64_t per_channel =
      (a.KH * a.KW + a.KH * (8 * a.SW + window_w)) * static_cast<int64_t>(sizeof(float));
  const int64_t unit = 4 * Simd::W;
  int64_t c = (int64_t{24} << 10) / per_channel / unit * unit;
  if (c < unit) c = unit;
  return 2 * c >= a.C ? a.C : c;  // a row of up to two chunks' channels stays whole
}

// Channels [c0, c1) of output row `row` (image and row); columns [in_lo, in_hi) have their whole
// window inside the input's width. Chunks end on whole vectors but the last.
template <class Act>
inline void depthwise_row(const DepthwiseArgs& a, int64_t row, int64_t in_lo, int64_t in_hi, int64_t c0,
                          int64_t c1, const Act& act) {
  const int64_t n = row / a.OH, oh = row % a.OH;
  const float* x = a.x + n * a.IH * a.IW * a.C;
  float* y = a.y + (n * a.OH + oh) * a.OW * a.C;
  const float* res = a.residual != nullptr ? a.residual + (n * a.OH + oh) * a.OW * a.C : nullptr;
  int64_t khl = 0, khh = 0;
  tap_range(oh, a.SH, a.PT, a.DH, a.KH, a.IH, khl, khh);
  auto edge = [&](int64_t ow) {
    float* yp = y + ow * a.C;
    const float* rp = res != nullptr ? res + ow * a.C : nullptr;
    int64_t c = c0;
    for (; c + 4 * Simd::W <= c1; c += 4 * Simd::W) dw_pixel<4>(a, x, yp, rp, oh, ow, c, khl, khh, act);
    for (; c < c1; c += Simd::W) dw_pixel<1>(a, x, yp, rp, oh, ow, c, khl, khh, act);
  };
  // Undilated windows 3, 5 or 7 wide at stride 1 (3 or 5 at stride 2) slide: blocks of pixels
  // share each weight load and each input load, and give independent chains (dw_block_slide;
  // 3x3 at 56x56x144: 0.141 -> 0.090 ms on AVX-512 against a pixel at a time, 0.187 -> 0.163 on
  // AVX2; at stride 2 on AVX2, 5x5 at 56x56x72 0.13 -> 0.095 ms against the per-pixel path).
  const bool slide = a.DW == 1 && ((a.SW == 1 && (a.KW == 3 || a.KW == 5 || a.KW == 7)) ||
                                   (a.SW == 2 && (a.KW == 3 || a.KW == 5)));
  // Other narrow windows at a stride or dilated across: the interior in tiles of 4 pixels x 2
  // channel vectors, or one pixel's four channel vectors at a time, walking memory in order
  // (single-thread CPU time on AVX2: 3x3 stride 2 at 32 channels 1.31 vs 1.84 ms).
  if (!slide && a.KW < 5 && (a.SW > 1 || (a.DW > 1 && a.C >= 8 * Simd::W))) {
    // Wide channels at stride 2 stay per pixel (single-thread CPU time on AVX2: 144 channels
    // @56 stride 1 0.56 -> 0.38 ms tiled; stride 2 0.15 per pixel vs 0.24 ms tiled).
    const bool tiles = a.SW == 1 || a.C < 8 * Simd::W;
    const int64_t c2 = c0 + (c1 - c0) / (2 * Simd::W) * (2 * Simd::W);
    for (int64_t ow = 0; ow < (tiles ? in_lo : 0); ++ow) edge(ow);
    int64_t ow = tiles ? in_lo : 0;
    for (; tiles && ow + 4 <= in_hi; ow += 4) {
      for (int64_t c = c0; c < c2; c += 2 * Simd::W) dw_tile<4, 2>(a, x, y, res, oh, ow, c, khl, khh, act);
      if (c2 + Simd::W == c1)  // one whole vector left: four chains, not one pixel at a time
        dw_tile<4, 1>(a, x, y, res, oh, ow, c2, khl, khh, act);
      else if (c2 < c1)
        for (int64_t p = 0; p < 4; ++p) {
          float* yp = y + (ow + p) * a.C;
          const float* rp = res != nullptr ? res + (ow + p) * a.C : nullptr;
          for (int64_t c = c2; c < c1; c += Simd::W) dw_pixel<1>(a, x, yp, rp, oh, ow + p, c, khl, khh, act);
        }
    }
    for (; ow < a.OW; ++ow) edge(ow);
    return;
  }
  for (int64_t ow = 0; ow < in_lo; ++ow) edge(ow);
  // Blocks of pixels outer, channels inner: a block's windows stay in L1 across channels.
  const int64_t cfull = c0 + (c1 - c0) / Simd::W * Simd::W;
  // Blocks of NP pixels from ow, every channel vector; Kw > 0: the sliding window of an
  // undilated row Kw wide at stride Sw (dw_block_slide), else each pixel's window read whole
  // (dw_pixels).
  auto block = [&](auto np, auto kw, auto sw, int64_t ow) {
    constexpr int NP = decltype(np)::value, Kw = decltype(kw)::value, Sw = decltype(sw)::value;
    if constexpr (Kw > 0) {
      dw_block_slide<NP, Kw, Sw>(a, x, y, res, oh, ow, c0, c1, khl, khh, act);
    } else {
      for (int64_t c = c0; c < cfull; c += Simd::W)
        dw_pixels<NP, true>(a, x, y, res, oh, ow, c, khl, khh, act);
      if (cfull < c1) dw_pixels<NP, false>(a, x, y, res, oh, ow, cfull, khl, khh, act);
    }
  };
  // The interior in blocks of 8 and 4 pixels (and 2 with the sliding window); the last pixels
  // one at a time: a block of one is a single FMA chain per channel vector, waiting on each tap's
  // latency, where four vectors of one pixel (as at the edges) overlap four (7x7 maps of 5x5
  // windows: 3 interior pixels a row).
  auto interior = [&](auto kw, auto sw) {
    using I = std::integral_constant<int, 0>;
    int64_t ow = in_lo;
    for (; ow + 8 <= in_hi; ow += 8) block(std::integral_constant<int, 8>{}, kw, sw, ow);
    for (; ow + 4 <= in_hi; ow += 4) block(std::integral_constant<int, 4>{}, kw, sw, ow);
    if constexpr (decltype(kw)::value > 0)
      for (; ow + 2 <= in_hi; ow += 2) block(std::integral_constant<int, 2>{}, kw, sw, ow);
    for (; ow < in_hi; ++ow)
      if (c1 - c0 >= 4 * Simd::W)
        edge(ow);
      else
        block(std::integral_constant<int, 1>{}, I{}, I{}, ow);
  };
  // The sliding window wherever it applies: 3x3 at 56x56x64 0.047 -> 0.038 ms on AVX-512 (the
  // same on AVX2), 5x5 and 7x7 more.
  using One = std::integral_constant<int, 1>;
  using Two = std::integral_constant<int, 2>;
  if (slide && a.SW == 1 && a.KW == 3)
    interior(std::integral_constant<int, 3>{}, One{});
  else if (slide && a.SW == 1 && a.KW == 5)
    interior(std::integral_constant<int, 5>{}, One{});
  else if (slide && a.SW == 1 && a.KW == 7)
    interior(std::integral_constant<int, 7>{}, One{});
  else if (slide && a.KW == 3)
    interior(std::integral_constant<int, 3>{}, Two{});
  else if (slide && a.KW == 5)
    interior(std::integral_constant<int, 5>{}, Two{});
  else
    interior(std::integral_constant<int, 0>{}, One{});
  for (int64_t ow = in_hi; ow < a.OW; ++ow) edge(ow);
}

// Output columns [in_lo, in_hi) whose whole window lies inside the input's width.
inline void interior_columns(const DepthwiseArgs& a, int64_t& in_lo, int64_t& in_hi) {
  const int64_t span = (a.KW - 1) * a.DW;
  in_lo = a.PL > 0 ? (a.PL + a.SW - 1) / a.SW : 0;
  in_hi = a.IW + a.PL - span <= 0 ? 0 : (a.IW + a.PL - span - 1) / a.SW + 1;
  if (in_hi > a.OW) in_hi = a.OW;
  if (in_lo > in_hi) in_lo = in_hi;
}

inline void depthwise(const DepthwiseArgs& a, const Parallel& par) {
  int64_t in_lo = 0, in_hi = 0;
  interior_columns(a, in_lo, in_hi);
  const int64_t rows = a.N * a.OH;
  const double work = 2.0 * static_cast<double>(rows * a.OW * a.C * a.KH * a.KW);
  const int64_t chunk = depthwise_chunk(a);
  with_act(a.act, [&](const auto& act) {
    par.for_range(rows, grain_for(par, rows, work), [&](int64_t r0, int64_t r1) {
      for (int64_t row = r0; row < r1; ++row)
        for (int64_t c0 = 0; c0 < a.C; c0 += chunk)
          depthwise_row(a, row, in_lo, in_hi, c0, c0 + chunk < a.C ? c0 + chunk : a.C, act);
    });
  });
}

// NV vectors of channels from c (the last one masked when c1 - c < NV * W) of one output pixel:
// the max or the scaled sum over taps [khl, khh) x [kwl, kwh) of the window at (ih0, iw0).
template <int NV, bool Max>
__attribute__((always_inline)) inline void pool_vectors(const PoolArgs& a, const float* x, int64_t ih0,
                                                        int64_t iw0, int64_t khl, int64_t khh, int64_t kwl,
                                                        int64_t kwh, int64_t c, int64_t c1, V scale,
                                                        float* y) {
  const int64_t left = c1 - c;  // >= NV * W when NV > 1
  const auto m = Simd::mask(left);
  V acc[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v)
    acc[v] = Max ? Simd::set1(-std::numeric_limits<float>::infinity()) : Simd::zero();
  for (int64_t kh = khl; kh < khh; ++kh) {
    const float* xr = x + ((ih0 + kh * a.DH) * a.IW + iw0) * a.C + c;
    for (int64_t kw = kwl; kw < kwh; ++kw) {
      const float* xp = xr + kw * a.DW * a.C;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        const V val = NV > 1 || left >= Simd::W ? Simd::load(xp + v * Simd::W) : Simd::load(xp, m);
        acc[v] = Max ? Simd::max(val, acc[v]) : Simd::add(acc[v], val);
      }
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    if (!Max) acc[v] = Simd::mul(acc[v], scale);
    if (NV > 1 || left >= Simd::W)
      Simd::store(y + v * Simd::W, acc[v]);
    else
      Simd::store(y, acc[v], m);
  }
}

inline void pool(const PoolArgs& a, const Parallel& par) {
  // Rows of output pixels, or channel chunks when there are few rows (global pooling).
  const int64_t rows = a.N * a.OH;
  const int64_t cvec = (a.C + Simd::W - 1) / Simd::W;
  // A window tap is a load and an add; the output's pixels stream out.
  const double work = static_cast<double>(rows * a.OW * a.C) * (a.KH * a.KW + kElementWork);
  const int threads = threads_for(par, work);
  int64_t csplit = 1;
  while (rows * csplit < 4 * threads && csplit < cvec) ++csplit;
  const int64_t cper = (cvec + csplit - 1) / csplit * Simd::W;
  par.for_range(rows * csplit, grain_for(par, rows * csplit, work), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t row = t / csplit, cs = t % csplit;
      const int64_t n = row / a.OH, oh = row % a.OH;
      const int64_t c0 = cs * cper, c1 = c0 + cper < a.C ? c0 + cper : a.C;
      const float* x = a.x + n * a.IH * a.IW * a.C;
      float* y = a.y + (n * a.OH + oh) * a.OW * a.C;
      int64_t khl = 0, khh = 0;
      tap_range(oh, a.SH, a.PT, a.DH, a.KH, a.IH, khl, khh);
      const int64_t ih0 = oh * a.SH - a.PT;
      for (int64_t ow = 0; ow < a.OW; ++ow) {
        int64_t kwl = 0, kwh = 0;
        tap_range(ow, a.SW, a.PL, a.DW, a.KW, a.IW, kwl, kwh);
        const int64_t iw0 = ow * a.SW - a.PL;
        float div = static_cast<float>((khh - khl) * (kwh - kwl));
        if (!a.max && a.count_include_pad) {
          // Taps inside the padded extent [-PT, IH + PB) x [-PL, IW + PR).
          int64_t ph = 0, pw = 0;
          for (int64_t kh = 0; kh < a.KH; ++kh) {
            const int64_t ih = ih0 + kh * a.DH;
            ph += ih >= -a.PT && ih < a.IH + a.PB;
          }
          for (int64_t kw = 0; kw < a.KW; ++kw) {
            const int64_t iw = iw0 + kw * a.DW;
            pw += iw >= -a.PL && iw < a.IW + a.PR;
          }
          div = static_cast<float>(ph * pw);
        }
        const V scale = Simd::set1(div > 0.f ? 1.f / div : 0.f);
        int64_t c = c0;
        // Four vectors of channels at a time: four independent chains over the window.
        for (; c + 4 * Simd::W <= c1; c += 4 * Simd::W)
          if (a.max)
            pool_vectors<4, true>(a, x, ih0, iw0, khl, khh, kwl, kwh, c, c1, scale, y + ow * a.C + c);
          else
            pool_vectors<4, false>(a, x, ih0, iw0, khl, khh, kwl, kwh, c, c1, scale, y + ow * a.C + c);
        for (; c < c1; c += Simd::W)
          if (a.max)
            pool_vectors<1, true>(a, x, ih0, iw0, khl, khh, kwl, kwh, c, c1, scale, y + ow * a.C + c);
          else
            pool_vectors<1, false>(a, x, ih0, iw0, khl, khh, kwl, kwh, c, c1, scale, y + ow * a.C + c);
      }
    }
  });
}

// y = act(x) * post_mul + post_add, the kind dispatched once (not per vector). One thread's
// share of an elementwise op (unary_fast.cpp splits it).
// Four vectors a step: a polynomial activation is one long chain of dependent operations per
// vector, and four independent ones side by side keep the FMA units busy (Exp 0.19 -> 0.12 ns
// an element); GELU's chain is longer still, and runs kInterleave vectors interleaved
// (impl_epilogue.h). Everything the loop reads is a local value: through the lambda's
// references the compiler reloaded the pointers after every store.
inline void activate_array(const float* x, float* y, int64_t n, Activation act) {
  with_activation(act.kind, [x, y, n, act](auto k) {
    constexpr Activation::Kind K = decltype(k)::value;
    const bool post = act.post_mul != 1.f || act.post_add != 0.f;
    const float pm = act.post_mul, pa = act.post_add;
    auto finish = [post, pm, pa](V v) { return post ? Simd::fma(v, Simd::set1(pm), Simd::set1(pa)) : v; };
    auto one = [&act, &finish](V v) { return finish(activation_of<K>(v, act)); };
    int64_t i = 0;
    if constexpr (constexpr int kLanes = kInterleave<K>; kLanes > 1) {
      constexpr int N = kLanes;
      using L = Lanes<N>;
      for (; i + N * Simd::W <= n; i += N * Simd::W) {
        typename L::V v;
#pragma GCC unroll 8
        for (int j = 0; j < N; ++j) v.v[j] = Simd::load(x + i + j * Simd::W);
        v = activation_of<K, L>(v, act);
#pragma GCC unroll 8
        for (int j = 0; j < N; ++j) Simd::store(y + i + j * Simd::W, finish(v.v[j]));
      }
    }
    for (; i + 4 * Simd::W <= n; i += 4 * Simd::W) {
      V v[4];
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) v[j] = Simd::load(x + i + j * Simd::W);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) v[j] = one(v[j]);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) Simd::store(y + i + j * Simd::W, v[j]);
    }
    for (; i + Simd::W <= n; i += Simd::W) Simd::store(y + i, one(Simd::load(x + i)));
    if (i < n) {
      const auto m = Simd::mask(n - i);
      Simd::store(y + i, one(Simd::load(x + i, m)), m);
    }
  });
}

template <int N, typename F>
__attribute__((always_inline)) inline void static_for(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
  }
  (std::make_integer_sequence<int, N>{});
}

// Grouped convolution of narrow groups (G = 2, 4 or 8 channels in and out per group): input
// channel I of a group multiplies weight row I in every lane of that group, so each pixel's
// channel vector is spread per I: lane j gets channel G * (j / G) + I of the pixel. The spread is
// the cheapest the group allows: a group as wide as the vector is one channel broadcast from
// memory (a load, no shuffle), groups of 2 or 4 lie inside a 128-bit lane (one in-lane shuffle);
// only AVX-512's groups of 8 cross lanes (the permutation table idx of grouped_narrow). On AVX2
// the lane-crossing permutation for every group width left RegNet's and ResNeXt's groups of 8
// at 2.2x ONNX Runtime's time.
template <int G, int I>
__attribute__((always_inline)) inline V spread(const float* px, V loaded, const int32_t* idx) {
  if constexpr (G == Simd::W) {
    return Simd::set1(px[I]);
  } else if constexpr (G <= 4) {
    constexpr int imm = [] {
      int m = 0;
      for (int p = 0; p < 4; ++p) m |= (G * (p / G) + I) << (2 * p);
      return m;
    }();
    return Simd::shuffle_in_lane<imm>(loaded);
  } else {
    return Simd::permute(loaded, idx + I * Simd::W);
  }
}

// NP output pixels ow0.. (their taps [kwl, kwh) inside the input), channel vector [c, c + W)
// holding W / G whole groups. Two sums per pixel, of the even and the odd channels I: a lone edge
// pixel is otherwise one chain of dependent FMAs, KH * KW * G long, at the FMA's latency
// (ResNeXt's 56-wide rows have four such pixels).
template <int NP, int G>
inline void gw_pixels(const DepthwiseArgs& a, const int32_t* idx, const float* x, float* y, const float* res,
                      int64_t oh, int64_t ow0, int64_t c, int64_t khl, int64_t khh, int64_t kwl,
                      int64_t kwh) {
  const bool full = a.C - c >= Simd::W;
  const auto m = Simd::mask(a.C - c);
  const V b = a.bias != nullptr ? Simd::load(a.bias + c, m) : Simd::zero();
  V acc[NP][2];
#pragma GCC unroll 4
  for (int p = 0; p < NP; ++p) acc[p][0] = b, acc[p][1] = Simd::zero();
  const int64_t ih0 = oh * a.SH - a.PT, iw0 = ow0 * a.SW - a.PL;
  const int64_t step = a.SW * a.C;
  for (int64_t kh = khl; kh < khh; ++kh) {
    const float* xr = x + ((ih0 + kh * a.DH) * a.IW + iw0) * a.C + c;
    const float* wr = a.w + kh * a.KW * G * a.c_pad + c;
    for (int64_t kw = kwl; kw < kwh; ++kw) {
      const float* xp = xr + kw * a.DW * a.C;
      V xv[NP];
#pragma GCC unroll 4
      for (int p = 0; p < NP; ++p) xv[p] = full ? Simd::load(xp + p * step) : Simd::load(xp + p * step, m);
      const float* wp = wr + kw * G * a.c_pad;
      static_for<G / 2>([&](auto h) {
        constexpr int i = 2 * decltype(h)::value;
        const V w0 = Simd::load(wp + i * a.c_pad), w1 = Simd::load(wp + (i + 1) * a.c_pad);
#pragma GCC unroll 4
        for (int p = 0; p < NP; ++p) {
          acc[p][0] = Simd::fma(spread<G, i>(xp + p * step, xv[p], idx), w0, acc[p][0]);
          acc[p][1] = Simd::fma(spread<G, i + 1>(xp + p * step, xv[p], idx), w1, acc[p][1]);
        }
      });
    }
  }
#pragma GCC unroll 4
  for (int p = 0; p < NP; ++p)
    finish_vector(Simd::add(acc[p][0], acc[p][1]), y + (ow0 + p) * a.ldy + c,
                  res != nullptr ? res + (ow0 + p) * a.C + c : nullptr, full, m, RuntimeAct{a.act});
}

// gw_pixels for NP interior output pixels of a 3-wide window at stride S across (ResNeXt's and
// RegNet's 3x3): input pixel q of a row is spread once per input channel i and serves every
// output whose window holds it, where gw_pixels spreads it once per output. Per row of the
// window and channel i: (NP - 1) * S + 3 spreads for 3 * NP FMAs, and NP independent sums hide
// the FMA latency.
template <int NP, int S, int G>
inline void gw_pixels_k3(const DepthwiseArgs& a, const int32_t* idx, const float* x, float* y,
                         const float* res, int64_t oh, int64_t ow0, int64_t c, int64_t khl, int64_t khh) {
  const bool full = a.C - c >= Simd::W;
  const auto m = Simd::mask(a.C - c);
  const V b = a.bias != nullptr ? Simd::load(a.bias + c, m) : Simd::zero();
  V acc[NP];
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) acc[p] = b;
  const int64_t ih0 = oh * a.SH - a.PT, iw0 = ow0 * S - a.PL;
  constexpr int kPixels = (NP - 1) * S + 3;
  for (int64_t kh = khl; kh < khh; ++kh) {
    const float* xr = x + ((ih0 + kh * a.DH) * a.IW + iw0) * a.C + c;
    const float* wr = a.w + kh * 3 * G * a.c_pad + c;
    static_for<G>([&](auto ic) {
      constexpr int i = decltype(ic)::value;
      const V w[3] = {Simd::load(wr + i * a.c_pad), Simd::load(wr + (G + i) * a.c_pad),
                      Simd::load(wr + (2 * G + i) * a.c_pad)};
#pragma GCC unroll 17
      for (int q = 0; q < kPixels; ++q) {
        const float* xq_at = xr + q * a.C;
        const V xq = spread<G, i>(xq_at, full ? Simd::load(xq_at) : Simd::load(xq_at, m), idx);
#pragma GCC unroll 3
        for (int kw = 0; kw < 3; ++kw)
          if (q >= kw && (q - kw) % S == 0 && (q - kw) / S < NP)
            acc[(q - kw) / S] = Simd::fma(xq, w[kw], acc[(q - kw) / S]);
      }
    });
  }
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p)
    finish_vector(acc[p], y + (ow0 + p) * a.ldy + c, res != nullptr ? res + (ow0 + p) * a.C + c : nullptr,
                  full, m, RuntimeAct{a.act});
}

// One output row's channel vector [c, c + W) of groups of G: the interior in blocks of 8, 4, 2
// and 1 pixels, the columns whose window crosses the border (outside [in_lo, in_hi)) one by one.
template <int G>
inline void grouped_row(const DepthwiseArgs& a, const int32_t* idx, const float* x, float* y,
                        const float* res, int64_t oh, int64_t c, int64_t khl, int64_t khh, int64_t in_lo,
                        int64_t in_hi) {
  auto edge = [&](int64_t ow) {
    int64_t kwl = 0, kwh = 0;
    tap_range(ow, a.SW, a.PL, a.DW, a.KW, a.IW, kwl, kwh);
    gw_pixels<1, G>(a, idx, x, y, res, oh, ow, c, khl, khh, kwl, kwh);
  };
  int64_t ow = 0;
  for (; ow < in_lo; ++ow) edge(ow);
  auto k3_blocks = [&](auto stride) {
    constexpr int S = decltype(stride)::value;
    for (; ow + 8 <= in_hi; ow += 8) gw_pixels_k3<8, S, G>(a, idx, x, y, res, oh, ow, c, khl, khh);
    for (; ow + 4 <= in_hi; ow += 4) gw_pixels_k3<4, S, G>(a, idx, x, y, res, oh, ow, c, khl, khh);
    for (; ow + 2 <= in_hi; ow += 2) gw_pixels_k3<2, S, G>(a, idx, x, y, res, oh, ow, c, khl, khh);
    for (; ow < in_hi; ++ow) gw_pixels_k3<1, S, G>(a, idx, x, y, res, oh, ow, c, khl, khh);
  };
  if (a.KW == 3 && a.DW == 1 && a.SW == 1) k3_blocks(std::integral_constant<int, 1>{});
  if (a.KW == 3 && a.DW == 1 && a.SW == 2) k3_blocks(std::integral_constant<int, 2>{});
  for (; ow + 4 <= in_hi; ow += 4) gw_pixels<4, G>(a, idx, x, y, res, oh, ow, c, khl, khh, 0, a.KW);
  for (; ow < a.OW; ++ow) edge(ow);
}

// a.ldy must be set (>= C): ConvConcat writes a grouped convolution into its channels of a wider
// tensor. a.gw is 2, 4 or 8 and divides W (make_fast_conv's narrow test).
inline void grouped_narrow(const DepthwiseArgs& a, const Parallel& par) {
  alignas(64) int32_t idx[Simd::W * Simd::W];
  for (int64_t i = 0; i < a.gw; ++i)
    for (int j = 0; j < Simd::W; ++j) idx[i * Simd::W + j] = static_cast<int32_t>(j / a.gw * a.gw + i);
  int64_t in_lo = 0, in_hi = 0;
  interior_columns(a, in_lo, in_hi);
  const int64_t rows = a.N * a.OH;
  const double work = 2.0 * static_cast<double>(rows * a.OW * a.C * a.KH * a.KW * a.gw);
  auto run = [&](auto width) {
    constexpr int G = decltype(width)::value;
    par.for_range(rows, grain_for(par, rows, work), [&](int64_t r0, int64_t r1) {
      for (int64_t row = r0; row < r1; ++row) {
        const int64_t n = row / a.OH, oh = row % a.OH;
        const float* x = a.x + n * a.IH * a.IW * a.C;
        float* y = a.y + (n * a.OH + oh) * a.OW * a.ldy;
        const float* res = a.residual != nullptr ? a.residual + (n * a.OH + oh) * a.OW * a.C : nullptr;
        int64_t khl = 0, khh = 0;
        tap_range(oh, a.SH, a.PT, a.DH, a.KH, a.IH, khl, khh);
        for (int64_t c = 0; c < a.C; c += Simd::W)
          grouped_row<G>(a, idx, x, y, res, oh, c, khl, khh, in_lo, in_hi);
      }
    });
  };
  if (a.gw == 2) run(std::integral_constant<int, 2>{});
  if (a.gw == 4) run(std::integral_constant<int, 4>{});
  if (a.gw == 8) run(std::integral_constant<int, 8>{});
}

inline void channel_affine_rows(const float* x, float* y, int64_t rows, int64_t n, const float* a,
                                const float* b, Activation act, const Parallel& par) {
  const int64_t grain = grain_for(par, rows, static_cast<double>(rows * n) * kElementWork);
  with_activation(act.kind, [&](auto k) {
    constexpr Activation::Kind K = decltype(k)::value;
    par.for_range(rows, grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* xr = x + r * n;
        float* yr = y + r * n;
        int64_t i = 0;
        for (; i + Simd::W <= n; i += Simd::W)
          Simd::store(yr + i, activation_of<K>(
                                  Simd::fma(Simd::load(xr + i), Simd::load(a + i), Simd::load(b + i)), act));
        if (i < n) {
          const auto m = Simd::mask(n - i);
          const V v = Simd::fma(Simd::load(xr + i, m), Simd::load(a + i, m), Simd::load(b + i, m));
          Simd::store(yr + i, activation_of<K>(v, act), m);
        }
      }
    });
  });
}

}  // namespace weave::fast::WEAVE_ISA_NS
