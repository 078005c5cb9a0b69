// Decode + NMS time of detector outputs, what weavemeta mode=yolo/yolov8 spends per frame
// (docs/performance.md): the output of a YOLOv5-style export (scripts/export_detectors.py,
// random weights: many thousands of the 25,200 candidates pass the score threshold) on a
// letterboxed 1280x720 frame, decoded with the default options, timed over many repetitions on
// the calling thread. One JSON line:
//
//   build/bench/bench_detection MODEL.onnx yolo|yolov8 [--reps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/loader/model_loader.h"
#include "core/runtime/executor.h"
#include "core/vision/box_detection.h"
#include "core/vision/preprocess.h"

namespace wv = weave::vision;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_detection MODEL.onnx yolo|yolov8 [--reps N]\n");
    return 2;
  }
  const std::string path = argv[1], mode = argv[2];
  int reps = 200;
  for (int i = 3; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
  const wv::BoxFormat format = mode == "yolov8" ? wv::BoxFormat::yolov8 : wv::BoxFormat::yolo;
  auto factory = weave::load_factory(path);
  if (!factory) {
    std::fprintf(stderr, "bench_detection: %s\n", factory.message().c_str());
    return 1;
  }
  auto ex = weave::Executor::create(*factory);
  if (!ex) {
    std::fprintf(stderr, "bench_detection: %s\n", ex.message().c_str());
    return 1;
  }
  // A grey-ramp 1280x720 frame, letterboxed to the model's 640x640 as weaveconvert does.
  const int fw = 1280, fh = 720;
  std::vector<uint8_t> px(static_cast<std::size_t>(fw) * fh * 3);
  for (std::size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>((i * 7 / 3) & 255);
  wv::ImageView img;
  img.width = fw, img.height = fh;
  img.planes[0] = px.data();
  img.strides[0] = static_cast<std::size_t>(fw) * 3;
  wv::PreprocessSpec spec;
  spec.width = spec.height = 640;
  spec.resize = wv::ResizeMode::letterbox;
  spec.pad_value = 114;
  weave::Tensor input(weave::DType::float32, weave::Dims{1, 3, 640, 640});
  auto g =
      wv::preprocess(img, spec, std::span<float>(input.as<float>(), static_cast<std::size_t>(input.numel())));
  const weave::ConstTensorView in[] = {input.view()};
  auto out = ex->run(in);
  if (!g || !out) {
    std::fprintf(stderr, "bench_detection: %s\n", g ? out.message().c_str() : g.message().c_str());
    return 1;
  }
  const weave::Tensor& t = (*out)[0];
  const wv::BoxDetectionOptions options;
  std::vector<double> ms;
  std::size_t boxes = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto regions = wv::decode_boxes(format, t.view(), options, {}, 640, 640, *g, fw, fh);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!regions) {
      std::fprintf(stderr, "bench_detection: %s\n", regions.message().c_str());
      return 1;
    }
    boxes = regions->size();
  }
  // Candidates over the score threshold, the work NMS has.
  std::size_t candidates = 0;
  const float* v = t.as<float>();
  if (format == wv::BoxFormat::yolo) {
    for (int64_t i = 0; i < t.dims()[1]; ++i) {
      const float* row = v + i * t.dims()[2];
      candidates += row[4] * *std::max_element(row + 5, row + t.dims()[2]) >= options.score_threshold;
    }
  } else {
    const int64_t rows = t.dims()[1], n = t.dims()[2];
    for (int64_t i = 0; i < n; ++i) {
      float best = v[4 * n + i];
      for (int64_t c = 5; c < rows; ++c) best = std::max(best, v[c * n + i]);
      candidates += best >= options.score_threshold;
    }
  }
  std::sort(ms.begin(), ms.end());
  std::printf(
      "{\"model\":\"%s\",\"mode\":\"%s\",\"output\":\"%s\",\"candidates_over_threshold\":%zu,"
      "\"detections\":%zu,\"reps\":%d,\"median_ms\":%.4f,\"min_ms\":%.4f}\n",
      path.c_str(), mode.c_str(), weave::shape_str(t.dims().span()).c_str(), candidates, boxes, reps,
      ms[ms.size() / 2], ms.front());
  return 0;
}
