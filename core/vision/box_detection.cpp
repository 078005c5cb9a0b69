#include "core/vision/box_detection.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace weave::vision {

namespace {

float area(const Candidate& c) {
  return std::max(0.0f, c.x1 - c.x0) * std::max(0.0f, c.y1 - c.y0);
}

float overlap(const Candidate& a, const Candidate& b) {
  const float iw = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  const float ih = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  if (iw <= 0 || ih <= 0) return 0.0f;
  const float inter = iw * ih;
  const float uni = area(a) + area(b) - inter;
  return uni <= 0 ? 0.0f : inter / uni;
}

const char* format_name(BoxFormat f) {
  switch (f) {
    case BoxFormat::yolo:
      return "yolo";
    case BoxFormat::yolov8:
      return "yolov8";
    case BoxFormat::ssd:
      return "ssd";
  }
  return "?";
}

}  // namespace

std::vector<int> non_max_suppression(std::span<const Candidate> c, float iou_threshold, int max_detections,
                                     bool class_agnostic) {
  std::vector<int> order(c.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return c[a].score > c[b].score; });
  std::vector<int> kept;
  for (int i : order) {
    if (static_cast<int>(kept.size()) >= max_detections) break;
    bool keep = true;
    for (int k : kept)
      if ((class_agnostic || c[k].class_id == c[i].class_id) && overlap(c[k], c[i]) > iou_threshold) {
        keep = false;
        break;
      }
    if (keep) kept.push_back(i);
  }
  return kept;
}

Status check_box_tensor(BoxFormat format, DType dtype, const Dims& d) {
  if (dtype != DType::float32)
    return make_error(format_name(format), ": needs float32, got ", dtype_name(dtype));
  const bool ok = format == BoxFormat::ssd    ? d.rank() == 4 && d[0] == 1 && d[1] == 1 && d[3] == 7
                  : format == BoxFormat::yolo ? d.rank() == 3 && d[0] == 1 && d[2] > 5
                                              : d.rank() == 3 && d[0] == 1 && d[1] > 4;
  if (!ok) {
    const char* want = format == BoxFormat::ssd    ? "<1,1,N,7>"
                       : format == BoxFormat::yolo ? "<1,N,5+classes>"
                                                   : "<1,4+classes,N>";
    return make_error(format_name(format), ": needs a tensor of shape ", want, ", got ", shape_str(d.span()));
  }
  return {};
}

Expected<std::vector<Region>> decode_boxes(BoxFormat format, const ConstTensorView& t,
                                           const BoxDetectionOptions& o, std::span<const std::string> labels,
                                           int input_width, int input_height, const Letterbox& geometry,
                                           int frame_width, int frame_height) {
  WEAVE_TRY(check_box_tensor(format, t.dtype, t.dims));
  if (t.data == nullptr) return make_error(format_name(format), ": the tensor has no data");
  const float* v = t.as<float>();
  std::vector<Candidate> cand;
  auto add_center = [&](float cx, float cy, float w, float h, float score, int cls) {
    if (!(score >= o.score_threshold) || !std::isfinite(cx + cy + w + h)) return;
    cand.push_back({cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, score, cls});
  };
  if (format == BoxFormat::yolo) {
    const int64_t n = t.dims[1], stride = t.dims[2];
    for (int64_t i = 0; i < n; ++i) {
      const float* r = v + i * stride;
      const float* best = std::max_element(r + 5, r + stride);
      add_center(r[0], r[1], r[2], r[3], r[4] * *best, static_cast<int>(best - (r + 5)));
    }
  } else if (format == BoxFormat::yolov8) {
    const int64_t rows = t.dims[1], n = t.dims[2];
    for (int64_t i = 0; i < n; ++i) {
      int cls = 0;
      float best = -INFINITY;
      for (int64_t c = 4; c < rows; ++c)
        if (v[c * n + i] > best) {
          best = v[c * n + i];
          cls = static_cast<int>(c - 4);
        }
      add_center(v[i], v[n + i], v[2 * n + i], v[3 * n + i], best, cls);
    }
  } else {
    const int64_t n = t.dims[2];
    const auto iw = static_cast<float>(input_width), ih = static_cast<float>(input_height);
    if (input_width <= 0 || input_height <= 0) return make_error("ssd: the model input size is unknown");
    for (int64_t i = 0; i < n; ++i) {
      const float* r = v + i * 7;
      if (r[0] < 0) break;
      if (!(r[2] >= o.score_threshold) || !std::isfinite(r[1] + r[3] + r[4] + r[5] + r[6])) continue;
      cand.push_back({r[3] * iw, r[4] * ih, r[5] * iw, r[6] * ih, r[2], static_cast<int>(r[1])});
    }
  }
  std::vector<Region> out;
  for (int k : non_max_suppression(cand, o.iou_threshold, o.max_detections, o.class_agnostic)) {
    const Candidate& c = cand[static_cast<std::size_t>(k)];
    const Point a = to_frame({c.x0, c.y0}, geometry), b = to_frame({c.x1, c.y1}, geometry);
    Region r;
    r.box = bounding_box(Quad{a, Point{b.x, a.y}, b, Point{a.x, b.y}}, frame_width, frame_height);
    if (r.box.empty()) continue;
    r.score = c.score;
    r.class_id = c.class_id;
    r.label = c.class_id >= 0 && static_cast<std::size_t>(c.class_id) < labels.size()
                  ? labels[static_cast<std::size_t>(c.class_id)]
                  : std::to_string(c.class_id);
    r.type = r.label;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace weave::vision
