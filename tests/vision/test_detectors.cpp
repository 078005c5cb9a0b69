// Detectors as users export them: a YOLOv5-style <1,25200,85> and a YOLOv8-style <1,84,8400>
// model (scripts/export_detectors.py, random but seeded weights, so thousands of candidates pass
// the score threshold) run by weave on a 1280x720 frame letterboxed and stretched to 640x640, an
// SSD DetectionOutput tensor, and tensors with boxes in the letterbox padding. weavemeta's
// decoder (core/vision/box_detection.h) is checked against a straightforward reference written
// here: every candidate scored, mapped to the frame, clipped, dropped when empty, all of them
// sorted, greedy NMS over all, then the cap.
#define BOOST_TEST_MODULE detectors
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/loader/model_loader.h"
#include "core/runtime/executor.h"
#include "core/vision/box_detection.h"
#include "core/vision/preprocess.h"

using namespace weave;
namespace wv = weave::vision;

namespace {

struct Expect {
  wv::Box box;
  int class_id;
  float score;
};

// The reference: the frame box of each candidate, then NMS over all of them.
std::vector<Expect> reference(const std::vector<wv::Candidate>& input_boxes, const wv::BoxDetectionOptions& o,
                              const wv::Letterbox& g, int fw, int fh) {
  std::vector<wv::Candidate> c;
  for (const wv::Candidate& b : input_boxes) {
    if (!(b.score >= o.score_threshold)) continue;
    const wv::Point p0 = wv::to_frame({b.x0, b.y0}, g), p1 = wv::to_frame({b.x1, b.y1}, g);
    wv::Candidate f{std::clamp(std::min(p0.x, p1.x), 0.0f, float(fw)),
                    std::clamp(std::min(p0.y, p1.y), 0.0f, float(fh)),
                    std::clamp(std::max(p0.x, p1.x), 0.0f, float(fw)),
                    std::clamp(std::max(p0.y, p1.y), 0.0f, float(fh)),
                    b.score,
                    b.class_id};
    if (f.x1 > f.x0 && f.y1 > f.y0) c.push_back(f);
  }
  std::vector<int> order(c.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return c[a].score > c[b].score; });
  auto iou = [](const wv::Candidate& a, const wv::Candidate& b) {
    const float iw = std::min(a.x1, b.x1) - std::max(a.x0, b.x0),
                ih = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
    if (iw <= 0 || ih <= 0) return 0.0f;
    const float inter = iw * ih;
    const float uni = (a.x1 - a.x0) * (a.y1 - a.y0) + (b.x1 - b.x0) * (b.y1 - b.y0) - inter;
    return uni <= 0 ? 0.0f : inter / uni;
  };
  std::vector<int> kept;
  for (int i : order) {
    bool keep = true;
    for (int k : kept)
      if ((o.class_agnostic || c[k].class_id == c[i].class_id) && iou(c[k], c[i]) > o.iou_threshold)
        keep = false;
    if (keep) kept.push_back(i);
  }
  std::vector<Expect> out;
  for (int k : kept) {
    if (static_cast<int>(out.size()) >= o.max_detections) break;
    const wv::Candidate& b = c[k];
    out.push_back({wv::bounding_box(wv::Quad{wv::Point{b.x0, b.y0}, wv::Point{b.x1, b.y0},
                                             wv::Point{b.x1, b.y1}, wv::Point{b.x0, b.y1}},
                                    fw, fh),
                   b.class_id, b.score});
  }
  return out;
}

// Input-pixel boxes of a YOLOv5 tensor <1,N,5+C> (score = objectness x best class).
std::vector<wv::Candidate> yolo_rows(const float* v, int64_t n, int64_t stride) {
  std::vector<wv::Candidate> c;
  for (int64_t i = 0; i < n; ++i) {
    const float* r = v + i * stride;
    const float* best = std::max_element(r + 5, r + stride);
    c.push_back({r[0] - r[2] / 2, r[1] - r[3] / 2, r[0] + r[2] / 2, r[1] + r[3] / 2, r[4] * *best,
                 static_cast<int>(best - (r + 5))});
  }
  return c;
}

// Input-pixel boxes of a YOLOv8 tensor <1,4+C,N>.
std::vector<wv::Candidate> yolov8_columns(const float* v, int64_t rows, int64_t n) {
  std::vector<wv::Candidate> c;
  for (int64_t i = 0; i < n; ++i) {
    int cls = 0;
    float best = v[4 * n + i];
    for (int64_t k = 5; k < rows; ++k)
      if (v[k * n + i] > best) best = v[k * n + i], cls = static_cast<int>(k - 4);
    const float cx = v[i], cy = v[n + i], w = v[2 * n + i], h = v[3 * n + i];
    c.push_back({cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, best, cls});
  }
  return c;
}

void check_same(const std::vector<wv::Region>& got, const std::vector<Expect>& want,
                const std::string& what) {
  BOOST_TEST_CONTEXT(what) {
    BOOST_TEST_REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      BOOST_TEST(got[i].class_id == want[i].class_id);
      BOOST_TEST(got[i].score == want[i].score);
      BOOST_TEST((got[i].box == want[i].box));
    }
  }
}

std::string models_dir() {
  const char* v = std::getenv("WEAVE_DETECTORS_DIR");
  return v && *v ? v : "build/tests/vision";
}

// A 1280x720 RGB frame of gradients and noise.
std::vector<uint8_t> frame_pixels(int w, int h) {
  std::vector<uint8_t> px(static_cast<std::size_t>(w) * h * 3);
  std::minstd_rand rng(5);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        px[(static_cast<std::size_t>(y) * w + x) * 3 + c] =
            static_cast<uint8_t>((x * (c + 1) / 5 + y * (3 - c) / 3 + static_cast<int>(rng() % 40)) & 255);
  return px;
}

// The model's output on the frame, preprocessed as weaveconvert does (resize=letterbox or stretch).
Tensor run_model(const std::string& file, wv::ResizeMode resize, wv::Letterbox& geometry) {
  const std::string path = models_dir() + "/" + file;
  BOOST_TEST_REQUIRE(std::filesystem::exists(path), path << " is missing (scripts/export_detectors.py)");
  auto factory = load_factory(path);
  BOOST_TEST_REQUIRE(factory.ok(), (factory ? "" : factory.message()));
  auto ex = Executor::create(*factory);
  BOOST_TEST_REQUIRE(ex.ok());
  const int fw = 1280, fh = 720;
  const std::vector<uint8_t> px = frame_pixels(fw, fh);
  wv::ImageView img;
  img.format = wv::PixelFormat::rgb;
  img.width = fw, img.height = fh;
  img.planes[0] = px.data();
  img.strides[0] = static_cast<std::size_t>(fw) * 3;
  wv::PreprocessSpec spec;
  spec.width = spec.height = 640;
  spec.resize = resize;
  spec.pad_value = 114;
  Tensor input(DType::float32, Dims{1, 3, 640, 640});
  auto g =
      wv::preprocess(img, spec, std::span<float>(input.as<float>(), static_cast<std::size_t>(input.numel())));
  BOOST_TEST_REQUIRE(g.ok());
  geometry = *g;
  const ConstTensorView in[] = {input.view()};
  auto out = ex->run(in);
  BOOST_TEST_REQUIRE(out.ok(), (out ? "" : out.message()));
  return std::move((*out)[0]);
}

}  // namespace

BOOST_AUTO_TEST_CASE(yolov5_style_export_on_a_letterboxed_and_a_stretched_frame) {
  for (const auto resize : {wv::ResizeMode::letterbox, wv::ResizeMode::stretch}) {
    wv::Letterbox g;
    const Tensor t = run_model("yolov5_style.onnx", resize, g);
    BOOST_TEST_REQUIRE((t.dims() == Dims{1, 25200, 85}));
    const std::vector<wv::Candidate> rows = yolo_rows(t.as<float>(), 25200, 85);
    const auto passing =
        std::count_if(rows.begin(), rows.end(), [](const auto& c) { return c.score >= 0.25f; });
    BOOST_TEST(passing > 1000);  // random weights: many candidates, as the export had
    for (const bool agnostic : {false, true}) {
      // The reference NMS keeps the same boxes whatever the cap, which only cuts its list: one
      // run per mode, cut to each cap.
      wv::BoxDetectionOptions all;
      all.class_agnostic = agnostic;
      all.max_detections = 1 << 30;
      const auto full = reference(rows, all, g, 1280, 720);
      for (const int cap : {300, 100000, 7}) {
        wv::BoxDetectionOptions o = all;
        o.max_detections = cap;
        auto r = wv::decode_boxes(wv::BoxFormat::yolo, t.view(), o, {}, 640, 640, g, 1280, 720);
        BOOST_TEST_REQUIRE(r.ok());
        const std::vector<Expect> want(full.begin(), full.begin() + std::min<std::size_t>(cap, full.size()));
        check_same(*r, want,
                   std::string(resize == wv::ResizeMode::letterbox ? "letterbox" : "stretch") +
                       (agnostic ? " agnostic" : " per class") + " cap " + std::to_string(cap));
        // Never fewer than min(cap, boxes in the frame after NMS).
        BOOST_TEST(r->size() == want.size());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(yolov8_style_export_columns) {
  wv::Letterbox g;
  const Tensor t = run_model("yolov8_style.onnx", wv::ResizeMode::letterbox, g);
  BOOST_TEST_REQUIRE((t.dims() == Dims{1, 84, 8400}));
  const std::vector<wv::Candidate> cols = yolov8_columns(t.as<float>(), 84, 8400);
  for (const bool agnostic : {false, true}) {
    wv::BoxDetectionOptions o;
    o.class_agnostic = agnostic;
    auto r = wv::decode_boxes(wv::BoxFormat::yolov8, t.view(), o, {}, 640, 640, g, 1280, 720);
    BOOST_TEST_REQUIRE(r.ok());
    check_same(*r, reference(cols, o, g, 1280, 720), agnostic ? "yolov8 agnostic" : "yolov8 per class");
  }
}

BOOST_AUTO_TEST_CASE(boxes_in_the_letterbox_padding_never_use_up_the_cap) {
  // 1280x720 letterboxed into 640x640: the frame is rows 140..500 of the input. 5000 strong
  // boxes in the padding, then 50 weaker ones inside the frame: all 50 come out with a cap of 300.
  const wv::Letterbox g = wv::compute_letterbox(1280, 720, 640, 640);
  BOOST_TEST(g.offset_y == 140);
  std::vector<float> t;
  auto row = [&](float cx, float cy, float score, int cls) {
    const float r[] = {cx, cy, 8, 8, 1.0f, cls == 0 ? score : 0.0f, cls == 1 ? score : 0.0f};
    t.insert(t.end(), std::begin(r), std::end(r));
  };
  for (int i = 0; i < 5000; ++i)
    row(static_cast<float>(8 + (i * 13) % 620), static_cast<float>(5 + i % 120), 0.9f, i % 2);
  for (int i = 0; i < 50; ++i) row(static_cast<float>(20 + 12 * i), 300.0f, 0.5f, 0);
  const ConstTensorView view{t.data(), DType::float32, Dims{1, 5050, 7}};
  wv::BoxDetectionOptions o;
  auto r = wv::decode_boxes(wv::BoxFormat::yolo, view, o, {}, 640, 640, g, 1280, 720);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->size() == 50u);
  check_same(*r, reference(yolo_rows(t.data(), 5050, 7), o, g, 1280, 720), "padding");
  for (const wv::Region& reg : *r) BOOST_TEST(reg.box.y >= 0);
}

BOOST_AUTO_TEST_CASE(ssd_detection_output_against_the_reference) {
  // <1,1,N,7>: image_id, label, confidence, normalized corners; random boxes, some off the frame.
  std::minstd_rand rng(11);
  std::uniform_real_distribution<float> u(-0.2f, 1.2f), s(0.0f, 1.0f);
  std::vector<float> t;
  std::vector<wv::Candidate> want_in;
  for (int i = 0; i < 2000; ++i) {
    const float x0 = u(rng), y0 = u(rng), x1 = x0 + s(rng) * 0.3f, y1 = y0 + s(rng) * 0.3f, conf = s(rng);
    const int label = static_cast<int>(rng() % 5);
    const float r[] = {0, static_cast<float>(label), conf, x0, y0, x1, y1};
    t.insert(t.end(), std::begin(r), std::end(r));
    want_in.push_back({x0 * 300, y0 * 300, x1 * 300, y1 * 300, conf, label});
  }
  const wv::Letterbox g = wv::compute_letterbox(1280, 720, 300, 300);
  for (const bool agnostic : {false, true}) {
    wv::BoxDetectionOptions o;
    o.class_agnostic = agnostic;
    o.max_detections = 100;
    auto r = wv::decode_boxes(wv::BoxFormat::ssd, {t.data(), DType::float32, Dims{1, 1, 2000, 7}}, o, {}, 300,
                              300, g, 1280, 720);
    BOOST_TEST_REQUIRE(r.ok());
    check_same(*r, reference(want_in, o, g, 1280, 720), agnostic ? "ssd agnostic" : "ssd per class");
  }
}
