// Regions of interest as core/vision sees them: what a detector found on a frame (a box, maybe
// rotated, with a score and a label) and what later models said about it (classes, an angle, a
// text). The GStreamer side stores the same thing as GstVideoRegionOfInterestMeta with params
// structures (caps/roi_meta.h); decoders, crops, drawing and JSON work on these plain values.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/vision/preprocess.h"

namespace weave::vision {

struct Point {
  float x = 0.0f;
  float y = 0.0f;
  friend bool operator==(const Point&, const Point&) = default;
};

// Corners of a (possibly rotated) box in frame pixels, clockwise from the top-left corner as
// the text reads: top-left, top-right, bottom-right, bottom-left.
using Quad = std::array<Point, 4>;

// Axis-aligned box in frame pixels; x, y is the top-left corner.
struct Box {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
  [[nodiscard]] bool empty() const { return width <= 0 || height <= 0; }
  friend bool operator==(const Box&, const Box&) = default;
};

struct ClassResult {
  std::string name;  // what was classified ("classification" unless the element says otherwise)
  int class_id = -1;
  std::string label;
  float score = 0.0f;
};

struct TextResult {
  TextResult() = default;
  TextResult(std::string text_, float score_, std::vector<float> char_scores_ = {})
      : text(std::move(text_)), score(score_), char_scores(std::move(char_scores_)) {}
  std::string text;  // UTF-8
  float score = 0.0f;
  // The recognizer's confidence in each key it emitted, in order (a key is one character in
  // PP-OCR's keys files); empty when not known (e.g. a track's voted read of another text
  // standing in for this frame's).
  std::vector<float> char_scores;
};

// The track a region belongs to (weavetrack): ids are unique in a stream for as long as it runs.
struct TrackTag {
  std::uint64_t id = 0;
  int age = 0;             // frames since the track was born
  bool predicted = false;  // no detection on this frame: the box is the track's prediction
};

struct Region {
  int id = -1;                       // unique on its frame (the meta's id)
  std::string type;                  // "text", or the detected class's label
  Box box;                           // bounding box, clipped to the frame
  std::optional<Quad> quad;          // the rotated box, when the detector gives one
  float score = 0.0f;                // detection score
  int class_id = -1;                 // detected class (-1: none, e.g. text)
  std::string label;                 // detected class's label ("" without labels)
  std::vector<ClassResult> classes;  // later classifications, one per name
  std::optional<int> angle;          // degrees the content is turned (0, 90, 180, 270)
  float angle_score = 0.0f;
  std::optional<TextResult> text;
  std::optional<TrackTag> track;
};

// The corners of a box, clockwise from the top-left.
[[nodiscard]] Quad quad_of(const Box& box);
// The smallest integer box holding `quad`, clipped to width x height (may come out empty).
[[nodiscard]] Box bounding_box(const Quad& quad, int width, int height);
// `box` clipped to width x height (may come out empty).
[[nodiscard]] Box clip(const Box& box, int width, int height);
// Intersection over union of two boxes (0 when either is empty).
[[nodiscard]] double iou(const Box& a, const Box& b);

// Where a tensor came from: maps tensor pixels back to frame pixels through the geometry of
// the preprocessing (tensor = frame * scale + offset).
[[nodiscard]] Point to_frame(const Point& tensor, const Letterbox& geometry);

}  // namespace weave::vision
