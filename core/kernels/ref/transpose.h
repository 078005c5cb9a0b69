// permute_copy (transpose.cpp), which Transpose and DepthToSpace / SpaceToDepth run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/common/dims.h"
#include "core/common/parallel.h"
#include "core/kernels/kernel.h"

namespace weave::kern {

// One tile of a 2-D transpose of 4-byte values: dst[i * ldd + j] = src[i + j * lds] for
// i < rows, j < cols. The fast path's (Ops::transpose_tile) moves 8 x 8 blocks in registers and
// interleaves 2 to 4 columns (planes) a vector of rows at a time.
using TransposeTile = void (*)(const uint32_t* src, int64_t lds, int64_t rows, int64_t cols, uint32_t* dst,
                               int64_t ldd);

// Copies `in` (dims d, rank r) permuted by perm into contiguous `out`. `tile`, when given, copies
// the 4-byte tiles of a batch of 2-D transposes (an NHWC <-> NCHW reorder).
void permute_copy(const std::byte* in, const Dims& d, std::span<const int> perm, std::byte* out,
                  std::size_t esize, const Parallel& par, TransposeTile tile = nullptr);

// The Transpose kernel, its 2-D tiles of 4-byte values copied by `tile` when given.
[[nodiscard]] Expected<std::unique_ptr<Kernel>> make_transpose(const KernelSetup& s, TransposeTile tile);

}  // namespace weave::kern
