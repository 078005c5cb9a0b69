#include "core/vision/ctc.h"

#include <algorithm>

namespace weave::vision {

Status check_ctc_tensor(DType dtype, const Dims& d, std::size_t keys) {
  if (dtype != DType::float32) return make_error("ctc: needs float32 probabilities, got ", dtype_name(dtype));
  if (d.rank() != 2 && d.rank() != 3)
    return make_error("ctc: needs a tensor of shape <N,T,C> or <T,C>, got ", shape_str(d.span()));
  const auto classes = static_cast<std::size_t>(d[d.rank() - 1]);
  if (keys == 0) return make_error("ctc: no keys (a keys file of one character per line is needed)");
  if (classes != keys + 1 && classes != keys + 2)
    return make_error("ctc: the keys file has ", keys, " keys but the model has ", classes,
                      " classes (expected ", keys + 1, ", or ", keys + 2, " with a space)");
  return {};
}

Expected<std::vector<TextResult>> ctc_greedy(const ConstTensorView& probs,
                                             std::span<const std::string> keys) {
  WEAVE_TRY(check_ctc_tensor(probs.dtype, probs.dims, keys.size()));
  if (probs.data == nullptr) return make_error("ctc: the tensor has no data");
  const Dims& d = probs.dims;
  const int64_t n = d.rank() == 3 ? d[0] : 1, steps = d[d.rank() - 2], classes = d[d.rank() - 1];
  const auto space = static_cast<int64_t>(keys.size()) + 1;  // only when classes == keys + 2
  std::vector<TextResult> out;
  out.reserve(static_cast<std::size_t>(n));
  const float* base = probs.as<float>();
  for (int64_t i = 0; i < n; ++i) {
    TextResult t;
    double sum = 0.0;
    int count = 0;
    int64_t previous = 0;
    for (int64_t s = 0; s < steps; ++s) {
      const float* row = base + (i * steps + s) * classes;
      const auto best = static_cast<int64_t>(std::max_element(row, row + classes) - row);
      if (best != 0 && best != previous) {
        t.text += best == space ? std::string(" ") : keys[static_cast<std::size_t>(best - 1)];
        t.char_scores.push_back(row[best]);
        sum += row[best];
        ++count;
      }
      previous = best;
    }
    t.score = count > 0 ? static_cast<float>(sum / count) : 0.0f;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace weave::vision
