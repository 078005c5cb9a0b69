// Crops of regions into a batch tensor, CTC decoding, drawing and JSON lines of regions, without
// GStreamer.
#define BOOST_TEST_MODULE vision_crops_text
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "core/vision/crops.h"
#include "core/vision/ctc.h"
#include "core/vision/decoder.h"
#include "core/vision/draw.h"
#include "core/vision/json.h"
#include "core/vision/regions.h"

namespace wv = weave::vision;
using weave::Dims;
using weave::DType;

namespace {

// An RGB frame of w x h filled with `bg`, with rectangles of other colours.
struct Frame {
  int w, h;
  std::vector<std::uint8_t> px;
  Frame(int w_, int h_, std::uint8_t bg) : w(w_), h(h_), px(static_cast<std::size_t>(w_) * h_ * 3, bg) {}
  void fill(const wv::Box& b, std::uint8_t r, std::uint8_t g, std::uint8_t bl) {
    for (int y = b.y; y < b.y + b.height; ++y)
      for (int x = b.x; x < b.x + b.width; ++x) {
        std::uint8_t* p = &px[(static_cast<std::size_t>(y) * w + x) * 3];
        p[0] = r;
        p[1] = g;
        p[2] = bl;
      }
  }
  wv::ImageView view() const {
    wv::ImageView v;
    v.format = wv::PixelFormat::rgb;
    v.width = w;
    v.height = h;
    v.planes[0] = px.data();
    v.strides[0] = static_cast<std::size_t>(w) * 3;
    return v;
  }
};

wv::Region box_region(int id, wv::Box b) {
  wv::Region r;
  r.id = id;
  r.type = "text";
  r.box = b;
  return r;
}

// Raw pixel values back: scale 1, mean 0, std 1.
wv::CropSpec raw_spec(int height, int width = 0) {
  wv::CropSpec s;
  s.height = height;
  s.width = width;
  s.min_width = 1;
  s.multiple = 1;
  s.norm.scale = 1.0f;
  s.norm.pad_value = 7;
  return s;
}

}  // namespace

// width_tolerance: crops of similar widths share a batch, widest first; a crop much narrower than
// its batch starts another, so no crop is padded by more than the tolerance allows.
BOOST_AUTO_TEST_CASE(plan_batches_crops_of_similar_widths_together) {
  const std::vector<wv::Region> regions = {
      box_region(0, {0, 0, 20, 10}),    // 16 wide at height 8
      box_region(1, {0, 20, 100, 10}),  // 80
      box_region(2, {0, 40, 25, 10}),   // 20
      box_region(3, {0, 60, 90, 10}),   // 72
  };
  auto spec = raw_spec(8);
  auto any = wv::plan_crops(regions, 200, 100, spec);  // tolerance 1: one batch, region order
  BOOST_TEST_REQUIRE(any.ok());
  BOOST_TEST_REQUIRE(any->size() == 1u);
  BOOST_TEST((*any)[0].regions == (std::vector<int>{0, 1, 2, 3}));
  spec.width_tolerance = 0.25;
  auto similar = wv::plan_crops(regions, 200, 100, spec);
  BOOST_TEST_REQUIRE(similar.ok());
  BOOST_TEST_REQUIRE(similar->size() == 2u);
  BOOST_TEST((*similar)[0].regions == (std::vector<int>{1, 3}));  // 80 and 72 >= 0.75 * 80
  BOOST_TEST((*similar)[0].width == 80);
  BOOST_TEST((*similar)[1].regions == (std::vector<int>{2, 0}));  // 20 and 16 >= 0.75 * 20
  BOOST_TEST((*similar)[1].width == 20);
  spec.width_tolerance = 0.0;  // only equal widths together
  auto equal = wv::plan_crops(regions, 200, 100, spec);
  BOOST_TEST_REQUIRE(equal.ok());
  BOOST_TEST(equal->size() == 4u);
  spec.width_tolerance = 1.5;
  BOOST_TEST(!wv::plan_crops(regions, 200, 100, spec).ok());
}

BOOST_AUTO_TEST_CASE(plan_sizes_each_crop_by_its_aspect_and_skips_empty_boxes) {
  std::vector<wv::Region> regions = {
      box_region(0, {10, 10, 100, 20}),  // 5:1 -> 40 wide at height 8
      box_region(1, {0, 0, 0, 10}),      // zero width: skipped
      box_region(2, {500, 0, 10, 10}),   // outside the frame: skipped
      box_region(3, {-10, 40, 30, 10}),  // clipped to 20x10 -> 16 wide
  };
  auto plan = wv::plan_crops(regions, 200, 100, raw_spec(8));
  BOOST_TEST_REQUIRE(plan.ok());
  BOOST_TEST_REQUIRE(plan->size() == 1u);
  const wv::CropBatch& b = (*plan)[0];
  BOOST_TEST(b.regions == (std::vector<int>{0, 3}));
  BOOST_TEST(b.widths == (std::vector<int>{40, 16}));
  BOOST_TEST(b.width == 40);
  // A fixed width squeezes what is wider; the batch bound splits the regions.
  auto spec = raw_spec(8, 24);
  spec.max_batch = 1;
  plan = wv::plan_crops(regions, 200, 100, spec);
  BOOST_TEST_REQUIRE(plan.ok());
  BOOST_TEST_REQUIRE(plan->size() == 2u);
  BOOST_TEST((*plan)[0].width == 24);
  BOOST_TEST((*plan)[0].widths == std::vector<int>{24});
  BOOST_TEST((*plan)[1].widths == std::vector<int>{16});
  // Nothing to crop: no batch. Bad specs are errors.
  BOOST_TEST(wv::plan_crops({}, 200, 100, raw_spec(8))->empty());
  BOOST_TEST(!wv::plan_crops(regions, 200, 100, raw_spec(0)).ok());
  auto wide = raw_spec(8);
  wide.min_width = 50;
  wide.max_width = 20;
  BOOST_TEST(!wv::plan_crops(regions, 200, 100, wide).ok());
}

BOOST_AUTO_TEST_CASE(crops_are_cut_resized_and_padded_into_the_batch) {
  Frame f(64, 32, 0);
  f.fill({8, 8, 16, 8}, 200, 100, 50);  // region 0: a 2:1 patch of one colour
  f.fill({40, 4, 8, 16}, 10, 20, 30);   // region 1: 1:2, taller than wide -> turned
  std::vector<wv::Region> regions = {box_region(0, {8, 8, 16, 8}), box_region(1, {40, 4, 8, 16})};
  const wv::CropSpec spec = raw_spec(4);
  auto plan = wv::plan_crops(regions, f.w, f.h, spec);
  BOOST_TEST_REQUIRE(plan.ok());
  const wv::CropBatch& b = (*plan)[0];
  BOOST_TEST(b.widths == (std::vector<int>{8, 8}));  // the turned crop is 16 wide, 8 high -> 8x4
  std::vector<float> t(wv::crop_elements(b, spec), -1.f);
  BOOST_TEST_REQUIRE(wv::crop_batch(f.view(), regions, b, spec, t).ok());
  // NCHW <2,3,4,8>: crop 0 is its colour throughout (inside, away from the resampled border).
  const std::size_t plane = 4 * 8;
  BOOST_TEST(t[1 * 8 + 3] == 200.f);
  BOOST_TEST(t[plane + 1 * 8 + 3] == 100.f);
  BOOST_TEST(t[2 * plane + 2 * 8 + 4] == 50.f);
  BOOST_TEST(t[3 * plane + 1 * 8 + 3] == 10.f);  // crop 1, red channel
  // A wrong output size is an error.
  std::vector<float> small(3);
  BOOST_TEST(!wv::crop_batch(f.view(), regions, b, spec, small).ok());
}

BOOST_AUTO_TEST_CASE(narrower_crops_are_padded_on_the_right) {
  Frame f(64, 32, 90);
  std::vector<wv::Region> regions = {box_region(0, {0, 0, 32, 8}), box_region(1, {0, 16, 8, 8})};
  const wv::CropSpec spec = raw_spec(4);
  auto plan = wv::plan_crops(regions, f.w, f.h, spec);
  BOOST_TEST_REQUIRE(plan.ok());
  const wv::CropBatch& b = (*plan)[0];
  BOOST_TEST(b.width == 16);
  BOOST_TEST(b.widths[1] == 4);
  std::vector<float> t(wv::crop_elements(b, spec));
  BOOST_TEST_REQUIRE(wv::crop_batch(f.view(), regions, b, spec, t).ok());
  const std::size_t crop = 3 * 4 * 16;
  BOOST_TEST(t[crop + 2 * 16 + 3] == 90.f);  // inside crop 1
  BOOST_TEST(t[crop + 2 * 16 + 4] == 7.f);   // its padding (pad-value 7)
  BOOST_TEST(t[crop + 2 * 16 + 15] == 7.f);
}

BOOST_AUTO_TEST_CASE(rotated_quads_are_cut_upright_and_turned_by_their_angle) {
  // Left half dark, right half bright: a crop keeps that order unless it is turned over.
  Frame f(40, 20, 0);
  f.fill({20, 0, 20, 20}, 250, 250, 250);
  wv::Region r = box_region(0, {4, 4, 32, 8});
  auto spec = raw_spec(8);
  auto plan = wv::plan_crops(std::vector<wv::Region>{r}, f.w, f.h, spec);
  BOOST_TEST_REQUIRE(plan.ok());
  std::vector<float> upright(wv::crop_elements((*plan)[0], spec));
  BOOST_TEST_REQUIRE(wv::crop_batch(f.view(), std::vector<wv::Region>{r}, (*plan)[0], spec, upright).ok());
  const int w = (*plan)[0].width;
  BOOST_TEST(upright[4 * w + 1] < 50.f);
  BOOST_TEST(upright[4 * w + w - 2] > 200.f);
  r.angle = 180;
  std::vector<float> turned(upright.size());
  BOOST_TEST_REQUIRE(wv::crop_batch(f.view(), std::vector<wv::Region>{r}, (*plan)[0], spec, turned).ok());
  BOOST_TEST(turned[4 * w + 1] > 200.f);
  BOOST_TEST(turned[4 * w + w - 2] < 50.f);
  // The same box as a quad listed from another corner would be cut the other way round: the
  // quad's first corner is the text's top-left.
  wv::Region q = box_region(0, {4, 4, 32, 8});
  q.quad = wv::Quad{wv::Point{36, 12}, wv::Point{4, 12}, wv::Point{4, 4}, wv::Point{36, 4}};
  std::vector<float> from_quad(upright.size());
  BOOST_TEST_REQUIRE(wv::crop_batch(f.view(), std::vector<wv::Region>{q}, (*plan)[0], spec, from_quad).ok());
  BOOST_TEST(from_quad[4 * w + 1] > 200.f);
}

BOOST_AUTO_TEST_CASE(a_degenerate_quad_across_a_large_frame_stays_a_small_crop) {
  // 4000x3000 frame, a "box" whose corners are the frame's corners in a twisted order.
  Frame f(4000, 3000, 30);
  wv::Region r = box_region(0, {0, 0, 4000, 3000});
  r.quad = wv::Quad{wv::Point{0, 0}, wv::Point{4000, 3000}, wv::Point{4000, 0}, wv::Point{0, 3000}};
  const wv::CropSpec spec = raw_spec(8);
  auto plan = wv::plan_crops(std::vector<wv::Region>{r}, f.w, f.h, spec);
  BOOST_TEST_REQUIRE(plan.ok());
  BOOST_TEST_REQUIRE(plan->size() == 1u);
  BOOST_TEST((*plan)[0].width <= spec.max_width);
  std::vector<float> t(wv::crop_elements((*plan)[0], spec));
  BOOST_TEST(wv::crop_batch(f.view(), std::vector<wv::Region>{r}, (*plan)[0], spec, t).ok());
}

BOOST_AUTO_TEST_CASE(ctc_drops_blanks_and_repeats_and_reads_the_space_class) {
  const std::vector<std::string> keys = {"a", "b", "\xe4\xb8\xad"};  // a, b, a CJK key
  // <1,7,5>: classes blank, a, b, 中, space.
  auto row = [](int best, float p) {
    std::vector<float> r(5, (1.f - p) / 4);
    r[static_cast<std::size_t>(best)] = p;
    return r;
  };
  std::vector<float> t;
  for (auto [c, p] : std::vector<std::pair<int, float>>{
           {1, .9f}, {1, .8f}, {0, .9f}, {1, .7f}, {4, .6f}, {3, .5f}, {0, .9f}}) {
    auto r = row(c, p);
    t.insert(t.end(), r.begin(), r.end());
  }
  auto texts = wv::ctc_greedy({t.data(), DType::float32, Dims{1, 7, 5}}, keys);
  BOOST_TEST_REQUIRE(texts.ok());
  BOOST_TEST_REQUIRE(texts->size() == 1u);
  BOOST_TEST((*texts)[0].text == "aa \xe4\xb8\xad");
  BOOST_TEST(std::abs((*texts)[0].score - (0.9f + 0.7f + 0.6f + 0.5f) / 4) < 1e-6f);
  // Each character's own probability, one per UTF-8 character (the first of a repeat counts).
  BOOST_TEST(((*texts)[0].char_scores == std::vector<float>{.9f, .7f, .6f, .5f}));
  // In the JSON of a text region, after its score.
  wv::Region r;
  r.type = "text";
  r.box = wv::Box{0, 0, 4, 2};
  r.text = (*texts)[0];
  BOOST_TEST(wv::regions_json_line(0, std::span<const wv::Region>(&r, 1), {})
                 .find("\"char_scores\":[0.9,0.7,0.6,0.5],\"box\"") != std::string::npos);
  // All blanks: an empty text scoring 0.
  std::vector<float> blank;
  for (int i = 0; i < 3; ++i) {
    auto r = row(0, .99f);
    blank.insert(blank.end(), r.begin(), r.end());
  }
  texts = wv::ctc_greedy({blank.data(), DType::float32, Dims{3, 5}}, keys);
  BOOST_TEST_REQUIRE(texts.ok());
  BOOST_TEST((*texts)[0].text.empty());
  BOOST_TEST((*texts)[0].score == 0.f);
}

BOOST_AUTO_TEST_CASE(ctc_names_both_counts_when_keys_and_model_disagree) {
  auto st = wv::check_ctc_tensor(DType::float32, Dims{4, 40, 6625}, 6000);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(st.message().find("6000 keys") != std::string::npos, st.message());
  BOOST_TEST(st.message().find("6625 classes") != std::string::npos, st.message());
  BOOST_TEST(wv::check_ctc_tensor(DType::float32, Dims{4, 40, 6625}, 6623).ok());  // + blank + space
  BOOST_TEST(wv::check_ctc_tensor(DType::float32, Dims{4, 40, 6625}, 6624).ok());  // + blank
  BOOST_TEST(!wv::check_ctc_tensor(DType::float32, Dims{6625}, 6623).ok());
  BOOST_TEST(!wv::check_ctc_tensor(DType::float32, Dims{1, 2, 3}, 0).ok());
  auto ctc = wv::DecoderRegistry::global().make("ctc", {});  // no keys
  BOOST_TEST_REQUIRE(ctc.ok());
  BOOST_TEST(!(*ctc)->accepts(DType::float32, Dims{1, 4, 3}).ok());
}

BOOST_AUTO_TEST_CASE(drawing_marks_the_box_and_survives_boxes_outside_the_frame) {
  Frame f(80, 60, 0);
  wv::MutableImageView v{wv::PixelFormat::rgb, f.w, f.h, f.px.data(), static_cast<std::size_t>(f.w) * 3};
  wv::Region r = box_region(0, {20, 30, 40, 20});
  r.text = wv::TextResult{"Hi \xe4\xb8\xad", 0.5f};
  BOOST_TEST(wv::region_label(r, true) == "Hi \xe4\xb8\xad (0.50)");
  wv::Region far = box_region(1, {-1000, -1000, 5000, 5000});
  far.quad = wv::Quad{wv::Point{1e30f, 0}, wv::Point{-1e30f, 5}, wv::Point{3, 1e9f}, wv::Point{0, 0}};
  BOOST_TEST_REQUIRE(wv::draw_regions(v, std::vector<wv::Region>{r, far}).ok());
  // The box's left edge is drawn in the box colour (green by default).
  const std::uint8_t* p = &f.px[(static_cast<std::size_t>(40) * f.w + 20) * 3];
  BOOST_TEST(int(p[1]) > 100);
  BOOST_TEST(int(p[0]) < 50);
  // Formats without a packed RGB plane are refused.
  wv::MutableImageView yuv = v;
  yuv.format = wv::PixelFormat::i420;
  BOOST_TEST(!wv::draw_regions(yuv, std::vector<wv::Region>{r}).ok());
  wv::MutableImageView bad = v;
  bad.stride = 3;
  BOOST_TEST(!wv::draw_regions(bad, std::vector<wv::Region>{r}).ok());
}

BOOST_AUTO_TEST_CASE(json_line_of_regions_lists_texts_and_objects) {
  wv::Region t = box_region(0, {1, 2, 3, 4});
  t.text = wv::TextResult{"say \"hi\"", 0.5f};
  wv::Region unread = box_region(1, {0, 0, 2, 2});
  unread.score = 0.25f;
  wv::Region dog;
  dog.type = "dog";
  dog.label = "dog";
  dog.class_id = 16;
  dog.score = 0.75f;
  dog.box = {0, 0, 10, 10};
  dog.classes.push_back({"breed", 3, "husky", 0.5f});
  BOOST_TEST(
      wv::regions_json_line(40u, std::vector<wv::Region>{t, unread, dog}, {}) ==
      "{\"pts\":40,\"texts\":[{\"text\":\"say \\\"hi\\\"\",\"score\":0.5,\"box\":[[1,2],[4,2],[4,6],[1,6]]},"
      "{\"score\":0.25,\"box\":[[0,0],[2,0],[2,2],[0,2]]}],\"objects\":[{\"label\":\"dog\",\"class_id\":16,"
      "\"score\":0.75,\"box\":[[0,0],[10,0],[10,10],[0,10]],\"classes\":[{\"name\":\"breed\",\"class_id\":3,"
      "\"label\":\"husky\",\"score\":0.5}]}]}");
  // A frame without regions still has its line, with the lists asked for, empty.
  BOOST_TEST(wv::regions_json_line(std::nullopt, {}, {}) == "{\"pts\":null}");
  BOOST_TEST(wv::regions_json_line(std::nullopt, {}, {.texts = true, .objects = false, .lines = {}}) ==
             "{\"pts\":null,\"texts\":[]}");
}

BOOST_AUTO_TEST_CASE(a_streams_lines_keep_their_arrays) {
  // A detector's lines carry "objects" from the first frame, empty when nothing was found, and
  // never "texts"; a stream's text regions make "texts" appear and stay.
  wv::RegionLines detector({.texts = false, .objects = true, .lines = {}});
  wv::Region dog;
  dog.type = dog.label = "dog";
  dog.box = {0, 0, 4, 4};
  BOOST_TEST(detector.line(0u, {}) == "{\"pts\":0,\"objects\":[]}");
  BOOST_TEST(detector.line(1u, std::vector<wv::Region>{dog}).find("\"objects\":[{\"label\":\"dog\"") !=
             std::string::npos);
  BOOST_TEST(detector.line(2u, {}) == "{\"pts\":2,\"objects\":[]}");
  wv::RegionLines sticky;
  BOOST_TEST(sticky.line(0u, {}) == "{\"pts\":0}");
  BOOST_TEST(sticky.line(1u, std::vector<wv::Region>{box_region(0, {1, 1, 2, 2})}).find("\"texts\":[{") !=
             std::string::npos);
  BOOST_TEST(sticky.line(2u, {}) == "{\"pts\":2,\"texts\":[]}");
}
