// Winograd F(4x4, 3x3) convolution over NHWC data, for one instruction set. ISA translation
// units only (see simd.h).
//
// Tiles are processed in blocks sized so that a block's transformed inputs and products stay in
// the L2 cache: (1) input transform of every tile of the block into V[36][tile][C], (2) per tile
// point xi one GEMM M[xi] = V[xi] x U[xi] on the shared micro-kernel, (3) output transform of
// M[.][tile][.] into the 4x4 outputs of each tile, with bias, residual and activation. With
// enough blocks, each thread takes whole blocks in a scratch lane of its own; otherwise each
// phase of each block splits its work over the threads (see winograd()).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/impl_conv_gemm.h"
#include "core/kernels/fast/impl_epilogue.h"
#include "core/kernels/fast/simd.h"

namespace weave::fast::WEAVE_ISA_NS {

inline constexpr int64_t kWinoBudget = 512 * 1024;  // bytes of V + M per block

inline int64_t wino_pad(int64_t n) {
  return (n + Simd::W - 1) / Simd::W * Simd::W;
}

// Tiles per block: a multiple of the micro-kernel's rows, V and M within kWinoBudget; but at
// least 4 x kMR when the transformed weights are large (above 1 MiB, every block streams them
// all from the L3 cache or memory, which only enough tiles per block pay for).
inline int64_t wino_block(int64_t C, int64_t M) {
  const int64_t per_tile = 36 * (wino_pad(C) + wino_pad(M)) * int64_t{4};
  int64_t b = kWinoBudget / per_tile / kMR * kMR;
  if (36 * C * M * int64_t{4} > (int64_t{1} << 20) && b < 4 * kMR) b = 4 * kMR;
  if (b < kMR) b = kMR;
  if (b > 8 * kMR) b = 8 * kMR;
  return b;
}

// Floats of one lane's scratch: V [36][B][Cp] then M [36][B][Mp].
inline int64_t wino_lane_floats(int64_t C, int64_t M) {
  return 36 * wino_block(C, M) * (wino_pad(C) + wino_pad(M));
}

// Lanes worth a scratch of their own: up to a.lanes, each with at least two blocks of tiles.
inline int64_t wino_lanes(const WinogradArgs& a) {
  const int64_t tiles = ((a.OH + 3) / 4) * ((a.OW + 3) / 4);
  const int64_t B = wino_block(a.C, a.M);
  const int64_t blocks = a.N * ((tiles + B - 1) / B);
  const int64_t most = a.lanes > 1 ? a.lanes : 1;
  return blocks / 2 < 1 ? 1 : blocks / 2 < most ? blocks / 2 : most;
}

inline std::size_t winograd_workspace(const WinogradArgs& a) {
  return static_cast<std::size_t>(wino_lanes(a) * wino_lane_floats(a.C, a.M)) * sizeof(float);
}

// r = B^T d for six values (one column or row of a tile).
inline void bt6(const V* d, V* r) {
  const V four = Simd::set1(4.f), five = Simd::set1(5.f), two = Simd::set1(2.f);
  const V d4_d2 = Simd::sub(d[4], d[2]);
  r[0] = Simd::fma(four, d[0], Simd::fma(Simd::set1(-5.f), d[2], d[4]));
  const V a = Simd::fma(Simd::set1(-4.f), d[2], d[4]);  // d4 - 4 d2
  const V b = Simd::fma(Simd::set1(-4.f), d[1], d[3]);  // d3 - 4 d1
  r[1] = Simd::add(a, b);
  r[2] = Simd::sub(a, b);
  const V c = Simd::mul(two, Simd::sub(d[3], d[1]));  // 2 (d3 - d1)
  r[3] = Simd::add(d4_d2, c);
  r[4] = Simd::sub(d4_d2, c);
  r[5] = Simd::fma(four, d[1], Simd::fma(Simd::sub(Simd::zero(), five), d[3], d[5]));
}

// o = A^T m for six values -> four.
inline void at6(const V* m, V* o) {
  const V s12 = Simd::add(m[1], m[2]), d12 = Simd::sub(m[1], m[2]);
  const V s34 = Simd::add(m[3], m[4]), d34 = Simd::sub(m[3], m[4]);
  o[0] = Simd::add(Simd::add(m[0], s12), s34);
  o[1] = Simd::fma(Simd::set1(2.f), d34, d12);
  o[2] = Simd::fma(Simd::set1(4.f), s34, s12);
  o[3] = Simd::add(Simd::fma(Simd::set1(8.f), d34, d12), m[5]);
}

// Input transform of one tile (rows ih0.., cols iw0..) for all channels into V[xi][t][.].
inline void wino_input_tile(const WinogradArgs& a, const float* x, int64_t ih0, int64_t iw0, float* v,
                            int64_t t, int64_t ldv_xi) {
  const int64_t Cp = wino_pad(a.C);
  const bool inside = ih0 >= 0 && iw0 >= 0 && ih0 + 6 <= a.IH && iw0 + 6 <= a.IW;
  for (int64_t c = 0; c < a.C; c += Simd::W) {
    const int64_t left = a.C - c;
    const auto m = Simd::mask(left);
    V tmp[6][6];
    for (int j = 0; j < 6; ++j) {
      V d[6];
      const int64_t iw = iw0 + j;
      for (int i = 0; i < 6; ++i) {
        const int64_t ih = ih0 + i;
        if (inside || (ih >= 0 && ih < a.IH && iw >= 0 && iw < a.IW)) {
          const float* p = x + (ih * a.IW + iw) * a.C + c;
          d[i] = left >= Simd::W ? Simd::load(p) : Simd::load(p, m);
        } else {
          d[i] = Simd::zero();
        }
      }
      V r[6];
      bt6(d, r);
      for (int i = 0; i < 6; ++i) tmp[i][j] = r[i];
    }
    for (int i = 0; i < 6; ++i) {
      V r[6];
      bt6(tmp[i], r);
      for (int j = 0; j < 6; ++j) Simd::store(v + (i * 6 + j) * ldv_xi + t * Cp + c, r[j]);
    }
  }
}

// Output transform of one tile (outputs oh0.., ow0..) from M[xi][t][.], activation K.
template <Activation::Kind K>
inline void wino_output_tile_k(const WinogradArgs& a, const float* mx, int64_t t, int64_t ldm_xi, int64_t n,
                               int64_t oh0, int64_t ow0) {
  const bool post = a.act.post_mul != 1.f || a.act.post_add != 0.f;
  const int64_t Mp = wino_pad(a.M);
  const int64_t rows = a.OH - oh0 < 4 ? a.OH - oh0 : 4, cols = a.OW - ow0 < 4 ? a.OW - ow0 : 4;
  const int64_t ldy = a.ldy > 0 ? a.ldy : a.M;
  float* y = a.y + ((n * a.OH + oh0) * a.OW + ow0) * ldy;
  const float* res = a.residual != nullptr ? a.residual + ((n * a.OH + oh0) * a.OW + ow0) * a.M : nullptr;
  for (int64_t c = 0; c < a.M; c += Simd::W) {
    const int64_t left = a.M - c;
    const auto m = Simd::mask(left);
    const bool full = left >= Simd::W;
    V tmp[4][6];
    for (int j = 0; j < 6; ++j) {
      V col[6];
      for (int i = 0; i < 6; ++i) col[i] = Simd::load(mx + (i * 6 + j) * ldm_xi + t * Mp + c);
      V o[4];
      at6(col, o);
      for (int i = 0; i < 4; ++i) tmp[i][j] = o[i];
    }
    const V bias = a.bias != nullptr ? Simd::load(a.bias + c, m) : Simd::zero();
    for (int64_t i = 0; i < rows; ++i) {
      V o[4];
      at6(tmp[i], o);
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t off = (i * a.OW + j) * a.M + c, yoff = (i * a.OW + j) * ldy + c;
        V r = Simd::add(o[j], bias);
        const bool late = a.act.residual_last;
        if (res != nullptr && !late)
          r = Simd::add(r, full ? Simd::load(res + off) : Simd::load(res + off, m));
        r = activation_of<K>(r, a.act);
        if (post) r = Simd::fma(r, Simd::set1(a.act.post_mul), Simd::set1(a.act.post_add));
        if (res != nullptr && late) r = Simd::add(r, full ? Simd::load(res + off) : Simd::load(res + off, m));
        if (full)
          Simd::store(y + yoff, r);
        else
          Simd::store(y + yoff, r, m);
      }
    }
  }
}

// The activation dispatched once per tile, its polynomial inline in the tile's loop (SiLU after
// every convolution of a YOLO-style detector).
inline void wino_output_tile(const WinogradArgs& a, const float* mx, int64_t t, int64_t ldm_xi, int64_t n,
                             int64_t oh0, int64_t ow0) {
  with_activation(a.act.kind,
                  [&](auto k) { wino_output_tile_k<decltype(k)::value>(a, mx, t, ldm_xi, n, oh0, ow0); });
}

// Tiles t0 .. t0 + nt - 1 of image n, through the three phases, with the scratch v / mx of one
// lane; each phase splits its work over `par`.
inline void winograd_block(const WinogradArgs& a, int64_t n, int64_t t0, int64_t nt, float* v, float* mx,
                           const Parallel& par) {
  const int64_t TW = (a.OW + 3) / 4;
  const int64_t B = wino_block(a.C, a.M);
  const int64_t Cp = wino_pad(a.C), Mp = wino_pad(a.M);
  const int64_t panels = (a.M + kNR - 1) / kNR;
  const float* x = a.x + n * a.IH * a.IW * a.C;
  const double gemm_work = 2.0 * static_cast<double>(36 * nt * a.C * a.M);
  const int64_t tile_grain = grain_for(par, nt, static_cast<double>(nt * 36 * (a.C + a.M)) * kElementWork);
  par.for_range(nt, tile_grain, [&](int64_t b0, int64_t b1) {
    for (int64_t t = b0; t < b1; ++t) {
      const int64_t th = (t0 + t) / TW, tw = (t0 + t) % TW;
      wino_input_tile(a, x, th * 4 - a.PT, tw * 4 - a.PL, v, t, B * Cp);
    }
  });
  // 36 GEMMs of nt x C by C x M, the tiles in blocks of nearly equal rows (see Blocks).
  const Blocks bl(nt);
  par.for_range(36 * panels, grain_for(par, 36 * panels, gemm_work), [&](int64_t q0, int64_t q1) {
    static const Activation none;
    const float* addr[kMR];
    alignas(64) float spill[kMR * kNR];
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t xi = q / panels, j = q % panels;
      const int64_t col0 = j * kNR, cols = a.M - col0 < kNR ? a.M - col0 : kNR;
      Tile tl{};
      tl.a = addr;
      tl.taps = 1;
      tl.depth = a.C;
      tl.b = a.u + xi * a.layout.group_floats + j * a.layout.panel_floats;
      tl.cols = cols;
      tl.ldy = Mp;
      tl.act = &none;
      tl.spill = spill;
      for (int64_t blk = 0; blk < bl.count; ++blk) {
        const int64_t r0 = bl.first(blk);
        const int rows = bl.rows(blk), kr = bl.kernel_rows(blk);
        for (int r = 0; r < kr; ++r) addr[r] = v + (xi * B + r0 + (r < rows ? r : rows - 1)) * Cp;
        tl.rows = rows;
        tl.y = mx + (xi * B + r0) * Mp + col0;
        tl.prefetch = blk == 0;
        run_tile(kr, tl);
      }
    }
  });
  par.for_range(nt, tile_grain, [&](int64_t b0, int64_t b1) {
    for (int64_t t = b0; t < b1; ++t) {
      const int64_t th = (t0 + t) / TW, tw = (t0 + t) % TW;
      wino_output_tile(a, mx, t, B * Mp, n, th * 4, tw * 4);
    }
  });
}

// With several lanes (threads and enough blocks), each thread takes whole blocks through all
// three phases in its own lane's scratch: one fork-join per layer. Otherwise the blocks run one
// after the other, each phase split over the threads: three fork-joins per block, which small
// blocks (few channels) do not pay for.
inline void winograd(const WinogradArgs& a, const Parallel& par) {
  const int64_t tiles = ((a.OH + 3) / 4) * ((a.OW + 3) / 4);
  const int64_t B = wino_block(a.C, a.M);
  const int64_t per_image = (tiles + B - 1) / B;
  const int64_t lane_floats = wino_lane_floats(a.C, a.M);
  const int64_t v_floats = 36 * B * wino_pad(a.C);
  auto block = [&](int64_t i, float* lane, const Parallel& p) {
    const int64_t n = i / per_image, t0 = (i % per_image) * B;
    winograd_block(a, n, t0, tiles - t0 < B ? tiles - t0 : B, lane, lane + v_floats, p);
  };
  // Threads the multiplications justify: the 36 GEMMs of 16-point tiles, 4x fewer than the
  // direct convolution's.
  const double work = 2.0 * static_cast<double>(a.N * tiles * 36 * a.C * a.M);
  const int64_t threads = threads_for(par, work), planned = wino_lanes(a);
  const int64_t lanes = planned < threads ? planned : threads;
  if (lanes > 1) {
    std::atomic<int64_t> next{0};
    par.for_range(lanes, 1, [&](int64_t l0, int64_t l1) {
      for (int64_t l = l0; l < l1; ++l)
        for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < a.N * per_image;
             i = next.fetch_add(1, std::memory_order_relaxed))
          block(i, a.workspace + l * lane_floats, SerialParallel::instance());
    });
    return;
  }
  for (int64_t i = 0; i < a.N * per_image; ++i) block(i, a.workspace, par);
}

}  // namespace weave::fast::WEAVE_ISA_NS
