// Arena planning as a pure function: given each tensor's size and the steps during which it
// must stay alive, assign offsets in one arena so that tensors alive at the same time never
// overlap. Greedy by size (largest first), each placed at the lowest gap that fits among the
// already-placed tensors whose lifetimes intersect its own (the TFLite-Micro style planner).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace weave {

struct TensorLifetime {
  std::size_t bytes = 0;
  int32_t first = 0;  // first step that writes or reads it
  int32_t last = 0;   // last step that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<std::size_t> offsets;  // parallel to the lifetimes; multiples of `alignment`
  std::size_t arena_bytes = 0;
};

[[nodiscard]] MemoryPlan plan_memory(std::span<const TensorLifetime> tensors, std::size_t alignment = 64);

// True when no two tensors with intersecting lifetimes overlap in memory and all fit; for tests.
[[nodiscard]] bool plan_is_valid(std::span<const TensorLifetime> tensors, const MemoryPlan& plan);

}  // namespace weave
