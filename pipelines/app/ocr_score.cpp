// ocr_score: compares what pipelines/ocr.sh read (its JSON lines) with what render_text drew
// (its truth file), frame by frame, and prints the texts read and the score.
//
//   ocr_score TRUTH.jsonl RESULTS.jsonl
//
// Prints "read R of S strings exactly, found F of S" and each miss (the rule: score() in
// text_scene.h). Exits 0 when at
// least 90% of the strings were read exactly and every one was found, 1 otherwise, 2 on bad input.
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipelines/app/text_scene.h"

namespace {

using weave::demo::Truth;

// Lines of {"pts":..,"texts":[...]}; `corners`: boxes are 4 corner points (results), else x,y,w,h.
bool read_lines(const char* path, bool corners, std::vector<std::vector<Truth>>& out) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot open %s\n", path);
    return false;
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("texts") || !j["texts"].is_array()) {
      std::fprintf(stderr, "%s:%d: not a JSON line with \"texts\"\n", path, n);
      return false;
    }
    std::vector<Truth> frame;
    for (const auto& t : j["texts"]) {
      Truth r;
      r.text = t.value("text", "");
      const auto& box = t["box"];
      if (corners && box.is_array() && box.size() == 4) {
        double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
        for (const auto& p : box) {
          x0 = std::min(x0, p[0].get<double>());
          y0 = std::min(y0, p[1].get<double>());
          x1 = std::max(x1, p[0].get<double>());
          y1 = std::max(y1, p[1].get<double>());
        }
        r.x = static_cast<int>(x0);
        r.y = static_cast<int>(y0);
        r.width = static_cast<int>(x1 - x0);
        r.height = static_cast<int>(y1 - y0);
      } else if (!corners && box.is_array() && box.size() == 4) {
        r.x = box[0];
        r.y = box[1];
        r.width = box[2];
        r.height = box[3];
      }
      frame.push_back(r);
    }
    out.push_back(std::move(frame));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ocr_score TRUTH.jsonl RESULTS.jsonl\n");
    return 2;
  }
  std::vector<std::vector<Truth>> truth, read;
  try {
    if (!read_lines(argv[1], false, truth) || !read_lines(argv[2], true, read)) return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bad JSON: %s\n", e.what());
    return 2;
  }
  std::map<std::string, int> texts;
  std::size_t empty = 0;
  for (const auto& frame : read) {
    empty += frame.empty() ? 1 : 0;
    for (const Truth& t : frame) ++texts[t.text];
  }
  std::printf("%zu frames (%zu without text), texts read (frames):\n", read.size(), empty);
  for (const auto& [text, n] : texts) std::printf("  %-24s %d\n", ("\"" + text + "\"").c_str(), n);
  if (read.size() != truth.size()) std::printf("frames: %zu read, %zu drawn\n", read.size(), truth.size());
  const auto s = weave::demo::score(truth, read);
  for (const auto& m : s.misses) std::printf("  miss: %s\n", m.c_str());
  std::printf("read %d of %d strings exactly (%.1f%%), found %d of %d\n", s.read, s.shown,
              s.shown > 0 ? 100.0 * s.read / s.shown : 0.0, s.found, s.shown);
  std::printf("read %d of %d strings exactly anywhere on their frame (%.1f%%)\n", s.read_anywhere, s.shown,
              s.shown > 0 ? 100.0 * s.read_anywhere / s.shown : 0.0);
  return read.size() == truth.size() && s.found == s.shown && s.read * 10 >= s.shown * 9 ? 0 : 1;
}
