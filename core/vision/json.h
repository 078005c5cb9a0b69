// JSON lines for results: one object per buffer.
//  - a decoded tensor (weavedecode):
//    {"pts":40000000,"results":[{"class_id":281,"label":"tabby","score":0.91}]}
//    with "rows":[[...],[...]] added when the tensor had several rows;
//  - the regions of a video frame (weavemeta): text regions under "texts", others under
//    "objects", each box as its four corners in frame pixels (clockwise from top-left):
//    {"pts":0,"texts":[{"text":"Invoice","score":0.98,"box":[[10,20],[90,20],[90,44],[10,44]]}],
//     "objects":[{"label":"dog","class_id":16,"score":0.8,"box":[...],"classes":[...]}]}
//    A region a tracker followed (weavetrack) adds "track":<id>, and "predicted":true when the
//    frame had no detection of it and the box is where the track was expected.
//    Which of the two arrays a line carries depends on what the pipeline makes, not on the
//    frame: RegionLines writes an array on every frame (empty when the frame has none) once the
//    stream can have such regions: from the first line when the writing element makes them (a
//    detector's "objects", a text detector's or reader's "texts"), else from the first frame
//    that had one. So a consumer can tell "no objects on this frame" from "not a detector".
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/vision/decoder.h"
#include "core/vision/regions.h"
#include "core/vision/text_lines.h"

namespace weave::vision {

// Quoted and escaped JSON string.
[[nodiscard]] std::string json_string(std::string_view s);
// One line (no trailing newline). An unknown pts prints as null, non-finite scores as null.
[[nodiscard]] std::string to_json_line(std::optional<std::uint64_t> pts_ns, const DecodeResult& result);
// Which arrays a line of regions carries.
struct RegionKeys {
  bool texts = false;
  bool objects = false;
  // Text boxes on one line joined (text_lines.h): each entry of "texts" is then a line, and a
  // line of several boxes lists them under "words" (each as an entry would be without joining):
  //   {"text":"Word 12","score":0.97,"box":[...],"words":[{"text":"Word",...},{"text":"12",...}]}
  std::optional<LineMergeOptions> lines;
};

// One line for the regions of a frame (no trailing newline), with the arrays `keys` asks for
// and any other the regions need.
[[nodiscard]] std::string regions_json_line(std::optional<std::uint64_t> pts_ns,
                                            std::span<const Region> regions, const RegionKeys& keys);

// The arrays an element's lines carry from the first one: its decoder's (`roi_type` picks them
// for a decoder of any regions: "text" is text, another type objects, none neither).
[[nodiscard]] RegionKeys keys_for(ResultRegions regions, std::string_view roi_type);

// The lines of one stream: the arrays the writing element makes from the first line, and every
// array from the first frame that needed it on (see the top of this file).
class RegionLines {
 public:
  explicit RegionLines(RegionKeys made = {}) : keys_(made) {}
  [[nodiscard]] std::string line(std::optional<std::uint64_t> pts_ns, std::span<const Region> regions);

 private:
  RegionKeys keys_;
};

// Where the lines of an element go: nowhere, stdout, or a file truncated when opened. Each line
// is flushed as it is written, so a reader sees whole frames.
class JsonLineWriter {
 public:
  // "" = off, "stdout", or a file path. Errors name the path and the reason.
  [[nodiscard]] Status open(const std::string& target);
  void close();
  [[nodiscard]] bool active() const { return to_stdout_ || file_.is_open(); }
  // Writes `line` and a newline; errors name the path.
  [[nodiscard]] Status write(std::string_view line);

 private:
  std::string path_;
  bool to_stdout_ = false;
  std::ofstream file_;
};

}  // namespace weave::vision
