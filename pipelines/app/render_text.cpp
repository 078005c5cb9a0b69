// render_text: writes the video of known text that pipelines/ocr.sh reads by default (and the
// place of every string on every frame, for checking what was read).
//
//   render_text OUT.webm [--truth FILE.jsonl] [--frames N] [--width W] [--height H] [--scene NAME]
//
// --scene: "demo" (default, the video of pipelines/ocr.sh) or one of the varied set of
// bench/ocr_accuracy.sh: spacing, patterned, small, colours, mixed (text_scene.h); "list" prints them.
//
// The strings are drawn by GStreamer's textoverlay (see text_scene.h), encoded as VP8 in WebM at
// a rate high enough to keep the edges of small text. The truth file has one line per frame:
// {"pts":0,"texts":[{"text":"INVOICE 2024","box":[x,y,w,h]}, ...]} (the inked pixels of each string).
#include <gst/gst.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "pipelines/app/text_scene.h"

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  const char* usage =
      "usage: render_text OUT.webm [--truth FILE] [--frames N] [--width W] [--height H] [--scene NAME]\n";
  std::string out, truth_path;
  int frames = 40, width = 1280, height = 720;
  std::string scene_name = "demo";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--truth") {
      truth_path = next();
    } else if (a == "--frames") {
      frames = std::atoi(next());
    } else if (a == "--scene") {
      scene_name = next();
    } else if (a == "--width") {
      width = std::atoi(next());
    } else if (a == "--height") {
      height = std::atoi(next());
    } else if (out.empty() && a[0] != '-') {
      out = a;
    } else {
      std::fprintf(stderr, "%s", usage);
      return 2;
    }
  }
  if (scene_name == "list") {
    std::printf("demo\n");
    for (const auto& s : weave::demo::varied_scenes()) std::printf("%s\n", s.name.c_str());
    return 0;
  }
  if (out.empty() || frames < 1 || width < 64 || height < 64) {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  weave::demo::Scene scene;
  if (!weave::demo::scene_by_name(scene_name, width, height, frames, scene)) {
    std::fprintf(stderr, "render_text: no scene '%s' (render_text --scene list)\n", scene_name.c_str());
    return 2;
  }
  gchar* location = g_strescape(out.c_str(), nullptr);
  const std::string tail = std::string(
                               "videoconvert ! vp8enc deadline=1 target-bitrate=6000000 ! webmmux ! "
                               "filesink location=\"") +
                           location + "\"";
  g_free(location);
  if (std::string e = weave::demo::render_scene(scene, tail); !e.empty()) {
    std::fprintf(stderr, "%s\n", e.c_str());
    return 1;
  }
  if (!truth_path.empty()) {
    std::vector<std::vector<weave::demo::Truth>> truth;
    if (std::string e = weave::demo::scene_truth(scene, truth); !e.empty()) {
      std::fprintf(stderr, "%s\n", e.c_str());
      return 1;
    }
    std::ofstream f(truth_path, std::ios::trunc);
    for (std::size_t i = 0; i < truth.size(); ++i)
      f << weave::demo::truth_json_line(i * GST_SECOND / scene.fps, truth[i]) << '\n';
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", truth_path.c_str());
      return 1;
    }
  }
  std::printf("rendered scene %s, %d frames of %dx%d with %zu strings: %s\n", scene.name.c_str(), frames,
              width, height, scene.texts.size(), out.c_str());
  return 0;
}
