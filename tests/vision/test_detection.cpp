// Detection decodings without GStreamer: region geometry, the DB text-box post-process on
// synthetic probability maps, YOLO/YOLOv8/SSD boxes with NMS, and the registry's modes.
#define BOOST_TEST_MODULE vision_detection
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "core/vision/box_detection.h"
#include "core/vision/decoder.h"
#include "core/vision/regions.h"
#include "core/vision/text_detection.h"

namespace wv = weave::vision;
using weave::Dims;
using weave::DType;

namespace {

// A probability map of h x w with `value` inside each rectangle (x, y, w, h) and 0.01 elsewhere.
std::vector<float> map_with(int w, int h, const std::vector<wv::Box>& boxes, float value = 0.95f) {
  std::vector<float> m(static_cast<std::size_t>(w) * h, 0.01f);
  for (const wv::Box& b : boxes)
    for (int y = b.y; y < b.y + b.height; ++y)
      for (int x = b.x; x < b.x + b.width; ++x) m[static_cast<std::size_t>(y) * w + x] = value;
  return m;
}

wv::Letterbox identity() {
  return wv::Letterbox{};
}

}  // namespace

BOOST_AUTO_TEST_CASE(box_geometry_clips_and_overlaps) {
  BOOST_TEST((wv::clip(wv::Box{-5, -5, 20, 20}, 10, 10) == wv::Box{0, 0, 10, 10}));
  BOOST_TEST(wv::clip(wv::Box{20, 0, 5, 5}, 10, 10).empty());
  BOOST_TEST((wv::clip(wv::Box{2147483000, 0, 2147483000, 5}, 10, 10).empty()));  // no overflow
  BOOST_TEST(wv::iou(wv::Box{0, 0, 10, 10}, wv::Box{0, 0, 10, 10}) == 1.0);
  BOOST_TEST(std::abs(wv::iou(wv::Box{0, 0, 10, 10}, wv::Box{5, 0, 10, 10}) - 1.0 / 3) < 1e-9);
  BOOST_TEST(wv::iou(wv::Box{0, 0, 0, 10}, wv::Box{0, 0, 10, 10}) == 0.0);
  const wv::Quad q{wv::Point{-3.5f, 2.2f}, wv::Point{8.1f, 1.0f}, wv::Point{9.0f, 6.0f},
                   wv::Point{-2.0f, 7.9f}};
  BOOST_TEST((wv::bounding_box(q, 8, 100) == wv::Box{0, 1, 8, 7}));
  const float inf = std::numeric_limits<float>::infinity();
  BOOST_TEST(wv::bounding_box(wv::Quad{wv::Point{inf, 0}, {}, {}, {}}, 8, 8).empty());
  wv::Letterbox g;
  g.scale_x = 0.5;
  g.scale_y = 2.0;
  g.offset_x = 10;
  const wv::Point p = wv::to_frame(wv::Point{20, 8}, g);
  BOOST_TEST(p.x == 20.0f);
  BOOST_TEST(p.y == 4.0f);
}

BOOST_AUTO_TEST_CASE(db_finds_each_text_block_grown_back_and_in_reading_order) {
  const int w = 200, h = 100;
  // Two "lines" on one row (right one first in memory order) and one below.
  auto m = map_with(w, h, {{120, 20, 60, 10}, {20, 20, 80, 10}, {30, 60, 100, 12}});
  auto r = wv::decode_text_boxes({m.data(), DType::float32, Dims{1, 1, h, w}}, {}, identity(), w, h);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST_REQUIRE(r->size() == 3u);
  const auto& a = (*r)[0];
  BOOST_TEST(a.type == "text");
  BOOST_TEST(a.quad.has_value());
  BOOST_TEST(a.score > 0.9f);
  // Grown by area * 1.5 / perimeter = 80*10*1.5/180 = 6.7 px on each side (the contour of a
  // 80x10 block spans 79x9 pixels).
  BOOST_TEST(a.box.x >= 12);
  BOOST_TEST(a.box.x <= 14);
  BOOST_TEST(a.box.width >= 91);
  BOOST_TEST(a.box.width <= 95);
  BOOST_TEST(a.box.y >= 12);
  BOOST_TEST(a.box.height >= 21);
  BOOST_TEST((*r)[1].box.x > 100);  // same line, to the right
  BOOST_TEST((*r)[2].box.y > 40);   // the next line
  // Corners clockwise from the top-left.
  const wv::Quad& q = *a.quad;
  BOOST_TEST(q[0].x < q[1].x);
  BOOST_TEST(q[1].y < q[2].y);
  BOOST_TEST(q[3].x < q[2].x);
}

BOOST_AUTO_TEST_CASE(db_maps_to_the_frame_and_clips_at_the_border) {
  const int w = 64, h = 32;
  auto m = map_with(w, h, {{0, 0, 40, 8}});  // touches the map's corner
  wv::Letterbox g;
  g.scale_x = 0.5;  // the frame was twice as large
  g.scale_y = 0.5;
  auto r = wv::decode_text_boxes({m.data(), DType::float32, Dims{h, w}}, {}, g, 128, 64);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST_REQUIRE(r->size() == 1u);
  const wv::Region& t = (*r)[0];
  BOOST_TEST(t.box.x == 0);  // grown past the border, clipped to it
  BOOST_TEST(t.box.y == 0);
  BOOST_TEST(t.box.width > 80);
  BOOST_TEST(t.box.width <= 128);
  for (const wv::Point& p : *t.quad) {
    BOOST_TEST(p.x >= 0.0f);
    BOOST_TEST(p.y >= 0.0f);
    BOOST_TEST(p.x <= 128.0f);
    BOOST_TEST(p.y <= 64.0f);
  }
}

BOOST_AUTO_TEST_CASE(db_drops_faint_tiny_and_empty_maps) {
  const int w = 100, h = 50;
  auto faint = map_with(w, h, {{10, 10, 50, 10}}, 0.5f);  // above the pixel, below the box threshold
  auto r = wv::decode_text_boxes({faint.data(), DType::float32, Dims{1, 1, h, w}}, {}, identity(), w, h);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->empty());
  auto tiny = map_with(w, h, {{10, 10, 2, 2}});
  r = wv::decode_text_boxes({tiny.data(), DType::float32, Dims{1, 1, h, w}}, {}, identity(), w, h);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->empty());
  std::vector<float> none(static_cast<std::size_t>(w) * h, 0.0f);
  r = wv::decode_text_boxes({none.data(), DType::float32, Dims{1, 1, h, w}}, {}, identity(), w, h);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->empty());
  // Bad input is an error, not a crash.
  BOOST_TEST(!wv::check_text_map(DType::float32, Dims{2, 1, h, w}).ok());
  BOOST_TEST(!wv::check_text_map(DType::int32, Dims{1, 1, h, w}).ok());
  BOOST_TEST(
      !wv::decode_text_boxes({none.data(), DType::float32, Dims{1, 1, h, w}}, {}, identity(), 0, h).ok());
  BOOST_TEST(!wv::decode_text_boxes({nullptr, DType::float32, Dims{1, 1, h, w}}, {}, identity(), w, h).ok());
}

// score-mode: an L-shaped text region fills under a third of its rotated rectangle. Measured in
// the rectangle (fast) it falls below box-threshold; measured in its own outline (slow) it is kept.
BOOST_AUTO_TEST_CASE(db_slow_score_mode_measures_inside_the_region_outline) {
  const int w = 120, h = 80;
  auto m = map_with(w, h, {{20, 20, 60, 8}, {20, 28, 8, 32}});
  const weave::ConstTensorView map{m.data(), DType::float32, Dims{1, 1, h, w}};
  wv::TextDetectionOptions o;
  auto fast = wv::decode_text_boxes(map, o, identity(), w, h);
  BOOST_TEST_REQUIRE(fast.ok());
  BOOST_TEST(fast->empty());
  o.score_mode = wv::TextDetectionOptions::ScoreMode::slow;
  auto slow = wv::decode_text_boxes(map, o, identity(), w, h);
  BOOST_TEST_REQUIRE(slow.ok());
  BOOST_TEST_REQUIRE(slow->size() == 1u);
  BOOST_TEST((*slow)[0].score > 0.9f);
  // A solid block scores the same either way.
  auto block = map_with(w, h, {{20, 20, 60, 12}});
  const weave::ConstTensorView solid{block.data(), DType::float32, Dims{1, 1, h, w}};
  auto a = wv::decode_text_boxes(solid, o, identity(), w, h);
  o.score_mode = wv::TextDetectionOptions::ScoreMode::fast;
  auto b = wv::decode_text_boxes(solid, o, identity(), w, h);
  BOOST_TEST_REQUIRE((a.ok() && b.ok() && a->size() == 1u && b->size() == 1u));
  BOOST_TEST(std::abs((*a)[0].score - (*b)[0].score) < 0.02f);
}

BOOST_AUTO_TEST_CASE(nms_keeps_the_best_of_overlapping_boxes_per_class) {
  std::vector<wv::Candidate> c = {
      {0, 0, 10, 10, 0.8f, 0},
      {1, 1, 11, 11, 0.9f, 0},  // overlap: the 0.9 one stays
      {1, 1, 11, 11, 0.7f, 1},  // another class: stays
      {50, 50, 60, 60, 0.6f, 0},
  };
  auto kept = wv::non_max_suppression(c, 0.5f, 100, false);
  BOOST_TEST(kept == (std::vector<int>{1, 2, 3}));
  kept = wv::non_max_suppression(c, 0.5f, 100, true);  // across classes
  BOOST_TEST(kept == (std::vector<int>{1, 3}));
  kept = wv::non_max_suppression(c, 0.5f, 1, false);
  BOOST_TEST(kept == std::vector<int>{1});
  // Class ids are whatever the model says: -1 and a huge id are classes of their own.
  const std::vector<wv::Candidate> odd = {
      {0, 0, 10, 10, 0.9f, -1}, {0, 0, 10, 10, 0.8f, 0}, {0, 0, 10, 10, 0.7f, 1 << 30}};
  BOOST_TEST(wv::non_max_suppression(odd, 0.5f, 100, false) == (std::vector<int>{0, 1, 2}));
  // An SSD label no int holds is skipped, not cast.
  const std::vector<float> ssd = {0, 1e12f, 0.9f, 0, 0, 1, 1, 0, NAN, 0.9f, 0, 0, 1, 1};
  auto r = wv::decode_boxes(wv::BoxFormat::ssd, {ssd.data(), DType::float32, Dims{1, 1, 2, 7}}, {}, {}, 10,
                            10, wv::Letterbox{}, 10, 10);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->empty());
}

BOOST_AUTO_TEST_CASE(yolo_rows_become_labelled_regions_on_the_frame) {
  // <1,3,5+2>: cx, cy, w, h, objectness, class scores.
  const std::vector<float> t = {
      20, 20, 10, 10, 0.9f, 0.1f, 0.9f,  // class 1, score 0.81
      21, 21, 10, 10, 0.8f, 0.1f, 0.9f,  // same object, suppressed
      60, 30, 20, 8,  0.1f, 0.9f, 0.1f,  // score 0.09: below the threshold
  };
  const std::vector<std::string> labels = {"cat", "dog"};
  wv::Letterbox g;
  g.scale_x = g.scale_y = 0.5;  // the input is half the frame
  auto r = wv::decode_boxes(wv::BoxFormat::yolo, {t.data(), DType::float32, Dims{1, 3, 7}}, {}, labels, 80,
                            40, g, 160, 80);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST_REQUIRE(r->size() == 1u);
  BOOST_TEST((*r)[0].label == "dog");
  BOOST_TEST((*r)[0].type == "dog");
  BOOST_TEST((*r)[0].class_id == 1);
  BOOST_TEST(std::abs((*r)[0].score - 0.81f) < 1e-5f);
  BOOST_TEST(((*r)[0].box == wv::Box{30, 30, 20, 20}));
}

BOOST_AUTO_TEST_CASE(yolov8_columns_and_ssd_rows) {
  // <1,4+2,2>: two candidates as columns.
  const std::vector<float> v8 = {
      10,   50,    // cx
      10,   20,    // cy
      4,    10,    // w
      4,    10,    // h
      0.2f, 0.7f,  // class 0
      0.6f, 0.1f,  // class 1
  };
  auto r = wv::decode_boxes(wv::BoxFormat::yolov8, {v8.data(), DType::float32, Dims{1, 6, 2}}, {}, {}, 64, 64,
                            wv::Letterbox{}, 64, 64);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST_REQUIRE(r->size() == 2u);
  BOOST_TEST((*r)[0].class_id == 0);  // 0.7 first
  BOOST_TEST((*r)[0].label == "0");
  BOOST_TEST(((*r)[1].box == wv::Box{8, 8, 4, 4}));
  // SSD: normalized corners; image_id -1 ends the list.
  const std::vector<float> ssd = {
      0,  3, 0.9f,  0.25f, 0.5f, 0.75f, 1.0f,  //
      -1, 0, 0,     0,     0,    0,     0,     //
      0,  3, 0.95f, 0,     0,    1,     1,     // after the end: ignored
  };
  r = wv::decode_boxes(wv::BoxFormat::ssd, {ssd.data(), DType::float32, Dims{1, 1, 3, 7}}, {}, {}, 100, 50,
                       wv::Letterbox{}, 100, 50);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST_REQUIRE(r->size() == 1u);
  BOOST_TEST(((*r)[0].box == wv::Box{25, 25, 50, 25}));
  BOOST_TEST((*r)[0].class_id == 3);
  // Wrong layouts are refused with the expected shape in the message.
  auto bad = wv::check_box_tensor(wv::BoxFormat::ssd, DType::float32, Dims{1, 3, 7});
  BOOST_TEST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.message().find("<1,1,N,7>") != std::string::npos, bad.message());
  BOOST_TEST(!wv::check_box_tensor(wv::BoxFormat::yolo, DType::float32, Dims{1, 3, 5}).ok());
}

BOOST_AUTO_TEST_CASE(registry_modes_need_what_they_need) {
  auto& reg = wv::DecoderRegistry::global();
  auto db = reg.make("db", {});
  BOOST_TEST_REQUIRE(db.ok());
  BOOST_TEST((*db)->finds_regions());
  BOOST_TEST(!(*db)->per_row());
  const int w = 40, h = 20;
  auto m = map_with(w, h, {{5, 5, 20, 6}});
  // Without the frame's size there is nothing to map regions onto.
  auto r = (*db)->decode({m.data(), DType::float32, Dims{1, 1, h, w}});
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("frame size is unknown") != std::string::npos, r.message());
  wv::DecodeContext ctx;
  ctx.frame_width = 80;  // no geometry: the map is stretched over the frame
  ctx.frame_height = 40;
  r = (*db)->decode({m.data(), DType::float32, Dims{1, 1, h, w}}, ctx);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST_REQUIRE(r->regions.size() == 1u);
  BOOST_TEST(r->regions[0].box.x < 10);
  BOOST_TEST(r->regions[0].box.width > 40);

  // angle: PP-OCR's classes 0 and 180 by default; a turn only from the threshold on.
  auto angle = reg.make("angle", {});
  BOOST_TEST_REQUIRE(angle.ok());
  BOOST_TEST((*angle)->per_row());
  const std::vector<float> cls = {0.95f, 0.05f, 0.05f, 0.95f, 0.2f, 0.8f};
  auto a = (*angle)->decode({cls.data(), DType::float32, Dims{3, 2}});
  BOOST_TEST_REQUIRE(a.ok());
  BOOST_TEST_REQUIRE(a->rows.size() == 3u);
  BOOST_TEST(*a->rows[0].angle == 0);
  BOOST_TEST(*a->rows[1].angle == 180);
  BOOST_TEST(*a->rows[2].angle == 0);  // 0.8 < 0.9
  BOOST_TEST(a->rows[2].angle_score == 0.8f);
  BOOST_TEST(a->rows[1].classes.empty());
  BOOST_TEST(!(*angle)->accepts(DType::float32, Dims{3, 4}).ok());  // 4 classes, 2 angles
}
