#include "core/vision/classification.h"

#include <vector>

#include "core/vision/topk.h"

namespace weave::vision {

Status ClassificationDecoder::accepts(DType dtype, const Dims& dims) const {
  if (dtype != DType::float32)
    return make_error("classification needs a float32 tensor, got ", dtype_name(dtype));
  const bool vector = dims.rank() == 1 || (dims.rank() == 2 && dims[0] == 1);
  if (!vector || dims[dims.rank() - 1] <= 0)
    return make_error("classification needs a tensor of shape <N> or <1,N>, got ", shape_str(dims.span()));
  return {};
}

Expected<DecodeResult> ClassificationDecoder::decode(const ConstTensorView& tensor) const {
  WEAVE_TRY(accepts(tensor.dtype, tensor.dims));
  if (tensor.data == nullptr) return Error("classification: tensor has no data");
  std::span<const float> scores(tensor.as<float>(), static_cast<std::size_t>(tensor.numel()));
  std::vector<float> probs;
  if (opts_.softmax) {
    probs.assign(scores.begin(), scores.end());
    softmax_inplace(probs);
    scores = probs;
  }
  DecodeResult result;
  for (const ScoredClass& c : top_k(scores, opts_.top_k, opts_.threshold)) {
    const auto id = static_cast<std::size_t>(c.class_id);
    std::string label = id < opts_.labels.size() ? opts_.labels[id] : std::to_string(c.class_id);
    result.classes.push_back({c.class_id, std::move(label), c.score});
  }
  return result;
}

Expected<std::unique_ptr<Decoder>> make_classification_decoder(const DecoderOptions& opts) {
  return std::unique_ptr<Decoder>(std::make_unique<ClassificationDecoder>(opts));
}

}  // namespace weave::vision
