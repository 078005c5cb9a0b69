// Node attributes: a small ordered list of (name, value) pairs. Values are the kinds the ONNX
// operators we support use; a tensor attribute (ConstantOfShape's `value`) is kept as raw bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/common/dims.h"
#include "core/common/dtype.h"

namespace weave {

struct TensorAttr {
  DType dtype = DType::undefined;
  Shape shape;
  std::vector<uint8_t> bytes;
  friend bool operator==(const TensorAttr&, const TensorAttr&) = default;
};

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                               std::vector<std::string>, TensorAttr>;

class Attributes {
 public:
  void set(std::string name, AttrValue v);
  [[nodiscard]] bool has(std::string_view name) const { return find(name) != nullptr; }
  [[nodiscard]] const AttrValue* find(std::string_view name) const;
  // Typed getters; return the fallback when the attribute is absent or of another kind.
  [[nodiscard]] int64_t get_int(std::string_view name, int64_t fallback) const;
  [[nodiscard]] float get_float(std::string_view name, float fallback) const;
  [[nodiscard]] std::string get_string(std::string_view name, std::string fallback = {}) const;
  [[nodiscard]] std::vector<int64_t> get_ints(std::string_view name,
                                              std::vector<int64_t> fallback = {}) const;
  [[nodiscard]] std::vector<float> get_floats(std::string_view name, std::vector<float> fallback = {}) const;
  [[nodiscard]] std::vector<std::string> get_strings(std::string_view name) const;
  [[nodiscard]] const TensorAttr* get_tensor(std::string_view name) const;
  [[nodiscard]] const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  [[nodiscard]] std::size_t size() const { return items_.size(); }
  friend bool operator==(const Attributes&, const Attributes&) = default;

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;
};

}  // namespace weave
