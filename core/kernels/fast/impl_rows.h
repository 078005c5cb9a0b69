// Row-wise kernels of the fast path (softmax over the innermost axis, layer normalization, the
// LSTM cell), for one instruction set.
// ISA translation units only (see simd.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/impl_epilogue.h"
#include "core/kernels/fast/simd.h"

namespace weave::fast::WEAVE_ISA_NS {

inline float row_max(const float* x, int64_t n) {
  V m = Simd::set1(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + Simd::W <= n; i += Simd::W) m = Simd::max(Simd::load(x + i), m);
  alignas(64) float lanes[Simd::W];
  Simd::store(lanes, m);
  float r = -std::numeric_limits<float>::infinity();
  for (int k = 0; k < Simd::W; ++k) r = lanes[k] > r ? lanes[k] : r;
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

// Softmax's results below FLT_MIN are flushed to 0 (NaN stays NaN). A masked attention row
// (Swin's shifted windows add -100 where a window wraps) has exp(-100) ~ 4e-44, a subnormal,
// and every multiply that reads a subnormal takes a microcode assist: Swin-T's attention times
// V ran at 3 GFLOP/s in the shifted blocks (7.5 ms a node where the unshifted one took 0.66).
// Below FLT_MIN a probability is far under float's resolution of the row's sum (>= 1).
// kSoftmaxFlushBelow: exp below about this is subnormal (ln FLT_MIN = -87.3365; the few normal
// values between are flushed too). LogSoftmax is computed from x directly and flushes nothing.
inline constexpr float kSoftmaxFlushBelow = -87.33f;

// exp(d), 0 below the flush point; clamped first, since exp's own subnormal results would cost
// the same assists. max's operand order keeps NaN.
inline V softmax_exp(V d) {
  const V flush_x = Simd::set1(kSoftmaxFlushBelow);
  return Simd::select_lt(d, flush_x, Simd::zero(), exp(Simd::max(flush_x, d)));
}
// A probability, 0 below FLT_MIN.
inline V softmax_flushed(V o) {
  return Simd::select_lt(o, Simd::set1(std::numeric_limits<float>::min()), Simd::zero(), o);
}

// y[r][i] = exp(x[r][i] - max_r) / sum_r, or (log_softmax) x - max_r - log(sum_r); rows of n.
inline void softmax_rows(const float* x, float* y, int64_t rows, int64_t n, bool log_softmax,
                         const Parallel& par) {
  const double work = static_cast<double>(rows * n) * 2 * kElementWork;  // an exp per element
  par.for_range(rows, grain_for(par, rows, work), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * n;
      float* yr = y + r * n;
      const float mx = row_max(xr, n);
      const V vmx = Simd::set1(mx);
      V sum = Simd::zero();
      int64_t i = 0;
      for (; i + Simd::W <= n; i += Simd::W) {
        const V e = softmax_exp(Simd::sub(Simd::load(xr + i), vmx));
        if (!log_softmax) Simd::store(yr + i, e);
        sum = Simd::add(sum, e);
      }
      if (i < n) {
        // The tail as one more vector, padded with -inf (exp: 0): a scalar std::exp per element
        // cost as much as the whole vectors of a 49-wide attention row.
        alignas(64) float pad[Simd::W];
        for (int64_t k = 0; k < Simd::W; ++k)
          pad[k] = i + k < n ? xr[i + k] : -std::numeric_limits<float>::infinity();
        const V e = softmax_exp(Simd::sub(Simd::load(pad), vmx));
        if (!log_softmax) Simd::store(yr + i, e, Simd::mask(n - i));
        sum = Simd::add(sum, e);
      }
      const float total = Simd::sum(sum);
      if (log_softmax) {
        const float shift = mx + std::log(total);
        const V vs = Simd::set1(shift);
        for (i = 0; i + Simd::W <= n; i += Simd::W) Simd::store(yr + i, Simd::sub(Simd::load(xr + i), vs));
        for (; i < n; ++i) yr[i] = xr[i] - shift;
      } else {
        const float inv = 1.f / total;
        const V vi = Simd::set1(inv);
        for (i = 0; i + Simd::W <= n; i += Simd::W)
          Simd::store(yr + i, softmax_flushed(Simd::mul(Simd::load(yr + i), vi)));
        if (i < n) {
          const auto m = Simd::mask(n - i);
          Simd::store(yr + i, softmax_flushed(Simd::mul(Simd::load(yr + i, m), vi)), m);
        }
      }
    }
  });
}

// Softmax along a middle axis: outer blocks of k rows of `inner` floats, each column of k
// elements (one per row, `inner` apart) normalised on its own. Vectorised across the columns:
// a vector holds W columns, and each of the three passes (max, exp and sum, scale) walks the k
// rows of a block of kColumnVectors vectors, which stay in L1 between the passes.
inline void softmax_columns(const float* x, float* y, int64_t outer, int64_t k, int64_t inner,
                            bool log_softmax, const Parallel& par) {
  constexpr int64_t kColumnVectors = 4;
  constexpr int64_t block = kColumnVectors * Simd::W;
  const int64_t blocks = (inner + block - 1) / block;
  const double work = static_cast<double>(outer * k * inner) * 2 * kElementWork;
  par.for_range(outer * blocks, grain_for(par, outer * blocks, work), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / blocks, c0 = (t % blocks) * block;
      const float* xb = x + o * k * inner;
      float* yb = y + o * k * inner;
      for (int64_t c = c0; c < c0 + block && c < inner; c += Simd::W) {
        const auto m = Simd::mask(inner - c);
        const bool full = inner - c >= Simd::W;
        auto load = [&](const float* p) { return full ? Simd::load(p) : Simd::load(p, m); };
        auto store = [&](float* p, V v) { full ? Simd::store(p, v) : Simd::store(p, v, m); };
        V mx = Simd::set1(-std::numeric_limits<float>::infinity());
        for (int64_t j = 0; j < k; ++j) mx = Simd::max(load(xb + j * inner + c), mx);
        V sum = Simd::zero();
        for (int64_t j = 0; j < k; ++j) {
          const V e = softmax_exp(Simd::sub(load(xb + j * inner + c), mx));
          if (!log_softmax) store(yb + j * inner + c, e);
          sum = Simd::add(sum, e);
        }
        if (log_softmax) {
          const V shift = Simd::add(mx, log(sum));
          for (int64_t j = 0; j < k; ++j)
            store(yb + j * inner + c, Simd::sub(load(xb + j * inner + c), shift));
        } else {
          const V inv = Simd::div(Simd::set1(1.f), sum);
          for (int64_t j = 0; j < k; ++j)
            store(yb + j * inner + c, softmax_flushed(Simd::mul(load(yb + j * inner + c), inv)));
        }
      }
    }
  });
}

// y = (x - mean) / sqrt(var + eps) * scale + bias over rows of n (bias may be null); the
// moments in two passes over the row, in float vectors.
inline void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t n, const float* scale,
                            const float* bias, float eps, const Parallel& par) {
  const int64_t grain = grain_for(par, rows, static_cast<double>(rows * n) * 2 * kElementWork);
  const int64_t full = n / Simd::W * Simd::W;
  const auto tail = Simd::mask(n - full);
  par.for_range(rows, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * n;
      float* yr = y + r * n;
      // The sum of x - x[0], not of x: rows far from 0 (a mean of 100, a spread of 1) keep
      // their mean's low digits, which the variance and every output depend on.
      const V shift = Simd::set1(xr[0]);
      V s = Simd::zero();
      for (int64_t i = 0; i < full; i += Simd::W) s = Simd::add(s, Simd::sub(Simd::load(xr + i), shift));
      float partial = Simd::sum(s);
      for (int64_t i = full; i < n; ++i) partial += xr[i] - xr[0];
      const V mean = Simd::set1(xr[0] + partial / static_cast<float>(n));
      V q = Simd::zero();
      for (int64_t i = 0; i < full; i += Simd::W) {
        const V d = Simd::sub(Simd::load(xr + i), mean);
        q = Simd::fma(d, d, q);
      }
      if (full < n) {
        // Masked lanes load 0 from x and, here, 0 for the mean: their difference adds nothing.
        alignas(64) float m[Simd::W];
        Simd::store(m, mean);
        const V d = Simd::sub(Simd::load(xr + full, tail), Simd::load(m, tail));
        q = Simd::fma(d, d, q);
      }
      const float inv = 1.f / std::sqrt(Simd::sum(q) / static_cast<float>(n) + eps);
      const V vinv = Simd::set1(inv);
      auto one = [&](int64_t i, auto load, auto store) {
        const V t = Simd::mul(Simd::sub(load(xr + i), mean), vinv);
        store(yr + i, Simd::fma(t, load(scale + i), bias != nullptr ? load(bias + i) : Simd::zero()));
      };
      for (int64_t i = 0; i < full; i += Simd::W)
        one(
            i, [](const float* p) { return Simd::load(p); }, [](float* p, V v) { Simd::store(p, v); });
      if (full < n)
        one(
            full, [&](const float* p) { return Simd::load(p, tail); },
            [&](float* p, V v) { Simd::store(p, v, tail); });
    }
  });
}

// One LSTM cell update (see LstmGemm::cell): gates i, o, f, c of g = gs + gx.
inline void lstm_cell(const float* gs, const float* gx, float* c, float* h, int64_t H) {
  int64_t j = 0;
  auto gate = [&](int k, int64_t at, auto load) {
    return Simd::add(load(gs + k * H + at), load(gx + k * H + at));
  };
  auto step = [&](int64_t at, auto load, auto store) {
    const V i = sigmoid(gate(0, at, load)), o = sigmoid(gate(1, at, load)), f = sigmoid(gate(2, at, load));
    const V ct = tanh(gate(3, at, load));
    const V cn = Simd::fma(f, load(c + at), Simd::mul(i, ct));
    store(c + at, cn);
    store(h + at, Simd::mul(o, tanh(cn)));
  };
  for (; j + Simd::W <= H; j += Simd::W)
    step(
        j, [](const float* p) { return Simd::load(p); }, [](float* p, V v) { Simd::store(p, v); });
  if (j < H) {
    const auto m = Simd::mask(H - j);
    step(
        j, [&](const float* p) { return Simd::load(p, m); }, [&](float* p, V v) { Simd::store(p, v, m); });
  }
}

// y[r][j] = x[r][p.idx[j]]: each output vector from one or two windows of the row by a lane
// permutation (PermutePlan), or lane by lane where the plan found none.
inline void permute_rows(const float* x, float* y, int64_t rows, const PermutePlan& p, const Parallel& par) {
  const int64_t vecs = (p.n_out + Simd::W - 1) / Simd::W;
  const double work = static_cast<double>(rows * p.n_out) * kElementWork;
  auto window = [](const float* at, int32_t len) {
    return len >= Simd::W ? Simd::load(at) : Simd::load(at, Simd::mask(len));
  };
  par.for_range(rows, grain_for(par, rows, work), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * p.n_in;
      float* yr = y + r * p.n_out;
      for (int64_t v = 0; v < vecs; ++v) {
        const int32_t* b = p.blocks + 4 * v;
        const int64_t j = v * Simd::W, left = p.n_out - j;
        if (b[0] < 0) {
          for (int64_t k = 0; k < (left < Simd::W ? left : Simd::W); ++k) yr[j + k] = xr[p.idx[j + k]];
          continue;
        }
        const int32_t* lanes = p.lanes + j;
        const V a = window(xr + b[0], b[1]);
        const V o = b[2] < 0 ? Simd::permute(a, lanes) : Simd::permute2(a, window(xr + b[2], b[3]), lanes);
        if (left >= Simd::W)
          Simd::store(yr + j, o);
        else
          Simd::store(yr + j, o, Simd::mask(left));
      }
    }
  });
}

// dst[k * ldd + j] = s[k + j * lds] for an 8 x 8 block: eight rows of s in registers, transposed
// by unpacks, shuffles and lane swaps (bit moves only: any 4-byte values).
inline void transpose8x8(const float* s, int64_t lds, float* d, int64_t ldd) {
  __m256 r[8], t[8], u[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(s + k * lds);
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(d + k * ldd, _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
    _mm256_storeu_ps(d + (k + 4) * ldd, _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
  }
}

// The lanes of interleave_planes<C>: W pixels of C planes are C output vectors, and lane e of
// output vector k is pixel (k W + e) / C of plane (k W + e) % C. Stage 0 gathers planes 0 and 1
// with one two-source permute; stage s >= 1 keeps the lanes gathered so far and takes plane
// s + 1's (the other lanes of a stage are placeholders a later stage replaces).
template <int C>
struct InterleaveLanes {
  int32_t idx[C][C - 1][Simd::W];
  constexpr InterleaveLanes() : idx{} {
    for (int k = 0; k < C; ++k)
      for (int e = 0; e < Simd::W; ++e) {
        const int g = k * Simd::W + e, px = g / C, plane = g % C;
        idx[k][0][e] = plane == 0 ? px : plane == 1 ? Simd::W + px : 0;
        for (int st = 1; st < C - 1; ++st) idx[k][st][e] = plane == st + 1 ? Simd::W + px : e;
      }
  }
};

// d[i * C + c] = s[c * lds + i] for i < rows: C planes interleaved (an image's NCHW -> NHWC),
// W pixels at a time by C (C - 1) permutes. Element by element, the 3-plane input of a 224x224
// image took 0.13 ms (the fastest of 8 runs inside mnasnet1_0; 0.11 now: reading the image from
// memory is most of it).
template <int C>
inline void interleave_planes(const float* s, int64_t lds, int64_t rows, float* d) {
  static constexpr InterleaveLanes<C> lanes{};
  int64_t i = 0;
  for (; i + Simd::W <= rows; i += Simd::W) {
    V p[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) p[c] = Simd::load(s + c * lds + i);
#pragma GCC unroll 4
    for (int k = 0; k < C; ++k) {
      V o = Simd::permute2(p[0], p[1], lanes.idx[k][0]);
#pragma GCC unroll 4
      for (int st = 1; st < C - 1; ++st) o = Simd::permute2(o, p[st + 1], lanes.idx[k][st]);
      Simd::store(d + (i * C + k * Simd::W), o);
    }
  }
  for (; i < rows; ++i)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) d[i * C + c] = s[c * lds + i];
}

// One tile of a 2-D transpose of 4-byte values (kern::TransposeTile): 8 x 8 blocks in registers,
// the edges element by element; 2 to 4 planes interleaved into whole rows by interleave_planes.
// The element-by-element loop alone took 0.8 ns an element (a detector's 80x80x255 output back
// to NCHW: 1.3 ms).
inline void transpose_tile(const uint32_t* src, int64_t lds, int64_t rows, int64_t cols, uint32_t* dst,
                           int64_t ldd) {
  const auto* s = reinterpret_cast<const float*>(src);
  auto* d = reinterpret_cast<float*>(dst);
  if (ldd == cols) {
    switch (cols) {
      case 2:
        return interleave_planes<2>(s, lds, rows, d);
      case 3:
        return interleave_planes<3>(s, lds, rows, d);
      case 4:
        return interleave_planes<4>(s, lds, rows, d);
      default:
        break;
    }
  }
  int64_t i = 0;
  for (; i + 8 <= rows; i += 8) {
    int64_t j = 0;
    for (; j + 8 <= cols; j += 8) transpose8x8(s + i + j * lds, lds, d + i * ldd + j, ldd);
    for (; j < cols; ++j)
      for (int64_t k = 0; k < 8; ++k) dst[(i + k) * ldd + j] = src[i + k + j * lds];
  }
  for (; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * ldd + j] = src[i + j * lds];
}

}  // namespace weave::fast::WEAVE_ISA_NS
