// Each track's reads kept across frames (core/track/track_results.h): a vote by summed scores,
// the best single read, or none; untracked reads untouched; old tracks forgotten.
#define BOOST_TEST_MODULE track_results
#include <boost/test/unit_test.hpp>

#include "core/track/track_results.h"

using weave::track::ResultHistory;
using weave::track::TrackResults;
using weave::vision::RowResult;

namespace {

RowResult text(const char* t, float score) {
  RowResult r;
  r.text = weave::vision::TextResult{t, score};
  return r;
}

RowResult label(const char* l, int id, float score) {
  RowResult r;
  r.classes.push_back(weave::vision::Classification{id, l, score});
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(vote_reports_the_read_with_the_highest_summed_score_on_every_frame) {
  TrackResults h(ResultHistory::vote);
  // "Door 6C" read more often, "Door 60" once with a higher score.
  BOOST_TEST(h.observe(7, text("Door 6C", 0.8f)).text->text == "Door 6C");
  h.end_frame();
  BOOST_TEST(h.observe(7, text("Door 60", 0.95f)).text->text == "Door 60");  // 0.95 > 0.8
  h.end_frame();
  const RowResult third = h.observe(7, text("Door 6C", 0.7f));  // 1.5 > 0.95
  BOOST_TEST(third.text->text == "Door 6C");
  BOOST_TEST(third.text->score == 0.75f, boost::test_tools::tolerance(1e-6f));  // mean of its reads
  h.end_frame();
  BOOST_TEST(h.current(7)->text->text == "Door 6C");
  BOOST_TEST(!h.current(8).has_value());
}

// A frame that read the track's text keeps its own per-character confidences; a frame whose read
// lost the vote reports the winner without them (they belong to another text).
BOOST_AUTO_TEST_CASE(vote_keeps_the_frames_character_confidences_only_for_the_same_text) {
  TrackResults h(ResultHistory::vote);
  RowResult first = text("ab", 0.9f);
  first.text->char_scores = {0.9f, 0.9f};
  BOOST_TEST((h.observe(3, first).text->char_scores == std::vector<float>{0.9f, 0.9f}));
  h.end_frame();
  RowResult other = text("a8", 0.5f);
  other.text->char_scores = {0.9f, 0.1f};
  const RowResult out = h.observe(3, other);
  BOOST_TEST(out.text->text == "ab");
  BOOST_TEST(out.text->char_scores.empty());
}

BOOST_AUTO_TEST_CASE(best_reports_the_single_highest_read) {
  TrackResults h(ResultHistory::best);
  (void)h.observe(1, text("Room", 0.9f));
  (void)h.observe(1, text("Ro0m", 0.6f));
  const RowResult r = h.observe(1, text("Ro0m", 0.6f));
  BOOST_TEST(r.text->text == "Room");
  BOOST_TEST(r.text->score == 0.9f);
}

BOOST_AUTO_TEST_CASE(classes_are_voted_by_label_and_other_fields_pass) {
  TrackResults h(ResultHistory::vote);
  (void)h.observe(3, label("car", 2, 0.6f));
  (void)h.observe(3, label("car", 2, 0.5f));
  RowResult truck = label("truck", 7, 0.9f);
  truck.angle = 180;
  const RowResult r = h.observe(3, truck);
  BOOST_TEST(r.classes.front().label == "car");
  BOOST_TEST(r.classes.front().class_id == 2);
  BOOST_TEST(r.angle.value_or(0) == 180);  // not part of the history
}

BOOST_AUTO_TEST_CASE(frame_mode_and_untracked_reads_are_untouched) {
  TrackResults frame(ResultHistory::frame);
  (void)frame.observe(1, text("A", 0.9f));
  BOOST_TEST(frame.observe(1, text("B", 0.1f)).text->text == "B");
  BOOST_TEST(frame.size() == 0u);
  TrackResults vote(ResultHistory::vote);
  (void)vote.observe(0, text("A", 0.9f));
  BOOST_TEST(vote.observe(0, text("B", 0.1f)).text->text == "B");  // track 0: none
}

BOOST_AUTO_TEST_CASE(tracks_unseen_for_long_are_forgotten) {
  TrackResults h(ResultHistory::vote, 5);
  (void)h.observe(1, text("A", 0.9f));
  for (int f = 0; f < 5; ++f) {
    h.end_frame();
    (void)h.observe(2, text("B", 0.9f));
  }
  BOOST_TEST(h.size() == 2u);
  h.end_frame();
  BOOST_TEST(h.size() == 1u);  // track 1 last seen 6 frames ago
  BOOST_TEST(!h.current(1).has_value());
}

// A track on every frame but read rarely (reclassify-interval longer than forget_after) keeps its
// history: being seen is enough.
BOOST_AUTO_TEST_CASE(a_live_track_read_rarely_keeps_its_history) {
  TrackResults h(ResultHistory::vote, 5);
  (void)h.observe(1, text("EXIT", 0.9f));
  for (int f = 0; f < 20; ++f) {
    h.end_frame();
    h.seen(1);
  }
  BOOST_TEST_REQUIRE(h.current(1).has_value());
  BOOST_TEST(h.current(1)->text->text == "EXIT");
}

// One frame as weavemeta hands it over: rows by region id, regions by track. A tracked read
// becomes the track's vote, an untracked read stays, a tracked region without a read gets a row.
BOOST_AUTO_TEST_CASE(apply_folds_a_frame_of_rows_into_their_tracks) {
  TrackResults h(ResultHistory::vote);
  std::vector<std::pair<int, RowResult>> first = {{0, text("EXIT", 0.9f)}};
  h.apply(first, {{0, 7}});
  std::vector<std::pair<int, RowResult>> second = {{0, text("EX1T", 0.5f)}, {1, text("free", 0.8f)}};
  h.apply(second, {{0, 7}, {2, 7}});
  BOOST_TEST_REQUIRE(second.size() == 3u);
  BOOST_TEST(second[0].second.text->text == "EXIT");  // 0.9 against 0.5
  BOOST_TEST(second[1].second.text->text == "free");  // region 1 has no track
  BOOST_TEST(second[2].first == 2);                   // tracked, not read: the track's result
  BOOST_TEST(second[2].second.text->text == "EXIT");
  TrackResults off(ResultHistory::frame);
  std::vector<std::pair<int, RowResult>> rows = {{0, text("A", 0.9f)}};
  off.apply(rows, {{0, 1}, {3, 1}});
  BOOST_TEST(rows.size() == 1u);
}
