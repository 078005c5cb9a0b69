#include "core/vision/labels.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace weave::vision {

Expected<std::vector<std::string>> parse_labels(std::string_view text, bool trim) {
  std::vector<std::string> labels;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    while (trim && !line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    while (trim && !line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    labels.emplace_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  bool any = false;
  for (const auto& l : labels) any = any || !l.empty();
  if (!any) return Error("no labels (the text is empty)");
  return labels;
}

Expected<std::vector<std::string>> load_labels(const std::string& path, bool trim) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("labels file '", path, "': cannot open (", std::strerror(errno), ")");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return make_error("labels file '", path, "': cannot read its size");
  if (static_cast<std::size_t>(size) > kMaxLabelFileBytes)
    return make_error("labels file '", path, "': ", size, " bytes is more than the ", kMaxLabelFileBytes,
                      " allowed");
  in.seekg(0);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in.read(text.data(), size)) return make_error("labels file '", path, "': read failed");
  auto labels = parse_labels(text, trim);
  if (!labels) return labels.error().context("labels file '" + path + "'");
  return labels;
}

}  // namespace weave::vision
