// What the reference Conv and ConvTranspose share (conv.cpp, conv_transpose.cpp): the bound on
// their workspace, the range of output positions one kernel tap reads inside the input, and the
// check of the ranks of X and W.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/kernels/kernel_util.h"

namespace weave::kern {

// The most bytes of scratch (im2col or column buffer) a reference Conv or ConvTranspose takes.
inline constexpr int64_t kMaxWorkspace = int64_t{4} << 30;

// For positions o in [0, n_out) reading input index o*s + off, the range [lo, hi) of o whose
// index lies inside [0, n_in).
inline void valid_range(int64_t n_out, int64_t n_in, int64_t s, int64_t off, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  hi = n_in - off <= 0 ? 0 : (n_in - off + s - 1) / s;
  lo = std::min(lo, n_out);
  hi = std::clamp(hi, lo, n_out);
}

// Checks the common X/W/B shapes of Conv and ConvTranspose.
inline Status check_conv_ranks(const ShapeContext& ctx, const Dims& x, const Dims& w) {
  if (x.rank() < 3 || x.rank() > 5)
    return make_error(ctx.label, ": input ", kern::dims_bracketed(x),
                      " must be N x C x (1 to 3 spatial dims)");
  if (w.rank() != x.rank())
    return make_error(ctx.label, ": weights ", kern::dims_bracketed(w), " and input ",
                      kern::dims_bracketed(x), " have different ranks");
  return {};
}

}  // namespace weave::kern
