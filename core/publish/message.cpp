#include "core/publish/message.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

namespace weave::publish {

std::string frame_message(const MessageHeader& h, std::optional<uint64_t> pts_ns,
                          std::span<const vision::Region> regions, vision::RegionLines& lines) {
  const std::string line = lines.line(pts_ns, regions);  // {"pts":...,...}
  char time[32];
  std::snprintf(time, sizeof time, "%.3f", h.time);
  std::string out = std::string("{\"camera\":").append(vision::json_string(h.camera));
  out.append(",\"frame\":").append(std::to_string(h.frame)).append(",\"time\":").append(time);
  for (const auto& [k, v] : h.tags)
    out.append(",").append(vision::json_string(k)).append(":").append(vision::json_string(v));
  if (line.size() > 2)
    out.append(",").append(line, 1, std::string::npos);
  else
    out.append("}");
  return out;
}

Expected<std::vector<std::pair<std::string, std::string>>> parse_tags(std::string_view text) {
  static constexpr std::array<std::string_view, 6> kReserved = {"camera", "frame", "time",
                                                                "pts",    "texts", "objects"};
  std::vector<std::pair<std::string, std::string>> tags;
  for (std::size_t b = 0; b < text.size();) {
    const auto comma = std::min(text.find(',', b), text.size());
    const std::string_view item = text.substr(b, comma - b);
    const auto eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    bool ok = eq != std::string_view::npos && !key.empty();
    for (char c : key) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
    if (!ok)
      return Error("tags '" + std::string(text) + "': '" + std::string(item) +
                   "' is not key=value (key: letters, digits, _ -)");
    for (auto r : kReserved)
      if (key == r)
        return Error("tags '" + std::string(text) + "': '" + std::string(key) +
                     "' is a key of the message itself");
    tags.emplace_back(std::string(key), std::string(item.substr(eq + 1)));
    b = comma + 1;
  }
  return tags;
}

}  // namespace weave::publish
