// Object detector outputs -> boxes on the frame, with non-maximum suppression:
//  - mode "yolo" (YOLOv5/v7 style): <1,N,5+C> rows of cx, cy, w, h (input pixels), objectness,
//    C class scores; score = objectness * class score;
//  - mode "yolov8" (YOLOv8/v11 style): <1,4+C,N>, columns of cx, cy, w, h, C class scores;
//  - mode "ssd" (SSD DetectionOutput, as Caffe/OpenVINO models give it): <1,1,N,7> rows of
//    image_id, label, confidence, x_min, y_min, x_max, y_max (normalized to the input); a row
//    with image_id < 0 ends the list.
// Boxes are mapped from model-input pixels to the frame through the preprocessing geometry and
// clipped to it; empty ones are skipped. Regions are typed by their label (the class id in
// decimal without labels), best first.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/vision/regions.h"

namespace weave::vision {

struct BoxDetectionOptions {
  float score_threshold = 0.25f;
  float iou_threshold = 0.45f;  // NMS: a box overlapping a better one more than this goes
  int max_detections = 300;
  bool class_agnostic = false;  // NMS across classes
};

// A box in model-input pixels before NMS.
struct Candidate {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float score = 0;
  int class_id = 0;
};

// Greedy NMS: indices of the kept candidates, best score first, at most `max_detections`.
[[nodiscard]] std::vector<int> non_max_suppression(std::span<const Candidate> candidates, float iou_threshold,
                                                   int max_detections, bool class_agnostic);

enum class BoxFormat { yolo, yolov8, ssd };

// Checks dtype float32 and the layout of `format` (see above).
[[nodiscard]] Status check_box_tensor(BoxFormat format, DType dtype, const Dims& dims);

// `input_width` x `input_height` is the model input (for ssd's normalized boxes); `geometry`
// maps input pixels to the frame (frame_width x frame_height).
[[nodiscard]] Expected<std::vector<Region>> decode_boxes(BoxFormat format, const ConstTensorView& tensor,
                                                         const BoxDetectionOptions& options,
                                                         std::span<const std::string> labels, int input_width,
                                                         int input_height, const Letterbox& geometry,
                                                         int frame_width, int frame_height);

}  // namespace weave::vision
