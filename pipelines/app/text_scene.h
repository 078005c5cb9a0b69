// A video of known text, rendered by GStreamer's own textoverlay: strings in several fonts and
// sizes (upper and lower case, digits) moving across a plain background, with a few frames
// without any text. Used by pipelines/ocr.sh (through render_text) as its default input and by
// the OCR tests, which also need the ground truth: where each string is on each frame, measured
// from the pixels of a rendering of that string alone.
//
// GStreamer API only (no Weave headers): like the other applications in pipelines/app.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace weave::demo {

struct SceneText {
  std::string text;
  std::string font;  // Pango font description, e.g. "Sans Bold 30"
  // textoverlay's clamped position (0..1 of the room left beside the text) on the first frame,
  // and its change per frame: the text moves across the frame.
  double x0 = 0.0, y0 = 0.0, dx = 0.0, dy = 0.0;
  unsigned color = 0xff141414;  // ARGB
  unsigned outline = 0;         // ARGB of an outline around the glyphs; 0: none
};

struct Scene {
  int width = 1280;
  int height = 720;
  int fps = 10;
  int frames = 40;
  std::string name = "demo";
  unsigned background = 0xfff4f0e8;  // ARGB
  // A videotestsrc pattern drawn in `background` and `pattern_color` ("spokes", "pinwheel",
  // "circular"...) instead of one plain colour; empty: plain.
  std::string pattern;
  unsigned pattern_color = 0;
  std::vector<SceneText> texts;
  std::vector<int> blank_frames;  // frames on which no text is shown
};

// The scene of pipelines/ocr.sh and the tests: eight strings in DejaVu Sans, Serif and Mono,
// regular, bold and italic, 20 to 32 points.
[[nodiscard]] Scene demo_scene(int width = 1280, int height = 720, int frames = 40);

// The varied set of bench/ocr_accuracy.sh (small, spaced, light and coloured text): five
// scenes of 1280x720 by default --
//  - "spacing": monospaced, serif and sans strings of 14 to 28 points on white, some with wide
//    gaps between words ("Word   12") that a detector splits into two boxes;
//  - "patterned": dark, white-outlined, yellow and blue text over grey spokes;
//  - "small": 11 to 14 point text on light grey;
//  - "colours": light and coloured text on a dark background;
//  - "mixed": other strings, sizes and colours over light rings, held out while the cascade's
//    settings were chosen on the four above.
// A string's truth is its words with single spaces (what a reader of the line should say).
[[nodiscard]] std::vector<Scene> varied_scenes(int width = 1280, int height = 720, int frames = 20);
// The scene of that name, "demo" or one of varied_scenes(), into `out`; false when unknown.
[[nodiscard]] bool scene_by_name(const std::string& name, int width, int height, int frames, Scene& out);

// `text` with runs of spaces made one and no space at either end.
[[nodiscard]] std::string single_spaced(const std::string& text);

// Where a string is on a frame: its inked pixels' bounding box (empty when not shown).
struct Truth {
  std::string text;
  int x = 0, y = 0, width = 0, height = 0;
};

// One rendered frame: RGB pixels (width * 3 bytes a row) and its timestamp.
using FrameSink = std::function<void(int frame, std::uint64_t pts, const std::uint8_t* rgb)>;

// Renders `scene` through `tail` (a gst-launch description after the RGB frames with the text,
// e.g. "videoconvert ! vp8enc ! webmmux ! filesink location=x.webm"); with a tail ending in
// "appsink name=sink", `sink` gets every frame. `only` >= 0 shows that string alone. Returns ""
// on success, else the error.
[[nodiscard]] std::string render_scene(const Scene& scene, const std::string& tail,
                                       const FrameSink& sink = {}, int only = -1);

// The ground truth of every frame, string by string (one rendering per string).
[[nodiscard]] std::string scene_truth(const Scene& scene, std::vector<std::vector<Truth>>& truth);

// "{"pts":..,"texts":[{"text":..,"box":[x,y,w,h]}]}" for one frame (strings not shown left out).
[[nodiscard]] std::string truth_json_line(std::uint64_t pts, const std::vector<Truth>& truth);

// How to fill in the placeholders of pipelines/ocr_cascade.txt.
struct CascadeOptions {
  std::string prefix;    // of element names (several cascades in one pipeline)
  std::string models;    // directory of the PP-OCR models and keys
  std::string cache;     // compiled-model cache directory
  std::string json;      // JSON lines of the last step; empty: none
  bool track = false;    // weavetrack (named <prefix>track) after text detection
  int detect_every = 1;  // the detector runs on every N-th frame (needs track)
  int read_every = 0;    // a track's text is read on its first frame and every N-th (needs track)
};

// The cascade of pipelines/ocr_cascade.txt (`path`) as one gst-launch description, its
// placeholders filled in. "" when the file cannot be read.
[[nodiscard]] std::string ocr_cascade(const std::string& path, const CascadeOptions& options);

// What the cascade read on a frame: a text and the bounding box of its corners.
using Read = Truth;

// How well a run read a scene. A string shown on a frame is found when a text read on that frame
// overlaps it with IoU >= 0.5, or when each box's centre lies in the other (the truth is the
// inked pixels, and a reader's box is grown around them: on small text a well-placed box can stay
// under IoU 0.5; half a line read as one box does not hold the line's centre). It is read when
// the best such text equals it exactly, runs of spaces counted as one.
struct Score {
  int shown = 0;
  int found = 0;
  int read = 0;
  // Strings read exactly anywhere on their frame, whatever the box (each read counts once): the
  // same rule for a reader whose boxes sit off the text.
  int read_anywhere = 0;
  std::vector<std::string> misses;  // "frame 3: 'Model42' read as 'Mode142'" or "... not found"
};
[[nodiscard]] Score score(const std::vector<std::vector<Truth>>& truth,
                          const std::vector<std::vector<Read>>& read);
[[nodiscard]] double iou(const Truth& a, const Truth& b);
[[nodiscard]] bool centres_inside_each_other(const Truth& a, const Truth& b);

}  // namespace weave::demo
