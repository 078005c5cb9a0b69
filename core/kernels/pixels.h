// Pixel conversion the image preprocessing (core/vision) shares with the kernels' fast path:
// interleaved 3-channel 8-bit pixels to three float planes through a per-channel affine map,
// in vector code when the CPU has a fast path. The public face of one entry of the fast path's
// internal table (core/kernels/fast/fast_ops.h), so that nothing above the kernels includes it.
#pragma once

#include <cstdint>

namespace weave {

// p_c[x] = src[3x + c] * a[c] + b[c] for x in [0, n).
using PixelsToPlanes = void (*)(const std::uint8_t* src, int64_t n, float* p0, float* p1, float* p2,
                                const float* a, const float* b);

// The fast path's conversion, or nullptr when this CPU (or build) has none.
[[nodiscard]] PixelsToPlanes fast_pixels_to_planes();

}  // namespace weave
