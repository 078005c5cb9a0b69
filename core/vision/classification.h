// Mode "classification": one score vector per tensor (shape <N> or <1,N>) -> top-k classes.
#pragma once

#include <memory>

#include "core/vision/decoder.h"

namespace weave::vision {

class ClassificationDecoder final : public Decoder {
 public:
  explicit ClassificationDecoder(DecoderOptions opts) : opts_(std::move(opts)) {}
  [[nodiscard]] std::string_view mode() const override { return "classification"; }
  [[nodiscard]] Status accepts(DType dtype, const Dims& dims) const override;
  [[nodiscard]] Expected<DecodeResult> decode(const ConstTensorView& tensor) const override;

 private:
  DecoderOptions opts_;
};

[[nodiscard]] Expected<std::unique_ptr<Decoder>> make_classification_decoder(const DecoderOptions& opts);

}  // namespace weave::vision
