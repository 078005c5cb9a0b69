// Mode "classification": score vectors -> top-k classes. A tensor <N> or <1,N> is one vector
// (`classes`); <B,N> is one per row (`rows`, e.g. crops of B regions; `classes` is row 0).
#pragma once

#include <memory>

#include "core/vision/decoder.h"

namespace weave::vision {

class ClassificationDecoder final : public Decoder {
 public:
  explicit ClassificationDecoder(DecoderOptions opts) : opts_(std::move(opts)) {}
  [[nodiscard]] std::string_view mode() const override { return "classification"; }
  [[nodiscard]] Status accepts(DType dtype, const Dims& dims) const override;
  [[nodiscard]] bool per_row() const override { return true; }
  [[nodiscard]] Expected<DecodeResult> decode(const ConstTensorView& tensor,
                                              const DecodeContext& context = {}) const override;

 private:
  DecoderOptions opts_;
};

[[nodiscard]] Expected<std::unique_ptr<Decoder>> make_classification_decoder(const DecoderOptions& opts);

}  // namespace weave::vision
