#include "core/runtime/tensor_names.h"

#include <set>

namespace weave {

std::string sanitize_tensor_name(std::string_view name, std::size_t max_len) {
  std::string out;
  out.reserve(name.size() < max_len ? name.size() : max_len);
  for (char c : name) {
    if (out.size() >= max_len) break;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
      out += c;
    else if (c >= 'A' && c <= 'Z')
      out += static_cast<char>(c - 'A' + 'a');
    else
      out += '_';
  }
  if (out.empty()) out = "tensor";
  return out;
}

std::vector<std::string> unique_tensor_names(std::span<const std::string> names) {
  std::vector<std::string> out;
  std::set<std::string> used;
  out.reserve(names.size());
  for (const auto& n : names) {
    std::string base = sanitize_tensor_name(n);
    std::string candidate = base;
    for (int k = 2; used.count(candidate) != 0; ++k) candidate = base + "_" + std::to_string(k);
    used.insert(candidate);
    out.push_back(std::move(candidate));
  }
  return out;
}

}  // namespace weave
