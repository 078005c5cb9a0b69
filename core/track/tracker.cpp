#include "core/track/tracker.h"

#include <algorithm>
#include <limits>

#include "core/track/assignment.h"

namespace weave::track {

namespace {

// `b` grown by `share` of its width and height on each side.
vision::Box grown(const vision::Box& b, double share) {
  // In 64 bits and clamped: boxes from metas reach 2^30 a side, and twice that overflows an int.
  const auto dx = static_cast<int64_t>(b.width * share), dy = static_cast<int64_t>(b.height * share);
  auto fit = [](int64_t v) {
    return static_cast<int>(std::clamp<int64_t>(v, -(int64_t{1} << 30), int64_t{1} << 30));
  };
  return vision::Box{fit(b.x - dx), fit(b.y - dy), fit(b.width + 2 * dx), fit(b.height + 2 * dy)};
}

// Matches tracks[ti] to detections[di] (the index lists say which take part) by 1 - IoU below
// 1 - min_iou; returns the pairs as (track index, detection index).
std::vector<std::pair<std::size_t, std::size_t>> match(const std::vector<Track>& tracks,
                                                       const std::vector<std::size_t>& ti,
                                                       std::span<const Detection> detections,
                                                       const std::vector<std::size_t>& di, double min_iou,
                                                       bool class_aware, double buffer = 0.0) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  if (ti.empty() || di.empty()) return pairs;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> cost(ti.size() * di.size(), inf);
  for (std::size_t r = 0; r < ti.size(); ++r)
    for (std::size_t c = 0; c < di.size(); ++c) {
      const Track& t = tracks[ti[r]];
      const Detection& d = detections[di[c]];
      if (class_aware && t.kind != d.kind) continue;
      const double grow = std::min(1.0, buffer * t.since_match);
      const double overlap =
          grow > 0.0 ? vision::iou(grown(t.box, grow), grown(d.box, grow)) : vision::iou(t.box, d.box);
      if (overlap >= min_iou && overlap > 0.0) cost[r * di.size() + c] = 1.0 - overlap;
    }
  // A tiny margin so a pair at exactly min_iou is still worth more than leaving both out.
  const Assignment a = assign(cost, ti.size(), di.size(), 1.0 - min_iou + 1e-9);
  for (std::size_t r = 0; r < ti.size(); ++r)
    if (a.row_to_col[r] >= 0) pairs.emplace_back(ti[r], di[static_cast<std::size_t>(a.row_to_col[r])]);
  return pairs;
}

}  // namespace

Tracker::Tracker(TrackerSettings settings)
    : settings_(settings), next_(settings.first_id == 0 ? 1 : settings.first_id) {
  settings_.birth_hits = std::max(settings_.birth_hits, 1);
  settings_.max_misses = std::max(settings_.max_misses, 0);
}

std::uint64_t Tracker::next_id() {
  const std::uint64_t id = next_;
  next_ = next_ == std::numeric_limits<std::uint64_t>::max() ? 1 : next_ + 1;
  ++issued_;
  return id;
}

std::size_t Tracker::confirmed() const {
  return static_cast<std::size_t>(
      std::count_if(tracks_.begin(), tracks_.end(), [](const Track& t) { return t.id != 0; }));
}

void Tracker::coast() {
  for (Track& t : tracks_) {
    t.box = t.filter.predict();
    ++t.age;
    ++t.since_match;
  }
}

std::vector<Match> Tracker::update(std::span<const Detection> detections) {
  const TrackerSettings& s = settings_;
  std::vector<Match> out(detections.size());
  // Was each track seen on the frame before? (The second stage is for those only.)
  std::vector<char> seen_before(tracks_.size());
  for (std::size_t i = 0; i < tracks_.size(); ++i) {
    seen_before[i] = tracks_[i].misses == 0;
    tracks_[i].box = tracks_[i].filter.predict();
    ++tracks_[i].age;
    ++tracks_[i].since_match;
  }

  std::vector<std::size_t> high, low;
  for (std::size_t i = 0; i < detections.size(); ++i) {
    if (detections[i].box.empty()) continue;
    if (detections[i].score >= s.high_score)
      high.push_back(i);
    else if (detections[i].score >= s.low_score)
      low.push_back(i);
  }
  std::vector<char> track_matched(tracks_.size(), 0), det_used(detections.size(), 0);
  auto apply = [&](const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
    for (auto [t, d] : pairs) {
      track_matched[t] = 1;
      det_used[d] = 1;
      Track& tr = tracks_[t];
      tr.box = tr.filter.correct(detections[d].box);
      tr.score = detections[d].score;
      ++tr.hits;
      ++tr.streak;
      tr.misses = 0;
      tr.since_match = 0;
      if (tr.id == 0 && tr.streak >= s.birth_hits) tr.id = next_id();
      out[d] = Match{tr.id, tr.age, tr.serial};
    }
  };
  auto unmatched_tracks = [&](auto&& want) {
    std::vector<std::size_t> v;
    for (std::size_t i = 0; i < tracks_.size(); ++i)
      if (!track_matched[i] && want(i)) v.push_back(i);
    return v;
  };
  auto unused = [&](const std::vector<std::size_t>& dets) {
    std::vector<std::size_t> v;
    for (std::size_t d : dets)
      if (!det_used[d]) v.push_back(d);
    return v;
  };

  // 1. Strong detections to confirmed tracks, seen lately or not.
  apply(match(tracks_, unmatched_tracks([&](std::size_t i) { return tracks_[i].id != 0; }), detections, high,
              s.min_iou, s.class_aware));
  // 2. Weak detections to the confirmed tracks still unmatched that were seen on the last frame.
  apply(match(tracks_, unmatched_tracks([&](std::size_t i) { return tracks_[i].id != 0 && seen_before[i]; }),
              detections, low, s.low_min_iou, s.class_aware));
  // 3. Strong detections left to tentative tracks.
  apply(match(tracks_, unmatched_tracks([&](std::size_t i) { return tracks_[i].id == 0; }), detections,
              unused(high), s.min_iou, s.class_aware));
  // 4. Whatever is left, with boxes grown by the frames since each track's last match.
  if (s.buffer > 0.0)
    apply(match(tracks_, unmatched_tracks([](std::size_t) { return true; }), detections, unused(high),
                s.min_iou, s.class_aware, s.buffer));

  std::vector<Track> kept;
  kept.reserve(tracks_.size() + high.size());
  for (std::size_t t = 0; t < tracks_.size(); ++t) {
    Track& tr = tracks_[t];
    if (!track_matched[t]) {
      tr.streak = 0;
      ++tr.misses;
      if (tr.id == 0 || tr.misses > s.max_misses) continue;
    }
    kept.push_back(std::move(tr));
  }
  tracks_ = std::move(kept);
  for (std::size_t d : unused(high)) {
    const Detection& det = detections[d];
    Track t{.id = 0,
            .serial = ++serial_,
            .kind = det.kind,
            .box = det.box,
            .hits = 1,
            .streak = 1,
            .score = det.score,
            .filter = BoxKalman(det.box)};
    if (s.birth_hits <= 1) t.id = next_id();
    out[d] = Match{t.id, 0, t.serial};
    tracks_.push_back(std::move(t));
  }
  return out;
}

}  // namespace weave::track
