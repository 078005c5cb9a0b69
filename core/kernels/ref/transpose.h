// permute_copy (transpose.cpp), which Transpose and DepthToSpace / SpaceToDepth run.
#pragma once

#include <cstddef>
#include <span>

#include "core/common/dims.h"
#include "core/common/parallel.h"

namespace weave::kern {

// Copies `in` (dims d, rank r) permuted by perm into contiguous `out`.
void permute_copy(const std::byte* in, const Dims& d, std::span<const int> perm, std::byte* out,
                  std::size_t esize, const Parallel& par);

}  // namespace weave::kern
