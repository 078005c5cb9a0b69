#include "core/kernels/fast/pack.h"

#include <algorithm>
#include <vector>

namespace weave::fast {
namespace {

int64_t round_up(int64_t n, int64_t m) {
  return (n + m - 1) / m * m;
}

// Floats of one group's panels for N columns.
int64_t group_floats(int64_t N, int64_t depth, int nr, int vec) {
  const int64_t full = N / nr, rest = N % nr;
  return depth * (full * nr + (rest > 0 ? round_up(rest, vec) : 0));
}

// Where column n of a group's panels starts and how far apart its rows are (every earlier panel
// is full width): row k of column n is at out[offset + k * width].
struct Column {
  int64_t offset, width;
};
inline Column column(int64_t n, int64_t N, int64_t depth, int nr, int vec) {
  const int64_t col0 = n / nr * nr;
  const int64_t width = std::min<int64_t>(nr, round_up(N - col0, vec));
  return {col0 * depth + (n - col0), width};
}

// Writes one group's panels column by column: column(n, dst, stride) writes the `depth` values
// of column n at dst[k * stride]. Padding columns stay as they are (callers zero the buffer).
template <class Col>
void pack_columns(int64_t N, int64_t depth, int nr, int vec, float* out, Col col) {
  for (int64_t n = 0; n < N; ++n) {
    const Column c = column(n, N, depth, nr, vec);
    col(n, out + c.offset, c.width);
  }
}

// Writes one group's panels row by row from a row-major K x N source (ldb apart).
void pack_rows(const float* b, int64_t K, int64_t N, int64_t ldb, int nr, int vec, float* out) {
  for (int64_t col0 = 0; col0 < N; col0 += nr) {
    const int64_t width = std::min<int64_t>(nr, round_up(N - col0, vec));
    const int64_t cols = std::min<int64_t>(nr, N - col0);
    float* panel = out + col0 * K;
    for (int64_t k = 0; k < K; ++k) {
      float* row = panel + k * width;
      const float* src = b + k * ldb + col0;
      for (int64_t c = 0; c < cols; ++c) row[c] = src[c];
      for (int64_t c = cols; c < width; ++c) row[c] = 0.f;
    }
  }
}

}  // namespace

PackedLayout gemm_b_layout(int64_t K, int64_t N, int nr, int vec) {
  PackedLayout l;
  l.nr = nr;
  l.panel_floats = K * nr;
  l.group_floats = group_floats(N, K, nr, vec);
  return l;
}

void pack_gemm_b_into(const float* b, int64_t K, int64_t N, int64_t ldb, bool trans, const PackedLayout& l,
                      int vec, float* out) {
  if (!trans) {
    pack_rows(b, K, N, ldb, static_cast<int>(l.nr), vec, out);
    return;
  }
  // Padding columns of the last panel: zero them, then fill the real ones column by column.
  const int64_t last0 = (N - 1) / l.nr * l.nr;
  std::fill(out + last0 * K, out + l.group_floats, 0.f);
  pack_columns(N, K, static_cast<int>(l.nr), vec, out, [&](int64_t n, float* dst, int64_t stride) {
    const float* src = b + n * ldb;
    for (int64_t k = 0; k < K; ++k) dst[k * stride] = src[k];
  });
}

void scale_packed_rows(const float* src, int64_t K, int64_t N, const PackedLayout& l, int vec,
                       const float* scale, float* dst) {
  for (int64_t col0 = 0; col0 < N; col0 += l.nr) {
    const int64_t width = std::min<int64_t>(l.nr, round_up(N - col0, vec));
    const float* in = src + col0 * K;
    float* out = dst + col0 * K;
    for (int64_t k = 0; k < K; ++k) {
      const float f = scale[k];
      for (int64_t j = 0; j < width; ++j) out[k * width + j] = in[k * width + j] * f;
    }
  }
}

PackedWeights pack_gemm_b(const float* b, int64_t K, int64_t N, int64_t ldb, bool trans, int nr, int vec) {
  PackedWeights p;
  p.layout = gemm_b_layout(K, N, nr, vec);
  AlignedBuffer buf(static_cast<std::size_t>(p.layout.group_floats) * sizeof(float), false);
  pack_gemm_b_into(b, K, N, ldb, trans, p.layout, vec, reinterpret_cast<float*>(buf.data()));
  p.data = SharedBytes::from(std::move(buf));
  return p;
}

PackedWeights pack_conv(const float* w, int64_t groups, int64_t Mg, int64_t Cg, int64_t taps, int nr,
                        int vec) {
  PackedWeights p;
  const int64_t depth = taps * Cg;
  p.layout.nr = nr;
  p.layout.panel_floats = depth * nr;
  p.layout.group_floats = group_floats(Mg, depth, nr, vec);
  AlignedBuffer buf(static_cast<std::size_t>(p.layout.group_floats * groups) * sizeof(float));
  auto* out = reinterpret_cast<float*>(buf.data());
  // A panel at a time, kChannelBlock input channels at a time: the source block read (the
  // panel's nr rows of kChannelBlock * taps floats) stays in L1 while it is written out as
  // whole panel rows. Depth index k = tap * Cg + c, matching the micro-kernel's tap-major walk.
  constexpr int64_t kChannelBlock = 16;
  for (int64_t g = 0; g < groups; ++g) {
    const float* wg = w + g * Mg * Cg * taps;
    float* og = out + g * p.layout.group_floats;
    for (int64_t m0 = 0; m0 < Mg; m0 += nr) {
      const Column col = column(m0, Mg, depth, nr, vec);
      const int64_t cols = std::min<int64_t>(nr, Mg - m0);
      float* panel = og + col.offset;
      for (int64_t c0 = 0; c0 < Cg; c0 += kChannelBlock) {
        const int64_t c1 = std::min(Cg, c0 + kChannelBlock);
        for (int64_t tap = 0; tap < taps; ++tap)
          for (int64_t c = c0; c < c1; ++c) {
            float* row = panel + (tap * Cg + c) * col.width;
            const float* src = wg + (m0 * Cg + c) * taps + tap;
            for (int64_t j = 0; j < cols; ++j) row[j] = src[j * Cg * taps];  // padding stays zero
          }
      }
    }
  }
  p.data = SharedBytes::from(std::move(buf));
  return p;
}

PackedWeights pack_winograd_f43(const float* w, int64_t M, int64_t C, int nr, int vec) {
  static constexpr float G[6][3] = {{1.f / 4, 0, 0},
                                    {-1.f / 6, -1.f / 6, -1.f / 6},
                                    {-1.f / 6, 1.f / 6, -1.f / 6},
                                    {1.f / 24, 1.f / 12, 1.f / 6},
                                    {1.f / 24, -1.f / 12, 1.f / 6},
                                    {0, 0, 1}};
  constexpr int kMaxCols = 64;  // >= any panel width (nr)
  PackedWeights p;
  p.layout = gemm_b_layout(C, M, nr, vec);
  AlignedBuffer buf(static_cast<std::size_t>(36 * p.layout.group_floats) * sizeof(float));  // zeroed
  auto* out = reinterpret_cast<float*>(buf.data());
  // U = G g G^T for every (m, c), a panel's columns at a time so the loops over m vectorize; the
  // 36 values of one (panel, c) row land in the same row of the 36 tile points' GEMM operands.
  for (int64_t m0 = 0; m0 < M; m0 += nr) {
    const int64_t cols = std::min<int64_t>(nr, M - m0);
    const Column col = column(m0, M, C, nr, vec);
    for (int64_t c = 0; c < C; ++c) {
      float g[9][kMaxCols], t[6][3][kMaxCols];
      for (int k = 0; k < 9; ++k)
        for (int64_t j = 0; j < cols; ++j) g[k][j] = w[((m0 + j) * C + c) * 9 + k];
      for (int i = 0; i < 6; ++i)
        for (int q = 0; q < 3; ++q)
          for (int64_t j = 0; j < cols; ++j)
            t[i][q][j] = G[i][0] * g[q][j] + G[i][1] * g[3 + q][j] + G[i][2] * g[6 + q][j];
      float* dst = out + col.offset + c * col.width;
      for (int i = 0; i < 6; ++i)
        for (int q = 0; q < 6; ++q) {
          float* d = dst + (i * 6 + q) * p.layout.group_floats;
          for (int64_t j = 0; j < cols; ++j)
            d[j] = t[i][0][j] * G[q][0] + t[i][1][j] * G[q][1] + t[i][2][j] * G[q][2];
        }
    }
  }
  p.data = SharedBytes::from(std::move(buf));
  return p;
}

SharedBytes pack_depthwise(const float* w, int64_t C, int64_t taps, int vec, int64_t& c_pad) {
  c_pad = round_up(C, vec);
  AlignedBuffer buf(static_cast<std::size_t>(c_pad * taps) * sizeof(float));  // zero-filled padding
  auto* out = reinterpret_cast<float*>(buf.data());
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t c = 0; c < C; ++c) out[t * c_pad + c] = w[c * taps + t];
  return SharedBytes::from(std::move(buf));
}

SharedBytes pack_grouped_narrow(const float* w, int64_t C, int64_t gw, int64_t taps, int vec,
                                int64_t& c_pad) {
  c_pad = round_up(C, vec);
  AlignedBuffer buf(static_cast<std::size_t>(c_pad * gw * taps) * sizeof(float));  // zero-filled padding
  auto* out = reinterpret_cast<float*>(buf.data());
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t i = 0; i < gw; ++i)
      for (int64_t c = 0; c < C; ++c) out[(t * gw + i) * c_pad + c] = w[(c * gw + i) * taps + t];
  return SharedBytes::from(std::move(buf));
}

}  // namespace weave::fast
