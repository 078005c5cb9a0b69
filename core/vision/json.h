// JSON lines for results: one object per buffer, e.g.
// {"pts":40000000,"results":[{"class_id":281,"label":"tabby","score":0.91}]}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/vision/decoder.h"

namespace weave::vision {

// Quoted and escaped JSON string.
[[nodiscard]] std::string json_string(std::string_view s);
// One line (no trailing newline). An unknown pts prints as null, non-finite scores as null.
[[nodiscard]] std::string to_json_line(std::optional<std::uint64_t> pts_ns, const DecodeResult& result);

}  // namespace weave::vision
