// Scores -> the best classes.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace weave::vision {

struct ScoredClass {
  int class_id = 0;
  float score = 0.0f;
  friend bool operator==(const ScoredClass&, const ScoredClass&) = default;
};

// Numerically stable softmax in place (subtracts the max). NaN inputs make every output NaN;
// an all -inf input becomes uniform.
void softmax_inplace(std::span<float> values);

// The k best scores at or above `threshold`, best first. Ties go to the lower class id so results
// are deterministic. NaN scores are never selected. k = 0 means all.
[[nodiscard]] std::vector<ScoredClass> top_k(std::span<const float> scores, std::size_t k, double threshold);

}  // namespace weave::vision
