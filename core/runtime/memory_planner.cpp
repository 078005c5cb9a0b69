#include "core/runtime/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace weave {
namespace {
bool overlaps_in_time(const TensorLifetime& a, const TensorLifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}
std::size_t round_up(std::size_t n, std::size_t a) {
  return (n + a - 1) / a * a;
}
}  // namespace

MemoryPlan plan_memory(std::span<const TensorLifetime> tensors, std::size_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(tensors.size(), 0);
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return tensors[a].bytes > tensors[b].bytes; });

  struct Placed {
    std::size_t begin, end;
    std::size_t index;
  };
  std::vector<Placed> placed;  // sorted by begin
  std::vector<Placed> live;    // scratch: placed tensors alive together with the current one
  for (std::size_t idx : order) {
    const TensorLifetime& t = tensors[idx];
    const std::size_t size = round_up(std::max<std::size_t>(t.bytes, 1), alignment);
    live.clear();
    for (const Placed& p : placed)
      if (overlaps_in_time(tensors[p.index], t)) live.push_back(p);
    // `placed` is kept sorted by begin, so `live` is too: scan for the first gap that fits.
    std::size_t offset = 0;
    for (const Placed& p : live) {
      if (p.begin >= offset + size) break;
      offset = std::max(offset, p.end);
    }
    plan.offsets[idx] = offset;
    Placed np{offset, offset + size, idx};
    placed.insert(std::upper_bound(placed.begin(), placed.end(), np,
                                   [](const Placed& a, const Placed& b) { return a.begin < b.begin; }),
                  np);
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
  }
  return plan;
}

bool plan_is_valid(std::span<const TensorLifetime> tensors, const MemoryPlan& plan) {
  if (plan.offsets.size() != tensors.size()) return false;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (plan.offsets[i] + tensors[i].bytes > plan.arena_bytes) return false;
    for (std::size_t j = i + 1; j < tensors.size(); ++j) {
      if (!overlaps_in_time(tensors[i], tensors[j])) continue;
      std::size_t a0 = plan.offsets[i], a1 = a0 + tensors[i].bytes;
      std::size_t b0 = plan.offsets[j], b1 = b0 + tensors[j].bytes;
      if (tensors[i].bytes && tensors[j].bytes && a0 < b1 && b0 < a1) return false;
    }
  }
  return true;
}

}  // namespace weave
