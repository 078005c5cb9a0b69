// Tensor names as identifiers: GStreamer pad names, file names and other places that accept
// only a small alphabet. The model's own name is kept elsewhere (caps carry it); these helpers
// only derive a stable, unique, readable identifier from it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace weave {

// Lowercase ASCII letters and digits are kept, uppercase is lowered, everything else becomes
// '_'. An empty name becomes "tensor". Never longer than `max_len` (names of hostile models
// can be huge); a truncated name keeps its prefix.
[[nodiscard]] std::string sanitize_tensor_name(std::string_view name, std::size_t max_len = 64);

// Sanitized names for a list of tensors, made unique by appending "_2", "_3", ... to later
// duplicates (e.g. "x.1" and "x:1" both sanitize to "x_1"; the second becomes "x_1_2").
[[nodiscard]] std::vector<std::string> unique_tensor_names(std::span<const std::string> names);

}  // namespace weave
