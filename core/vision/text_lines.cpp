#include "core/vision/text_lines.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "core/vision/image.h"

namespace weave::vision {

namespace {

struct Extent {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // axis-aligned, frame pixels
  float height = 0;                      // the text's own height (a tilted box's, not its bounds')
  float slope = 0;                       // degrees of the top edge from horizontal
  bool finite = false;                   // every corner finite and within kMaxImageSide
  bool joinable = false;                 // finite, upright, not a column of vertical text
};

float distance(const Point& a, const Point& b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

std::size_t utf8_length(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

Extent extent_of(const Region& r) {
  const Quad q = r.quad ? *r.quad : quad_of(r.box);
  Extent e;
  // Corners come from upstream metas: anything not finite and within a frame is never joined
  // (and never converted to int).
  const float limit = static_cast<float>(kMaxImageSide);
  for (const Point& p : q)
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || std::abs(p.x) > limit || std::abs(p.y) > limit)
      return e;
  e.finite = true;
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
  const float width = 0.5f * (distance(q[0], q[1]) + distance(q[3], q[2]));
  e.height = 0.5f * (distance(q[0], q[3]) + distance(q[1], q[2]));
  // Turned over, or a column of vertical text (cut and turned as such by crops.h: 1.5 times
  // taller than wide; a lone character may be that narrow and still joins).
  const bool turned = r.angle && *r.angle != 0;
  const bool column = e.height >= 1.5f * width && (!r.text || utf8_length(r.text->text) > 1);
  e.joinable = e.height > 0 && width > 0 && !turned && !column;
  return e;
}

// Whether two boxes sit on one row: upright, of similar heights, overlapping vertically.
bool same_row(const Extent& a, const Extent& b, const LineMergeOptions& o) {
  if (std::abs(a.slope) > o.max_slope_degrees || std::abs(b.slope) > o.max_slope_degrees) return false;
  const float low = std::min(a.height, b.height), high = std::max(a.height, b.height);
  if (high > o.max_height_ratio * low) return false;
  const float overlap = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  return overlap >= o.min_overlap * std::min(a.y1 - a.y0, b.y1 - b.y0);
}

struct Group {
  std::vector<int> words;
  float x1 = 0;      // right edge so far
  float height = 0;  // the tallest word's
  float centre = 0;  // mean vertical centre of the words
};

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
  // Joined words are finite and within kMaxImageSide (extent_of): the conversions are safe.
  line.box = Box{static_cast<int>(std::floor(u.x0)), static_cast<int>(std::floor(u.y0)),
                 static_cast<int>(std::ceil(u.x1) - std::floor(u.x0)),
                 static_cast<int>(std::ceil(u.y1) - std::floor(u.y0))};
  line.quad = Quad{Point{u.x0, u.y0}, Point{u.x1, u.y0}, Point{u.x1, u.y1}, Point{u.x0, u.y1}};
  return line;
}

}  // namespace

std::vector<TextLine> merge_text_lines(std::span<const Region> regions, const LineMergeOptions& options) {
  std::vector<Extent> extents(regions.size());
  std::vector<int> joinable, alone;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    if (regions[i].type != "text") continue;
    extents[i] = extent_of(regions[i]);
    (extents[i].joinable ? joinable : alone).push_back(static_cast<int>(i));
  }
  // Left to right, each box joins the line it continues: on the row of every word already on it
  // (so a tall box touching two close rows cannot chain them into one), within the gap of its
  // right end; of several, the one whose centre is nearest. Else it starts a line.
  std::stable_sort(joinable.begin(), joinable.end(),
                   [&](int a, int b) { return extents[a].x0 < extents[b].x0; });
  std::vector<Group> groups;
  for (int i : joinable) {
    const Extent& e = extents[i];
    const float centre = 0.5f * (e.y0 + e.y1);
    int best = -1;
    float best_distance = std::numeric_limits<float>::infinity();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const Group& group = groups[g];
      if (e.x0 - group.x1 > options.max_gap * std::max(group.height, e.height)) continue;
      const bool row = std::all_of(group.words.begin(), group.words.end(),
                                   [&](int w) { return same_row(extents[w], e, options); });
      if (!row) continue;
      if (const float d = std::abs(centre - group.centre); d < best_distance) {
        best_distance = d;
        best = static_cast<int>(g);
      }
    }
    if (best < 0) {
      groups.push_back(Group{{i}, e.x1, e.height, centre});
      continue;
    }
    Group& group = groups[static_cast<std::size_t>(best)];
    const auto n = static_cast<float>(group.words.size());
    group.centre = (group.centre * n + centre) / (n + 1);
    group.words.push_back(i);
    group.x1 = std::max(group.x1, e.x1);
    group.height = std::max(group.height, e.height);
  }
  for (int i : alone) groups.push_back(Group{{i}, 0, 0, 0});

  std::vector<std::pair<Extent, TextLine>> built;  // each line with its extent, measured once
  built.reserve(groups.size());
  for (Group& g : groups) {
    TextLine line;
    line.region = line_region(regions, g.words, extents);
    line.words = std::move(g.words);
    const Extent e = extent_of(line.region);
    built.emplace_back(e, std::move(line));
  }
  // Reading order: by top edge; lines whose tops are within half the lower one's height of each
  // other are a row, read left to right. Boxes that are not finite go last, as they came.
  std::stable_sort(built.begin(), built.end(), [](const auto& a, const auto& b) {
    const Extent &ea = a.first, &eb = b.first;
    if (ea.finite != eb.finite || !ea.finite) return ea.finite && !eb.finite;
    return ea.y0 < eb.y0;
  });
  for (std::size_t i = 1; i < built.size(); ++i)
    for (std::size_t j = i; j > 0; --j) {
      const Extent &a = built[j - 1].first, &b = built[j].first;
      if (a.finite && b.finite && std::abs(a.y0 - b.y0) < 0.5f * std::min(a.y1 - a.y0, b.y1 - b.y0) &&
          b.x0 < a.x0)
        std::swap(built[j - 1], built[j]);
      else
        break;
    }
  std::vector<TextLine> lines;
  lines.reserve(built.size());
  for (auto& [e, line] : built) lines.push_back(std::move(line));
  return lines;
}

}  // namespace weave::vision
