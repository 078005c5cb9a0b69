#include "core/common/dtype.h"

#include <array>
#include <utility>

namespace weave {
namespace {
struct Entry {
  DType type;
  std::string_view name;
  std::size_t size;
};
constexpr std::array<Entry, 13> kTable{{
    {DType::float32, "float32", 4},
    {DType::uint8, "uint8", 1},
    {DType::int8, "int8", 1},
    {DType::uint16, "uint16", 2},
    {DType::int16, "int16", 2},
    {DType::int32, "int32", 4},
    {DType::int64, "int64", 8},
    {DType::boolean, "bool", 1},
    {DType::float16, "float16", 2},
    {DType::float64, "float64", 8},
    {DType::uint32, "uint32", 4},
    {DType::uint64, "uint64", 8},
    {DType::bfloat16, "bfloat16", 2},
}};
}  // namespace

std::size_t dtype_size(DType t) {
  for (const auto& e : kTable)
    if (e.type == t) return e.size;
  return 0;
}

std::string_view dtype_name(DType t) {
  for (const auto& e : kTable)
    if (e.type == t) return e.name;
  return "undefined";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& e : kTable)
    if (e.name == name) return e.type;
  if (name == "float") return DType::float32;
  if (name == "double") return DType::float64;
  if (name == "boolean") return DType::boolean;
  return std::nullopt;
}

bool dtype_valid(int32_t raw) {
  for (const auto& e : kTable)
    if (static_cast<int32_t>(e.type) == raw) return true;
  return false;
}

}  // namespace weave
