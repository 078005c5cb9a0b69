// Joining text boxes into lines (core/vision/text_lines.h) and the JSON of joined lines
// (weavemeta merge=line): which boxes join, in which order, with which text and score.
#define BOOST_TEST_MODULE vision_text_lines
#include <boost/test/unit_test.hpp>
#include <limits>
#include <string>
#include <vector>

#include "core/vision/json.h"
#include "core/vision/text_lines.h"

namespace wv = weave::vision;

namespace {

wv::Region word(int x, int y, int w, int h, const std::string& text, float score = 0.9f) {
  wv::Region r;
  r.type = "text";
  r.box = wv::Box{x, y, w, h};
  r.quad = wv::quad_of(r.box);
  r.score = 0.8f;
  r.text = wv::TextResult{text, score};
  return r;
}

std::vector<std::string> texts(const std::vector<wv::TextLine>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.region.text ? l.region.text->text : "<none>");
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(words_of_one_line_join_left_to_right_and_lines_come_in_reading_order) {
  // Listed out of order: the second line's words first, the right word before the left one.
  const std::vector<wv::Region> r = {word(280, 100, 50, 24, "12"), word(100, 100, 160, 24, "Word"),
                                     word(100, 20, 120, 30, "Title"), word(500, 22, 80, 28, "right")};
  const auto lines = wv::merge_text_lines(r);
  // "Title" and "right" are on one row but 280 px apart (more than 1.5 heights): two lines;
  // "Word" and "12" are 20 px apart, less than their height of 24.
  BOOST_TEST((texts(lines) == std::vector<std::string>{"Title", "right", "Word 12"}));
  BOOST_TEST((lines[2].words == std::vector<int>{1, 0}));
  const wv::Region& joined = lines[2].region;
  BOOST_TEST((joined.box == wv::Box{100, 100, 230, 24}));
  BOOST_TEST(joined.quad.has_value());
  // A one-word line is that region as it was.
  BOOST_TEST((lines[0].region.box == r[2].box));
  BOOST_TEST(lines[0].words.size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_line_score_weights_each_word_by_its_characters) {
  const std::vector<wv::Region> r = {word(0, 0, 100, 20, "abcd", 1.0f), word(110, 0, 20, 20, "x", 0.5f)};
  const auto lines = wv::merge_text_lines(r);
  BOOST_TEST_REQUIRE(lines.size() == 1u);
  BOOST_TEST(lines[0].region.text->text == "abcd x");
  BOOST_TEST(lines[0].region.text->score == 0.9f, boost::test_tools::tolerance(1e-6f));
  // Multi-byte characters count once each: "é" (2 bytes) weighs as much as "x".
  const std::vector<wv::Region> u = {word(0, 0, 20, 20, "\xc3\xa9", 1.0f), word(25, 0, 20, 20, "x", 0.5f)};
  BOOST_TEST(wv::merge_text_lines(u)[0].region.text->score == 0.75f, boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(boxes_too_far_apart_offset_or_of_other_heights_stay_apart) {
  wv::LineMergeOptions o;
  // Gap of 30 px between boxes 20 high: joined at max_gap 1.5 (30 px, the default), not at 1.0.
  std::vector<wv::Region> r = {word(0, 0, 50, 20, "a"), word(80, 0, 50, 20, "b")};
  BOOST_TEST(wv::merge_text_lines(r, o).size() == 1u);
  o.max_gap = 1.0f;
  BOOST_TEST(wv::merge_text_lines(r, o).size() == 2u);
  r[1].box.x = 81;  // 31 px: beyond the default too
  r[1].quad = wv::quad_of(r[1].box);
  BOOST_TEST(wv::merge_text_lines(r, {}).size() == 2u);
  o = {};
  // Vertically offset by 12 of 20 px: overlap 8 < half the height.
  r = {word(0, 0, 50, 20, "a"), word(55, 12, 50, 20, "b")};
  BOOST_TEST(wv::merge_text_lines(r, o).size() == 2u);
  // Offset by 8: overlap 12, joined.
  r = {word(0, 0, 50, 20, "a"), word(55, 8, 50, 20, "b")};
  BOOST_TEST(wv::merge_text_lines(r, o).size() == 1u);
  // A title 40 high next to a caption 16 high: height ratio 2.5 > 1.8.
  r = {word(0, 0, 200, 40, "Title"), word(205, 10, 60, 16, "small")};
  BOOST_TEST(wv::merge_text_lines(r, o).size() == 2u);
}

BOOST_AUTO_TEST_CASE(steep_turned_and_non_text_regions_are_not_joined) {
  std::vector<wv::Region> r = {word(0, 0, 50, 20, "a"), word(55, 0, 50, 20, "b")};
  // The second box's top edge rises 20 px over 50: 22 degrees.
  r[1].quad = wv::Quad{wv::Point{55, 20}, wv::Point{105, 0}, wv::Point{105, 20}, wv::Point{55, 40}};
  BOOST_TEST(wv::merge_text_lines(r).size() == 2u);
  r = {word(0, 0, 50, 20, "a"), word(55, 0, 50, 20, "b")};
  r[1].angle = 180;  // read turned over: its words run right to left on the frame
  BOOST_TEST(wv::merge_text_lines(r).size() == 2u);
  r[1].angle = 0;
  BOOST_TEST(wv::merge_text_lines(r).size() == 1u);
  r[1].type = "car";  // only text regions are looked at
  const auto lines = wv::merge_text_lines(r);
  BOOST_TEST_REQUIRE(lines.size() == 1u);
  BOOST_TEST((lines[0].words == std::vector<int>{0}));
  BOOST_TEST(wv::merge_text_lines({}).empty());
}

BOOST_AUTO_TEST_CASE(joining_is_transitive_along_a_line) {
  // a-b and b-c are close, a-c far: one line of three.
  const std::vector<wv::Region> r = {word(0, 0, 40, 20, "one"), word(50, 0, 40, 20, "two"),
                                     word(100, 0, 40, 20, "three")};
  const auto lines = wv::merge_text_lines(r);
  BOOST_TEST_REQUIRE(lines.size() == 1u);
  BOOST_TEST(lines[0].region.text->text == "one two three");
}

BOOST_AUTO_TEST_CASE(json_lines_of_joined_boxes_list_their_words) {
  std::vector<wv::Region> r = {word(60, 0, 30, 20, "12", 0.5f), word(0, 0, 50, 20, "Word", 1.0f),
                               word(0, 100, 50, 20, "alone", 0.75f)};
  r[0].track = wv::TrackTag{7, 3, false};
  wv::RegionKeys keys;
  keys.texts = true;
  const std::string plain = wv::regions_json_line(40, r, keys);
  BOOST_TEST(plain.find("\"words\"") == std::string::npos);
  BOOST_TEST(plain.find("\"text\":\"12\"") < plain.find("\"text\":\"Word\""));  // as given
  keys.lines = wv::LineMergeOptions{};
  const std::string merged = wv::regions_json_line(40, r, keys);
  BOOST_TEST(merged ==
                 "{\"pts\":40,\"texts\":[{\"text\":\"Word 12\",\"score\":0.8333333,"
                 "\"box\":[[0,0],[90,0],[90,20],[0,20]],\"words\":["
                 "{\"text\":\"Word\",\"score\":1,\"box\":[[0,0],[50,0],[50,20],[0,20]]},"
                 "{\"text\":\"12\",\"score\":0.5,\"box\":[[60,0],[90,0],[90,20],[60,20]],\"track\":7}]},"
                 "{\"text\":\"alone\",\"score\":0.75,\"box\":[[0,100],[50,100],[50,120],[0,120]]}]}",
             merged);
}

// Corners from an upstream meta may be anything: a NaN or a huge corner is never joined (nor
// turned into an int), and the others still are.
BOOST_AUTO_TEST_CASE(boxes_with_corners_that_are_not_finite_stay_alone) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<wv::Region> r = {word(0, 0, 50, 20, "a"), word(55, 0, 50, 20, "b"), word(110, 0, 50, 20, "c")};
  (*r[1].quad)[0].y = nan;
  auto lines = wv::merge_text_lines(r);
  BOOST_TEST(lines.size() == 3u);  // b alone; a and c are 60 px apart
  (*r[1].quad)[0] = wv::Point{1e30f, 0};
  lines = wv::merge_text_lines(r);
  BOOST_TEST(lines.size() == 3u);
  BOOST_TEST((lines.back().words == std::vector<int>{1}));  // the one not finite comes last
  r[1] = word(55, 0, 50, 20, "b");
  BOOST_TEST(wv::merge_text_lines(r).size() == 1u);
}

// A box up to 1.8 times taller than two close rows overlaps both by half: it joins the row whose
// centre is nearer, and never chains the two rows into one line of interleaved words. (B1 and B2
// are too far apart to join without it.)
BOOST_AUTO_TEST_CASE(a_tall_box_touching_two_rows_does_not_chain_them) {
  const std::vector<wv::Region> r = {word(0, 0, 40, 20, "A1"), word(0, 22, 40, 20, "B1"),
                                     word(50, 2, 40, 34, "T"), word(100, 0, 40, 20, "A2"),
                                     word(100, 22, 40, 20, "B2")};
  BOOST_TEST((texts(wv::merge_text_lines(r)) == std::vector<std::string>{"A1 T A2", "B1", "B2"}));
}

BOOST_AUTO_TEST_CASE(columns_of_vertical_text_are_not_joined_but_a_lone_narrow_character_is) {
  // Two columns 20 wide and 80 high side by side.
  std::vector<wv::Region> r = {word(0, 0, 20, 80, "abcd"), word(25, 0, 20, 80, "efgh")};
  BOOST_TEST(wv::merge_text_lines(r).size() == 2u);
  // "Aisle" and a "7" whose box is 10 wide and 20 high.
  r = {word(0, 0, 60, 20, "Aisle"), word(70, 0, 10, 20, "7")};
  const auto lines = wv::merge_text_lines(r);
  BOOST_TEST_REQUIRE(lines.size() == 1u);
  BOOST_TEST(lines[0].region.text->text == "Aisle 7");
}

BOOST_AUTO_TEST_CASE(a_long_tilted_line_joins_by_its_own_height) {
  // 400 px long, rising 5 degrees (35 px): its bounds are 55 high, its text 20.
  std::vector<wv::Region> r = {word(0, 0, 400, 20, "long words here"), word(410, 0, 40, 20, "end")};
  r[0].quad = wv::Quad{wv::Point{0, 35}, wv::Point{400, 0}, wv::Point{400, 20}, wv::Point{0, 55}};
  r[1].quad = wv::Quad{wv::Point{410, 0}, wv::Point{450, -3}, wv::Point{450, 17}, wv::Point{410, 20}};
  const auto lines = wv::merge_text_lines(r);
  BOOST_TEST_REQUIRE(lines.size() == 1u);
  BOOST_TEST(lines[0].region.text->text == "long words here end");
}
