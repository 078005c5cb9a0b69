// Model outputs -> results a user reads (weavedecode's logic). One Decoder per mode, created by
// name from a registry so new modes (detection boxes, text) plug in without touching the element:
// implement Decoder, add fields to DecodeResult, register a maker.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/common/tensor.h"

namespace weave::vision {

struct DecoderOptions {
  std::vector<std::string> labels;  // class id -> name; may be empty or shorter than the classes
  std::size_t top_k = 5;            // 0 = all
  bool softmax = false;
  double threshold = -std::numeric_limits<double>::infinity();
};

struct Classification {
  int class_id = 0;
  std::string label;  // from the label list, or the id in decimal when the list has no entry
  float score = 0.0f;
};

// What one tensor decodes to. Each mode fills its own part.
struct DecodeResult {
  std::vector<Classification> classes;  // mode "classification", best first
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  [[nodiscard]] virtual std::string_view mode() const = 0;
  // Checked once when the tensor's shape is known (caps negotiation), so decode() can trust it.
  [[nodiscard]] virtual Status accepts(DType dtype, const Dims& dims) const = 0;
  // `tensor` has a dtype and dims accepts() allowed and holds its bytes.
  [[nodiscard]] virtual Expected<DecodeResult> decode(const ConstTensorView& tensor) const = 0;
};

using DecoderMaker = std::function<Expected<std::unique_ptr<Decoder>>(const DecoderOptions&)>;

// Modes by name. global() comes with the built-in modes registered.
class DecoderRegistry {
 public:
  static DecoderRegistry& global();
  void add(std::string mode, DecoderMaker maker);
  // Unknown modes are an error listing the known ones.
  [[nodiscard]] Expected<std::unique_ptr<Decoder>> make(std::string_view mode,
                                                        const DecoderOptions& opts) const;
  [[nodiscard]] std::vector<std::string> modes() const;

 private:
  std::vector<std::pair<std::string, DecoderMaker>> makers_;
};

}  // namespace weave::vision
