#include "core/vision/classification.h"

#include <vector>

#include "core/vision/topk.h"

namespace weave::vision {

Status ClassificationDecoder::accepts(DType dtype, const Dims& dims) const {
  if (dtype != DType::float32)
    return make_error("classification needs a float32 tensor, got ", dtype_name(dtype));
  if ((dims.rank() != 1 && dims.rank() != 2) || dims[0] <= 0 || dims[dims.rank() - 1] <= 0)
    return make_error("classification needs a tensor of shape <N> or <B,N>, got ", shape_str(dims.span()));
  return {};
}

Expected<DecodeResult> ClassificationDecoder::decode(const ConstTensorView& tensor,
                                                     const DecodeContext&) const {
  WEAVE_TRY(accepts(tensor.dtype, tensor.dims));
  if (tensor.data == nullptr) return Error("classification: tensor has no data");
  const int64_t n = tensor.dims[tensor.dims.rank() - 1];
  const int64_t rows = tensor.dims.rank() == 2 ? tensor.dims[0] : 1;
  DecodeResult result;
  std::vector<float> probs;
  for (int64_t row = 0; row < rows; ++row) {
    std::span<const float> scores(tensor.as<float>() + row * n, static_cast<std::size_t>(n));
    if (opts_.softmax) {
      probs.assign(scores.begin(), scores.end());
      softmax_inplace(probs);
      scores = probs;
    }
    RowResult r;
    for (const ScoredClass& c : top_k(scores, opts_.top_k, opts_.threshold)) {
      const auto id = static_cast<std::size_t>(c.class_id);
      std::string label = id < opts_.labels.size() ? opts_.labels[id] : std::to_string(c.class_id);
      r.classes.push_back({c.class_id, std::move(label), c.score});
    }
    result.rows.push_back(std::move(r));
  }
  result.classes = result.rows.front().classes;
  return result;
}

Expected<std::unique_ptr<Decoder>> make_classification_decoder(const DecoderOptions& opts) {
  return std::unique_ptr<Decoder>(std::make_unique<ClassificationDecoder>(opts));
}

}  // namespace weave::vision
