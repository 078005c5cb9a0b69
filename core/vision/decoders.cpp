// The modes of the registry besides classification: angle and ctc (per row), db, yolo, yolov8
// and ssd (regions on the frame). Each adapts a decoding function of its own file.
#include <charconv>

#include "core/vision/box_detection.h"
#include "core/vision/classification.h"
#include "core/vision/ctc.h"
#include "core/vision/decoder.h"
#include "core/vision/text_detection.h"

namespace weave::vision {

namespace {

// Mode "angle": a direction classifier (PP-OCR cls: classes "0" and "180") per row. Labels are
// the degrees; a turn other than 0 is believed only from angle_threshold on.
class AngleDecoder final : public Decoder {
  // Top-1 of every row; without labels the classes are PP-OCR cls's 0 and 180 degrees.
  static DecoderOptions with_angles(DecoderOptions o) {
    o.top_k = 1;
    o.threshold = -std::numeric_limits<double>::infinity();
    if (o.labels.empty()) o.labels = {"0", "180"};
    return o;
  }

 public:
  explicit AngleDecoder(DecoderOptions o) : classify_(with_angles(o)), threshold_(o.angle_threshold) {
    for (const std::string& l : with_angles(o).labels) {
      int deg = 0;
      const auto r = std::from_chars(l.data(), l.data() + l.size(), deg);
      degrees_.push_back(r.ec == std::errc() && r.ptr == l.data() + l.size() ? deg : -1);
    }
  }
  [[nodiscard]] std::string_view mode() const override { return "angle"; }
  [[nodiscard]] ResultRegions result_regions() const override { return ResultRegions::text; }
  [[nodiscard]] bool per_row() const override { return true; }
  [[nodiscard]] Status accepts(DType dtype, const Dims& dims) const override {
    WEAVE_TRY(classify_.accepts(dtype, dims));
    if (static_cast<std::size_t>(dims[dims.rank() - 1]) != degrees_.size())
      return make_error("angle: the labels give ", degrees_.size(), " angles but the model has ",
                        dims[dims.rank() - 1], " classes");
    return {};
  }
  [[nodiscard]] Expected<DecodeResult> decode(const ConstTensorView& t,
                                              const DecodeContext& c) const override {
    auto result = classify_.decode(t, c);
    if (!result) return result;
    for (RowResult& row : result->rows) {
      if (row.classes.empty()) continue;
      const Classification& best = row.classes.front();
      const int deg = degrees_[static_cast<std::size_t>(best.class_id)];
      row.angle = deg > 0 && best.score >= threshold_ ? deg : 0;
      row.angle_score = best.score;
      row.classes.clear();  // the angle is the result
    }
    return result;
  }

 private:
  ClassificationDecoder classify_;
  float threshold_;
  std::vector<int> degrees_;
};

class CtcDecoder final : public Decoder {
 public:
  explicit CtcDecoder(DecoderOptions o) : keys_(std::move(o.labels)) {}
  [[nodiscard]] std::string_view mode() const override { return "ctc"; }
  [[nodiscard]] ResultRegions result_regions() const override { return ResultRegions::text; }
  [[nodiscard]] bool per_row() const override { return true; }
  [[nodiscard]] Status accepts(DType dtype, const Dims& dims) const override {
    return check_ctc_tensor(dtype, dims, keys_.size());
  }
  [[nodiscard]] Expected<DecodeResult> decode(const ConstTensorView& t, const DecodeContext&) const override {
    auto texts = ctc_greedy(t, keys_);
    if (!texts) return texts.error();
    DecodeResult result;
    for (TextResult& text : *texts) {
      RowResult row;
      row.text = std::move(text);
      result.rows.push_back(std::move(row));
    }
    return result;
  }

 private:
  std::vector<std::string> keys_;
};

// The geometry of a context, or a stretch from the map to the frame when it has none.
Letterbox geometry_of(const DecodeContext& c, int map_width, int map_height) {
  if (c.geometry.scale_x > 0 && c.input_width > 0) return c.geometry;
  Letterbox g;
  g.scale_x = static_cast<double>(map_width) / std::max(1, c.frame_width);
  g.scale_y = static_cast<double>(map_height) / std::max(1, c.frame_height);
  return g;
}

Status need_frame(std::string_view mode, const DecodeContext& c) {
  if (c.frame_width <= 0 || c.frame_height <= 0)
    return make_error(mode, ": the frame size is unknown (regions need the video frame)");
  return {};
}

class DbDecoder final : public Decoder {
 public:
  explicit DbDecoder(DecoderOptions o) : opts_(o.text) {}
  [[nodiscard]] std::string_view mode() const override { return "db"; }
  [[nodiscard]] ResultRegions result_regions() const override { return ResultRegions::text; }
  [[nodiscard]] bool finds_regions() const override { return true; }
  [[nodiscard]] Status accepts(DType dtype, const Dims& dims) const override {
    return check_text_map(dtype, dims);
  }
  [[nodiscard]] Expected<DecodeResult> decode(const ConstTensorView& t,
                                              const DecodeContext& c) const override {
    WEAVE_TRY(need_frame("db", c));
    const auto h = static_cast<int>(t.dims[t.dims.rank() - 2]),
               w = static_cast<int>(t.dims[t.dims.rank() - 1]);
    auto regions = decode_text_boxes(t, opts_, geometry_of(c, w, h), c.frame_width, c.frame_height);
    if (!regions) return regions.error();
    DecodeResult result;
    result.regions = std::move(*regions);
    return result;
  }

 private:
  TextDetectionOptions opts_;
};

class BoxDecoder final : public Decoder {
 public:
  BoxDecoder(BoxFormat format, std::string mode, DecoderOptions o)
      : format_(format), mode_(std::move(mode)), opts_(std::move(o)) {}
  [[nodiscard]] std::string_view mode() const override { return mode_; }
  [[nodiscard]] ResultRegions result_regions() const override { return ResultRegions::objects; }
  [[nodiscard]] bool finds_regions() const override { return true; }
  [[nodiscard]] Status accepts(DType dtype, const Dims& dims) const override {
    return check_box_tensor(format_, dtype, dims);
  }
  [[nodiscard]] Expected<DecodeResult> decode(const ConstTensorView& t,
                                              const DecodeContext& c) const override {
    WEAVE_TRY(need_frame(mode_, c));
    // Without a known model input, boxes are taken to be in frame pixels.
    const int iw = c.input_width > 0 ? c.input_width : c.frame_width;
    const int ih = c.input_height > 0 ? c.input_height : c.frame_height;
    auto regions = decode_boxes(format_, t, opts_.boxes, opts_.labels, iw, ih, geometry_of(c, iw, ih),
                                c.frame_width, c.frame_height);
    if (!regions) return regions.error();
    DecodeResult result;
    result.regions = std::move(*regions);
    return result;
  }

 private:
  BoxFormat format_;
  std::string mode_;
  DecoderOptions opts_;
};

template <class D>
DecoderMaker maker() {
  return [](const DecoderOptions& o) -> Expected<std::unique_ptr<Decoder>> {
    return std::unique_ptr<Decoder>(std::make_unique<D>(o));
  };
}

DecoderMaker box_maker(BoxFormat f, const char* mode) {
  return [f, mode](const DecoderOptions& o) -> Expected<std::unique_ptr<Decoder>> {
    return std::unique_ptr<Decoder>(std::make_unique<BoxDecoder>(f, mode, o));
  };
}

}  // namespace

DecoderRegistry& DecoderRegistry::global() {
  static DecoderRegistry* registry = [] {
    auto* r = new DecoderRegistry();  // never destroyed: usable from static destructors too
    r->add("classification", make_classification_decoder);
    r->add("angle", maker<AngleDecoder>());
    r->add("ctc", maker<CtcDecoder>());
    r->add("db", maker<DbDecoder>());
    r->add("yolo", box_maker(BoxFormat::yolo, "yolo"));
    r->add("yolov8", box_maker(BoxFormat::yolov8, "yolov8"));
    r->add("ssd", box_maker(BoxFormat::ssd, "ssd"));
    return r;
  }();
  return *registry;
}

}  // namespace weave::vision
