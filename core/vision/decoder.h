// Model outputs -> results a user reads (the logic of weavedecode and weavemeta). One Decoder per
// mode, created by name from a registry so new modes plug in without touching the elements:
// implement Decoder, fill the part of DecodeResult the mode produces, register a maker.
//
// What a mode produces decides where its results go:
//  - `classes`: one result for the tensor (weavedecode's classification);
//  - `rows`: one result per batch row, i.e. per region the batch was cropped from
//    (classification, angle, ctc): weavemeta attaches row i to the i-th region of the crops;
//  - `regions`: new regions on the frame (db, yolo, yolov8, ssd): weavemeta adds them as ROIs.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/vision/box_detection.h"
#include "core/vision/regions.h"
#include "core/vision/text_detection.h"

namespace weave::vision {

struct DecoderOptions {
  std::vector<std::string> labels;  // class id -> name (keys for ctc); may be empty for classes
  std::size_t top_k = 5;            // classification: 0 = all
  bool softmax = false;             // classification, angle: scores are logits
  double threshold = -std::numeric_limits<double>::infinity();  // classification: least score
  float angle_threshold = 0.9f;  // angle: a turn is believed from this score on (PP-OCR cls_thresh)
  TextDetectionOptions text;     // db
  BoxDetectionOptions boxes;     // yolo, yolov8, ssd
};

// Where the tensor came from, for modes that map back to the frame. Zero sizes: unknown.
struct DecodeContext {
  int frame_width = 0;
  int frame_height = 0;
  int input_width = 0;  // the model input the frame was resized to
  int input_height = 0;
  Letterbox geometry;  // input = frame * scale + offset
};

struct Classification {
  int class_id = 0;
  std::string label;  // from the label list, or the id in decimal when the list has no entry
  float score = 0.0f;
};

// The result of one batch row.
struct RowResult {
  std::vector<Classification> classes;  // best first
  std::optional<int> angle;             // angle: degrees the content is turned
  float angle_score = 0.0f;
  std::optional<TextResult> text;  // ctc
};

// What one tensor decodes to. Each mode fills its own part.
struct DecodeResult {
  std::vector<Classification> classes;  // classification: the first (or only) row, best first
  std::vector<RowResult> rows;          // per batch row
  std::vector<Region> regions;          // detections on the frame
};

// The regions a mode's results are about: text (db finds it; angle and ctc read it), objects
// (the detectors), or whichever regions the element hands it (classification). It decides the
// JSON arrays of a stream (json.h, keys_for).
enum class ResultRegions { text, objects, any };

class Decoder {
 public:
  virtual ~Decoder() = default;
  [[nodiscard]] virtual ResultRegions result_regions() const { return ResultRegions::any; }
  [[nodiscard]] virtual std::string_view mode() const = 0;
  // Whether results are per batch row (attached to the regions the rows were cropped from).
  [[nodiscard]] virtual bool per_row() const { return false; }
  // Whether the mode finds regions on the frame.
  [[nodiscard]] virtual bool finds_regions() const { return false; }
  // Checked once when the tensor's shape is known (caps negotiation), so decode() can trust it.
  [[nodiscard]] virtual Status accepts(DType dtype, const Dims& dims) const = 0;
  // `tensor` has a dtype and dims accepts() allowed and holds its bytes.
  [[nodiscard]] virtual Expected<DecodeResult> decode(const ConstTensorView& tensor,
                                                      const DecodeContext& context = {}) const = 0;
};

using DecoderMaker = std::function<Expected<std::unique_ptr<Decoder>>(const DecoderOptions&)>;

// Modes by name. global() comes with the built-in modes registered: classification, angle, ctc,
// db, yolo, yolov8, ssd.
class DecoderRegistry {
 public:
  static DecoderRegistry& global();
  void add(std::string mode, DecoderMaker maker);
  // Unknown modes are an error listing the known ones.
  [[nodiscard]] Expected<std::unique_ptr<Decoder>> make(std::string_view mode,
                                                        const DecoderOptions& opts) const;
  [[nodiscard]] std::vector<std::string> modes() const;

 private:
  std::vector<std::pair<std::string, DecoderMaker>> makers_;
};

}  // namespace weave::vision
