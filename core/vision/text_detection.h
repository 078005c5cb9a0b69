// Mode "db": the post-processing of DB text detectors (PP-OCR det): a probability map
// <1,1,H,W> (or <H,W>, <1,H,W>) -> rotated text boxes on the frame.
//
//  1. pixels above `threshold` are text; each connected region's contour gives a minimum-area
//     rotated rectangle, dropped when its short side is under `min_size` pixels;
//  2. its score is the mean probability inside it (score_mode fast) or inside the region's own
//     contour (slow: exact for curved or broken text, a little slower), dropped under
//     `box_threshold`;
//  3. the detector sees shrunk text (DB is trained on boxes shrunk by a ratio), so each box
//     is grown back ("unclipped") by area * unclip_ratio / perimeter on every side;
//  4. corners are mapped to frame pixels through the preprocessing geometry, clipped to the
//     frame, and boxes narrower or lower than 3 pixels there are dropped.
// Boxes come out in reading order (top to bottom, then left to right on a line).
#pragma once

#include <vector>

#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/vision/regions.h"

namespace weave::vision {

struct TextDetectionOptions {
  float threshold = 0.3f;                                            // probability of a text pixel
  float box_threshold = 0.6f;                                        // mean probability inside a kept box
  float unclip_ratio = 1.5f;                                         // growth of the shrunk box
  int max_candidates = 1000;                                         // contours looked at, largest first
  int min_size = 3;                                                  // short side of a kept box in map pixels
  enum class ScoreMode { fast, slow } score_mode = ScoreMode::fast;  // see step 2
};

// Checks dtype float32 and a 2-D map (leading dims of 1).
[[nodiscard]] Status check_text_map(DType dtype, const Dims& dims);

// `geometry` maps tensor (= map) pixels to frame pixels; the frame is frame_width x frame_height.
// Regions have type "text", a quad, its bounding box and the score.
[[nodiscard]] Expected<std::vector<Region>> decode_text_boxes(const ConstTensorView& map,
                                                              const TextDetectionOptions& options,
                                                              const Letterbox& geometry, int frame_width,
                                                              int frame_height);

// Sorts regions in reading order: by top edge, and left to right among those whose tops are
// within `line_tolerance` pixels of each other.
void sort_reading_order(std::vector<Region>& regions, float line_tolerance = 10.0f);

}  // namespace weave::vision
