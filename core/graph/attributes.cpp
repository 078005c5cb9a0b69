#include "core/graph/attributes.h"

namespace weave {

void Attributes::set(std::string name, AttrValue v) {
  for (auto& [k, val] : items_)
    if (k == name) {
      val = std::move(v);
      return;
    }
  items_.emplace_back(std::move(name), std::move(v));
}

const AttrValue* Attributes::find(std::string_view name) const {
  for (const auto& [k, v] : items_)
    if (k == name) return &v;
  return nullptr;
}

int64_t Attributes::get_int(std::string_view name, int64_t fallback) const {
  const AttrValue* v = find(name);
  if (v && std::holds_alternative<int64_t>(*v)) return std::get<int64_t>(*v);
  return fallback;
}

float Attributes::get_float(std::string_view name, float fallback) const {
  const AttrValue* v = find(name);
  if (v && std::holds_alternative<float>(*v)) return std::get<float>(*v);
  if (v && std::holds_alternative<int64_t>(*v)) return static_cast<float>(std::get<int64_t>(*v));
  return fallback;
}

std::string Attributes::get_string(std::string_view name, std::string fallback) const {
  const AttrValue* v = find(name);
  if (v && std::holds_alternative<std::string>(*v)) return std::get<std::string>(*v);
  return fallback;
}

std::vector<int64_t> Attributes::get_ints(std::string_view name, std::vector<int64_t> fallback) const {
  const AttrValue* v = find(name);
  if (v && std::holds_alternative<std::vector<int64_t>>(*v)) return std::get<std::vector<int64_t>>(*v);
  return fallback;
}

std::vector<float> Attributes::get_floats(std::string_view name, std::vector<float> fallback) const {
  const AttrValue* v = find(name);
  if (v && std::holds_alternative<std::vector<float>>(*v)) return std::get<std::vector<float>>(*v);
  return fallback;
}

std::vector<std::string> Attributes::get_strings(std::string_view name) const {
  const AttrValue* v = find(name);
  if (v && std::holds_alternative<std::vector<std::string>>(*v))
    return std::get<std::vector<std::string>>(*v);
  return {};
}

const TensorAttr* Attributes::get_tensor(std::string_view name) const {
  const AttrValue* v = find(name);
  if (v && std::holds_alternative<TensorAttr>(*v)) return &std::get<TensorAttr>(*v);
  return nullptr;
}

}  // namespace weave
