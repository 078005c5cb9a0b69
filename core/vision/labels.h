// Class label files: one label per line, line i naming class i.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace weave::vision {

// Label files beyond this size are rejected rather than read (no real label list comes close).
inline constexpr std::size_t kMaxLabelFileBytes = 16u << 20;

// Splits on '\n', drops a trailing '\r' and surrounding spaces from each line, and ignores the
// empty line after a final newline. Interior empty lines are kept (as "") so that line numbers
// stay class ids. Text with no label at all is an error.
// With trim = false only the '\r' goes: keys files of text recognizers (CTC) may have a space
// as a key.
[[nodiscard]] Expected<std::vector<std::string>> parse_labels(std::string_view text, bool trim = true);

// Reads and parses a label file; errors name the path.
[[nodiscard]] Expected<std::vector<std::string>> load_labels(const std::string& path, bool trim = true);

}  // namespace weave::vision
