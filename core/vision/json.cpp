#include "core/vision/json.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

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

namespace {

// Shortest round-trip form; null for what JSON cannot hold.
std::string number(float v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string class_list(const std::vector<Classification>& classes) {
  std::string out = "[";
  for (const auto& c : classes) {
    if (out.size() > 1) out += ',';
    out += "{\"class_id\":" + std::to_string(c.class_id) + ",\"label\":" + json_string(c.label) +
           ",\"score\":" + number(c.score) + '}';
  }
  return out + "]";
}

std::string corners(const Region& r) {
  const Quad q = r.quad ? *r.quad : quad_of(r.box);
  std::string out = "[";
  for (std::size_t i = 0; i < q.size(); ++i)
    out += std::string(i ? "," : "") + "[" + number(q[i].x) + "," + number(q[i].y) + "]";
  return out + "]";
}

}  // namespace

std::string to_json_line(std::optional<std::uint64_t> pts_ns, const DecodeResult& result) {
  std::string out = "{\"pts\":";
  out += pts_ns ? std::to_string(*pts_ns) : "null";
  out += ",\"results\":" + class_list(result.classes);
  if (result.rows.size() > 1) {
    out += ",\"rows\":[";
    for (std::size_t i = 0; i < result.rows.size(); ++i)
      out += (i ? "," : "") + class_list(result.rows[i].classes);
    out += ']';
  }
  return out + "}";
}

std::string regions_json_line(std::optional<std::uint64_t> pts_ns, std::span<const Region> regions,
                              const RegionKeys& keys) {
  // Classifications of a region, when it has any.
  auto classes = [](const Region& r) {
    if (r.classes.empty()) return std::string();
    std::string out = ",\"classes\":[";
    for (std::size_t i = 0; i < r.classes.size(); ++i) {
      const ClassResult& c = r.classes[i];
      out += std::string(i ? "," : "") + "{\"name\":" + json_string(c.name) +
             ",\"class_id\":" + std::to_string(c.class_id) + ",\"label\":" + json_string(c.label) +
             ",\"score\":" + number(c.score) + "}";
    }
    return out + "]";
  };
  // The track, when a tracker gave the region one.
  auto track = [](const Region& r) {
    if (!r.track) return std::string();
    return ",\"track\":" + std::to_string(r.track->id) + (r.track->predicted ? ",\"predicted\":true" : "");
  };
  auto text_item = [&](const Region& r) {
    std::string item = "{";
    if (r.text) {
      item += "\"text\":" + json_string(r.text->text) + ",\"score\":" + number(r.text->score) + ",";
      if (!r.text->char_scores.empty()) {
        item += "\"char_scores\":[";
        for (std::size_t k = 0; k < r.text->char_scores.size(); ++k)
          item.append(k ? "," : "").append(number(r.text->char_scores[k]));
        item += "],";
      }
    } else
      item += "\"score\":" + number(r.score) + ",";
    item += "\"box\":" + corners(r);
    if (r.angle && *r.angle != 0) item += ",\"angle\":" + std::to_string(*r.angle);
    return item + classes(r) + track(r) + "}";
  };
  auto add = [](std::string& list, const std::string& item) {
    if (!list.empty()) list += ',';
    list += item;
  };
  std::string texts, objects;
  if (keys.lines) {
    for (const TextLine& line : merge_text_lines(regions, *keys.lines)) {
      if (line.words.size() == 1) {
        add(texts, text_item(regions[line.words.front()]));
        continue;
      }
      std::string words;
      for (int w : line.words) add(words, text_item(regions[w]));
      std::string item = text_item(line.region);
      item.pop_back();  // the closing brace
      item.append(",\"words\":[").append(words).append("]}");
      add(texts, item);
    }
  }
  for (const Region& r : regions) {
    if (r.type == "text") {
      if (!keys.lines) add(texts, text_item(r));
      continue;
    }
    std::string item = "{\"label\":" + json_string(r.label.empty() ? r.type : r.label) +
                       ",\"class_id\":" + std::to_string(r.class_id) + ",\"score\":" + number(r.score) +
                       ",\"box\":" + corners(r) + classes(r);
    if (r.text) item += ",\"text\":" + json_string(r.text->text) + ",\"text_score\":" + number(r.text->score);
    add(objects, item + track(r) + "}");
  }
  std::string out = "{\"pts\":";
  out += pts_ns ? std::to_string(*pts_ns) : "null";
  if (keys.texts || !texts.empty()) out += ",\"texts\":[" + texts + "]";
  if (keys.objects || !objects.empty()) out += ",\"objects\":[" + objects + "]";
  return out + "}";
}

RegionKeys keys_for(ResultRegions regions, std::string_view roi_type) {
  switch (regions) {
    case ResultRegions::text:
      return RegionKeys{.texts = true, .objects = false, .lines = {}};
    case ResultRegions::objects:
      return RegionKeys{.texts = false, .objects = true, .lines = {}};
    default:
      return RegionKeys{
          .texts = roi_type == "text", .objects = !roi_type.empty() && roi_type != "text", .lines = {}};
  }
}

std::string RegionLines::line(std::optional<std::uint64_t> pts_ns, std::span<const Region> regions) {
  for (const Region& r : regions) {
    keys_.texts = keys_.texts || r.type == "text";
    keys_.objects = keys_.objects || r.type != "text";
  }
  return regions_json_line(pts_ns, regions, keys_);
}

Status JsonLineWriter::open(const std::string& target) {
  close();
  path_ = target;
  if (target.empty()) return {};
  if (target == "stdout") {
    to_stdout_ = true;
    return {};
  }
  file_.open(target, std::ios::out | std::ios::trunc);
  if (!file_)
    return make_error("json file '", target, "': cannot open for writing (", std::strerror(errno), ")");
  return {};
}

void JsonLineWriter::close() {
  if (file_.is_open()) file_.close();
  to_stdout_ = false;
}

Status JsonLineWriter::write(std::string_view line) {
  if (to_stdout_) {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    return {};
  }
  if (!file_.is_open()) return {};
  file_ << line << '\n' << std::flush;
  if (!file_) return make_error("writing json file '", path_, "' failed");
  return {};
}

}  // namespace weave::vision
