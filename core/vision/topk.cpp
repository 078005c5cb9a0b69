#include "core/vision/topk.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace weave::vision {

void softmax_inplace(std::span<float> values) {
  if (values.empty()) return;
  float mx = -std::numeric_limits<float>::infinity();
  for (float v : values) mx = std::max(mx, v);
  if (std::isinf(mx) && mx < 0) {
    std::fill(values.begin(), values.end(), 1.0f / static_cast<float>(values.size()));
    return;
  }
  double sum = 0.0;
  for (float& v : values) {
    v = std::exp(v - mx);
    sum += v;
  }
  for (float& v : values) v = static_cast<float>(v / sum);
}

std::vector<ScoredClass> top_k(std::span<const float> scores, std::size_t k, double threshold) {
  std::vector<ScoredClass> candidates;
  candidates.reserve(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const float s = scores[i];
    if (std::isnan(s) || static_cast<double>(s) < threshold) continue;
    candidates.push_back({static_cast<int>(i), s});
  }
  const std::size_t n = (k == 0 || k > candidates.size()) ? candidates.size() : k;
  auto better = [](const ScoredClass& a, const ScoredClass& b) {
    return a.score != b.score ? a.score > b.score : a.class_id < b.class_id;
  };
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(n), candidates.end(),
                    better);
  candidates.resize(n);
  return candidates;
}

}  // namespace weave::vision
