// Mode "ctc": greedy CTC decoding of a text recognizer's output <N,T,C> (N crops, T time steps,
// C classes; probabilities, e.g. PP-OCR rec's softmax output). Class 0 is the CTC blank; class
// k in 1..K is key k-1 of the keys file; a model with K+2 classes reads its last class as a space
// (PaddleOCR's use_space_char). At each step the best class wins; repeats and blanks are
// dropped. A text's score is the mean probability of its characters (0 for an empty text); each
// character's own probability is kept (TextResult::char_scores).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/vision/regions.h"

namespace weave::vision {

// Checks float32 <N,T,C> (or <T,C>) and that C is K+1 or K+2 for K keys: the message names both.
[[nodiscard]] Status check_ctc_tensor(DType dtype, const Dims& dims, std::size_t keys);

// One text per crop.
[[nodiscard]] Expected<std::vector<TextResult>> ctc_greedy(const ConstTensorView& probs,
                                                           std::span<const std::string> keys);

}  // namespace weave::vision
