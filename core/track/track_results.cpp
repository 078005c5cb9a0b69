#include "core/track/track_results.h"

#include <algorithm>

namespace weave::track {

namespace {

// The winning entry of a tally by the history's rule; end() for an empty tally.
template <class Map>
typename Map::const_iterator winner(const Map& m, ResultHistory mode) {
  auto better = [mode](const auto& a, const auto& b) {
    return mode == ResultHistory::best ? a.second.best < b.second.best : a.second.sum < b.second.sum;
  };
  return std::max_element(m.begin(), m.end(), better);
}

float score_of(const auto& tally, ResultHistory mode) {
  return mode == ResultHistory::best ? tally.best : static_cast<float>(tally.sum / std::max(tally.count, 1));
}

}  // namespace

vision::RowResult TrackResults::observe(std::uint64_t track, const vision::RowResult& row) {
  if (mode_ == ResultHistory::frame || track == 0) return row;
  History& h = tracks_[track];
  h.last_seen = frame_;
  auto add = [](Tally& t, float score) {
    t.sum += score;
    ++t.count;
    t.best = std::max(t.best, score);
  };
  if (row.text) add(h.texts[row.text->text], row.text->score);
  if (!row.classes.empty()) {
    Tally& t = h.labels[row.classes.front().label];
    add(t, row.classes.front().score);
    t.class_id = row.classes.front().class_id;
  }
  vision::RowResult out = row;
  if (auto now = current(track)) {
    if (row.text && now->text) {
      // The track's read, with this frame's per-character confidences when it read the same.
      std::vector<float> chars;
      if (now->text->text == row.text->text) chars = row.text->char_scores;
      out.text = vision::TextResult{now->text->text, now->text->score, std::move(chars)};
    }
    if (!row.classes.empty() && !now->classes.empty()) out.classes.front() = now->classes.front();
  }
  return out;
}

std::optional<vision::RowResult> TrackResults::current(std::uint64_t track) const {
  const auto it = tracks_.find(track);
  if (it == tracks_.end()) return std::nullopt;
  const History& h = it->second;
  vision::RowResult out;
  if (auto w = winner(h.texts, mode_); w != h.texts.end())
    out.text = vision::TextResult{w->first, score_of(w->second, mode_)};
  if (auto w = winner(h.labels, mode_); w != h.labels.end())
    out.classes.push_back(vision::Classification{w->second.class_id, w->first, score_of(w->second, mode_)});
  return out;
}

void TrackResults::seen(std::uint64_t track) {
  if (auto it = tracks_.find(track); it != tracks_.end()) it->second.last_seen = frame_;
}

void TrackResults::apply(std::vector<std::pair<int, vision::RowResult>>& rows,
                         std::unordered_map<int, std::uint64_t> track_of) {
  if (mode_ == ResultHistory::frame) return;
  for (auto& [id, row] : rows) {
    const auto t = track_of.find(id);
    if (t == track_of.end()) continue;
    row = observe(t->second, row);
    track_of.erase(t);
  }
  for (const auto& [id, track] : track_of) {
    seen(track);
    if (auto now = current(track)) rows.emplace_back(id, std::move(*now));
  }
  end_frame();
}

void TrackResults::end_frame() {
  ++frame_;
  std::erase_if(tracks_, [&](const auto& kv) { return frame_ - kv.second.last_seen > forget_after_; });
}

}  // namespace weave::track
