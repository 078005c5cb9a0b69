#include "core/vision/box_detection.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

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

Quad quad_of_corners(const Candidate& c) {
  return Quad{Point{c.x0, c.y0}, Point{c.x1, c.y0}, Point{c.x1, c.y1}, Point{c.x0, c.y1}};
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
  if (max_detections <= 0) return kept;
  // Each candidate, best first, is compared only with the kept boxes it can suppress: those of
  // its class (per-class NMS keeps one list per class), so tens of thousands of candidates cost
  // candidates x kept-of-one-class overlaps, and the walk stops at max_detections.
  std::unordered_map<int, std::vector<int>> by_class;  // class ids come from the model: any int
  std::vector<int> all;
  for (int i : order) {
    std::vector<int>* group = class_agnostic ? &all : &by_class[c[i].class_id];
    bool keep = true;
    for (int k : *group)
      if (overlap(c[k], c[i]) > iou_threshold) {
        keep = false;
        break;
      }
    if (!keep) continue;
    group->push_back(i);
    kept.push_back(i);
    if (static_cast<int>(kept.size()) >= max_detections) break;
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
  // Candidates in frame pixels, clipped to the frame; a box with nothing left in the frame (in
  // a letterbox's padding, or off the frame) is dropped here, before NMS and the cap, so that
  // boxes nobody can see never use up max_detections.
  const auto fw = static_cast<float>(std::max(frame_width, 0)),
             fh = static_cast<float>(std::max(frame_height, 0));
  std::vector<Candidate> cand;
  auto add = [&](float x0, float y0, float x1, float y1, float score, int cls) {
    if (!(score >= o.score_threshold) || !std::isfinite(x0 + y0 + x1 + y1)) return;
    const Point a = to_frame({x0, y0}, geometry), b = to_frame({x1, y1}, geometry);
    const Candidate f{std::clamp(std::min(a.x, b.x), 0.0f, fw),
                      std::clamp(std::min(a.y, b.y), 0.0f, fh),
                      std::clamp(std::max(a.x, b.x), 0.0f, fw),
                      std::clamp(std::max(a.y, b.y), 0.0f, fh),
                      score,
                      cls};
    if (!(f.x1 > f.x0 && f.y1 > f.y0)) return;
    cand.push_back(f);
  };
  if (format == BoxFormat::yolo) {
    const int64_t n = t.dims[1], stride = t.dims[2];
    for (int64_t i = 0; i < n; ++i) {
      const float* r = v + i * stride;
      // Score: objectness times the best class score. The best score first (a loop the
      // compiler vectorizes), its class only for the few rows that pass the threshold.
      float best = r[5];
      for (int64_t j = 6; j < stride; ++j) best = r[j] > best ? r[j] : best;
      if (!(r[4] * best >= o.score_threshold)) continue;
      const auto cls = static_cast<int>(std::find(r + 5, r + stride, best) - (r + 5));
      add(r[0] - r[2] / 2, r[1] - r[3] / 2, r[0] + r[2] / 2, r[1] + r[3] / 2, r[4] * best, cls);
    }
  } else if (format == BoxFormat::yolov8) {
    // Columns: the best class of every box, found row by row (contiguous reads) rather than
    // down each column.
    const int64_t rows = t.dims[1], n = t.dims[2];
    std::vector<float> best(v + 4 * n, v + 5 * n);
    std::vector<int> cls(static_cast<std::size_t>(n), 0);
    for (int64_t c = 5; c < rows; ++c) {
      const float* row = v + c * n;
      for (int64_t i = 0; i < n; ++i)
        if (row[i] > best[static_cast<std::size_t>(i)]) {
          best[static_cast<std::size_t>(i)] = row[i];
          cls[static_cast<std::size_t>(i)] = static_cast<int>(c - 4);
        }
    }
    for (int64_t i = 0; i < n; ++i) {
      const float cx = v[i], cy = v[n + i], w = v[2 * n + i], h = v[3 * n + i];
      add(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, best[static_cast<std::size_t>(i)],
          cls[static_cast<std::size_t>(i)]);
    }
  } else {
    const int64_t n = t.dims[2];
    const auto iw = static_cast<float>(input_width), ih = static_cast<float>(input_height);
    if (input_width <= 0 || input_height <= 0) return make_error("ssd: the model input size is unknown");
    for (int64_t i = 0; i < n; ++i) {
      const float* r = v + i * 7;
      if (r[0] < 0) break;
      // The label is a float: one outside int's range is no class (and no cast to make).
      if (!(r[1] >= -1e9f && r[1] <= 1e9f)) continue;
      add(r[3] * iw, r[4] * ih, r[5] * iw, r[6] * ih, r[2], static_cast<int>(r[1]));
    }
  }
  std::vector<Region> out;
  for (int k : non_max_suppression(cand, o.iou_threshold, o.max_detections, o.class_agnostic)) {
    const Candidate& c = cand[static_cast<std::size_t>(k)];
    Region r;
    r.box = bounding_box(quad_of_corners(c), frame_width, frame_height);
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
