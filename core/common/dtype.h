// Element types. The numeric values equal ONNX's TensorProto.DataType so that import and the
// artifact need no translation table; they are part of the .weave format and never change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace weave {

enum class DType : int32_t {
  undefined = 0,
  float32 = 1,
  uint8 = 2,
  int8 = 3,
  uint16 = 4,
  int16 = 5,
  int32 = 6,
  int64 = 7,
  boolean = 9,
  float16 = 10,
  float64 = 11,
  uint32 = 12,
  uint64 = 13,
  bfloat16 = 16,  // stored as the upper 16 bits of a float32
};

// Bytes per element; 0 for undefined or unsupported values.
[[nodiscard]] std::size_t dtype_size(DType t);
// "float32", "int64", ... (the names used in caps, the CLI and .npy headers map onto these).
[[nodiscard]] std::string_view dtype_name(DType t);
[[nodiscard]] std::optional<DType> dtype_from_name(std::string_view name);
// True for values the artifact and kernels know (guards raw integers read from files).
[[nodiscard]] bool dtype_valid(int32_t raw);

template <class T>
struct dtype_of;
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::float32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::float64;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::int64;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::int32;
};
template <>
struct dtype_of<int16_t> {
  static constexpr DType value = DType::int16;
};
template <>
struct dtype_of<int8_t> {
  static constexpr DType value = DType::int8;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = DType::uint8;
};
template <>
struct dtype_of<uint16_t> {
  static constexpr DType value = DType::uint16;
};
template <>
struct dtype_of<uint32_t> {
  static constexpr DType value = DType::uint32;
};
template <>
struct dtype_of<uint64_t> {
  static constexpr DType value = DType::uint64;
};
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::boolean;
};
template <class T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

}  // namespace weave
