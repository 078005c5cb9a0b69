#include "core/vision/text_lines.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace weave::vision {

namespace {

struct Extent {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float slope = 0;       // degrees of the top edge from horizontal
  bool joinable = true;  // upright: a region read turned over is never joined
  [[nodiscard]] float height() const { return y1 - y0; }
};

Extent extent_of(const Region& r) {
  Extent e;
  e.joinable = !r.angle || *r.angle == 0;
  if (!r.quad) {
    e.x0 = static_cast<float>(r.box.x);
    e.y0 = static_cast<float>(r.box.y);
    e.x1 = static_cast<float>(r.box.x + r.box.width);
    e.y1 = static_cast<float>(r.box.y + r.box.height);
    return e;
  }
  const Quad& q = *r.quad;
  e.x0 = e.x1 = q[0].x;
  e.y0 = e.y1 = q[0].y;
  for (const Point& p : q) {
    e.x0 = std::min(e.x0, p.x);
    e.x1 = std::max(e.x1, p.x);
    e.y0 = std::min(e.y0, p.y);
    e.y1 = std::max(e.y1, p.y);
  }
  constexpr float kDegrees = 180.0f / 3.14159265f;
  e.slope = std::atan2(q[1].y - q[0].y, q[1].x - q[0].x) * kDegrees;
  return e;
}

bool same_line(const Extent& a, const Extent& b, const LineMergeOptions& o) {
  if (!a.joinable || !b.joinable) return false;
  if (std::abs(a.slope) > o.max_slope_degrees || std::abs(b.slope) > o.max_slope_degrees) return false;
  const float low = std::min(a.height(), b.height()), high = std::max(a.height(), b.height());
  if (low <= 0 || high > o.max_height_ratio * low) return false;
  const float overlap = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  if (overlap < o.min_overlap * low) return false;
  const float gap = std::max(a.x0, b.x0) - std::min(a.x1, b.x1);  // negative when they overlap
  return gap <= o.max_gap * high;
}

std::size_t utf8_length(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

int find(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

Region line_region(std::span<const Region> regions, const std::vector<int>& words,
                   std::span<const Extent> extents) {
  const Region& first = regions[words.front()];
  if (words.size() == 1) return first;
  Region line;
  line.id = first.id;
  line.type = "text";
  Extent u = extents[words.front()];
  std::string text;
  double weighted = 0, chars = 0;
  bool any_text = false;
  line.score = first.score;
  for (int w : words) {
    const Extent& e = extents[w];
    u.x0 = std::min(u.x0, e.x0);
    u.y0 = std::min(u.y0, e.y0);
    u.x1 = std::max(u.x1, e.x1);
    u.y1 = std::max(u.y1, e.y1);
    const Region& r = regions[w];
    line.score = std::min(line.score, r.score);
    if (!r.text || r.text->text.empty()) continue;
    any_text = true;
    if (!text.empty()) text += ' ';
    text += r.text->text;
    const auto n = static_cast<double>(utf8_length(r.text->text));
    weighted += n * r.text->score;
    chars += n;
  }
  if (any_text) line.text = TextResult{text, static_cast<float>(chars > 0 ? weighted / chars : 0.0)};
  const Box b{static_cast<int>(std::floor(u.x0)), static_cast<int>(std::floor(u.y0)),
              static_cast<int>(std::ceil(u.x1) - std::floor(u.x0)),
              static_cast<int>(std::ceil(u.y1) - std::floor(u.y0))};
  line.box = b;
  line.quad = Quad{Point{u.x0, u.y0}, Point{u.x1, u.y0}, Point{u.x1, u.y1}, Point{u.x0, u.y1}};
  return line;
}

}  // namespace

std::vector<TextLine> merge_text_lines(std::span<const Region> regions, const LineMergeOptions& options) {
  std::vector<Extent> extents(regions.size());
  std::vector<int> texts;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    if (regions[i].type != "text") continue;
    extents[i] = extent_of(regions[i]);
    texts.push_back(static_cast<int>(i));
  }
  std::vector<int> parent(regions.size());
  std::iota(parent.begin(), parent.end(), 0);
  for (std::size_t a = 0; a < texts.size(); ++a)
    for (std::size_t b = a + 1; b < texts.size(); ++b)
      if (same_line(extents[texts[a]], extents[texts[b]], options))
        parent[find(parent, texts[a])] = find(parent, texts[b]);

  std::vector<std::vector<int>> groups(regions.size());
  for (int i : texts) groups[find(parent, i)].push_back(i);
  std::vector<TextLine> lines;
  for (auto& words : groups) {
    if (words.empty()) continue;
    std::sort(words.begin(), words.end(), [&](int a, int b) { return extents[a].x0 < extents[b].x0; });
    TextLine line;
    line.region = line_region(regions, words, extents);
    line.words = std::move(words);
    lines.push_back(std::move(line));
  }
  // Reading order: by top edge; lines whose tops are within half the lower one's height of each
  // other are a row, read left to right.
  auto top = [](const TextLine& l) { return extent_of(l.region); };
  std::stable_sort(lines.begin(), lines.end(),
                   [&](const TextLine& a, const TextLine& b) { return top(a).y0 < top(b).y0; });
  for (std::size_t i = 1; i < lines.size(); ++i)
    for (std::size_t j = i; j > 0; --j) {
      const Extent a = top(lines[j - 1]), b = top(lines[j]);
      if (std::abs(a.y0 - b.y0) < 0.5f * std::min(a.height(), b.height()) && b.x0 < a.x0)
        std::swap(lines[j - 1], lines[j]);
      else
        break;
    }
  return lines;
}

}  // namespace weave::vision
