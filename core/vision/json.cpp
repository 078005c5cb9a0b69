#include "core/vision/json.h"

#include <charconv>
#include <cmath>

namespace weave::vision {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;  // UTF-8 passes through unchanged
        }
    }
  }
  out += '"';
  return out;
}

std::string to_json_line(std::optional<std::uint64_t> pts_ns, const DecodeResult& result) {
  std::string out = "{\"pts\":";
  out += pts_ns ? std::to_string(*pts_ns) : "null";
  out += ",\"results\":[";
  bool first = true;
  for (const auto& c : result.classes) {
    if (!first) out += ',';
    first = false;
    out +=
        "{\"class_id\":" + std::to_string(c.class_id) + ",\"label\":" + json_string(c.label) + ",\"score\":";
    if (std::isfinite(c.score)) {
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof buf, c.score);
      out.append(buf, r.ptr);
    } else {
      out += "null";
    }
    out += '}';
  }
  out += "]}";
  return out;
}

}  // namespace weave::vision
