#include "core/track/reclassify.h"

namespace weave::track {

std::vector<vision::Region> ReclassifySchedule::select(std::vector<vision::Region> regions) {
  const std::uint64_t now = frame_++;
  if (interval_ <= 1) return regions;
  std::unordered_map<std::uint64_t, std::uint64_t> seen;
  std::vector<vision::Region> out;
  out.reserve(regions.size());
  for (vision::Region& r : regions) {
    if (!r.track) {
      out.push_back(std::move(r));
      continue;
    }
    const auto it = last_read_.find(r.track->id);
    const bool due = it == last_read_.end() || now - it->second >= static_cast<std::uint64_t>(interval_);
    seen[r.track->id] = due ? now : it->second;
    if (due) out.push_back(std::move(r));
  }
  last_read_ = std::move(seen);
  return out;
}

}  // namespace weave::track
