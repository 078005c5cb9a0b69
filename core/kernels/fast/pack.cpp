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

// Writes one group's panels: value(k, n) for k < depth (= taps * channels), n < N.
template <class Get>
void pack_panels(int64_t N, int64_t depth, int nr, int vec, float* out, Get value) {
  for (int64_t col0 = 0; col0 < N; col0 += nr) {
    const int64_t width = std::min<int64_t>(nr, round_up(N - col0, vec));
    const int64_t cols = std::min<int64_t>(nr, N - col0);
    float* panel = out + col0 * depth;  // every earlier panel is full width
    for (int64_t k = 0; k < depth; ++k) {
      float* row = panel + k * width;
      for (int64_t c = 0; c < width; ++c) row[c] = c < cols ? value(k, col0 + c) : 0.f;
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
  if (trans)
    pack_panels(N, K, static_cast<int>(l.nr), vec, out, [&](int64_t k, int64_t n) { return b[n * ldb + k]; });
  else
    pack_panels(N, K, static_cast<int>(l.nr), vec, out, [&](int64_t k, int64_t n) { return b[k * ldb + n]; });
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
  AlignedBuffer buf(static_cast<std::size_t>(p.layout.group_floats * groups) * sizeof(float), false);
  auto* out = reinterpret_cast<float*>(buf.data());
  for (int64_t g = 0; g < groups; ++g) {
    const float* wg = w + g * Mg * Cg * taps;
    // Depth index k = tap * Cg + c, matching the micro-kernel's tap-major walk.
    pack_panels(Mg, depth, nr, vec, out + g * p.layout.group_floats, [&](int64_t k, int64_t m) {
      const int64_t tap = k / Cg, c = k % Cg;
      return wg[(m * Cg + c) * taps + tap];
    });
  }
  p.data = SharedBytes::from(std::move(buf));
  return p;
}

PackedWeights pack_winograd_f43(const float* w, int64_t M, int64_t C, int nr, int vec) {
  static constexpr double G[6][3] = {{1.0 / 4, 0, 0},
                                     {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                     {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                     {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                     {0, 0, 1}};
  PackedWeights p;
  p.layout = gemm_b_layout(C, M, nr, vec);
  AlignedBuffer buf(static_cast<std::size_t>(36 * p.layout.group_floats) * sizeof(float), false);
  std::vector<float> u(static_cast<std::size_t>(36 * C * M));  // [xi][c][m]
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (m * C + c) * 9;
      double t[6][3];  // G g
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 3; ++j) t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
          const double v = t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2];
          u[static_cast<std::size_t>(((i * 6 + j) * C + c) * M + m)] = static_cast<float>(v);
        }
    }
  auto* out = reinterpret_cast<float*>(buf.data());
  for (int xi = 0; xi < 36; ++xi)
    pack_gemm_b_into(u.data() + xi * C * M, C, M, M, false, p.layout, vec, out + xi * p.layout.group_floats);
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

}  // namespace weave::fast
