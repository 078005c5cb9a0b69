// bench_pipeline: what a GStreamer pipeline costs on top of the executor, and what N streams of
// one model get in one process. Prints one JSON line; asserts nothing (bench/run.py reports).
//
//   bench_pipeline overhead MODEL --width W --height H [--threads T] [--frames N] [--rounds R]
//       One process, two ways to run MODEL (a .weave or .onnx whose input is 1x3xHxW), measured
//       in alternating blocks of N frames, R rounds (the order flips every round):
//       - bare: load_factory + Executor::create (threads = T from the process-wide budget,
//         lend_arena: the options weaveinfer uses), input and output bound to buffers of ours,
//         run() N times on the calling thread;
//       - pipeline: `appsrc ! weaveconvert ! weaveinfer model=MODEL threads=T ! fakesink`, the
//         appsrc pushing WxH RGB frames (so weaveconvert converts and scales to float NCHW but
//         does not resize); timed from the first push of a block until the sink has the block's
//         last output.
//       Prints frames per second of both per round and their medians. overhead_pct is the
//       median over rounds of (bare fps / pipeline fps - 1) x 100, each round comparing its two
//       adjacent blocks: a shared VM's speed drifts by more than the overhead between rounds,
//       and pairing blocks that ran back to back cancels the drift. overhead_of_medians_pct is
//       the same ratio taken from the two medians, for comparison.
//
//   bench_pipeline convert --width W --height H [--frames N]
//       `appsrc ! weaveconvert ! fakesink` alone, N WxH RGB frames converted to float NCHW of the
//       same size: weaveconvert's mean time per frame (its mean-ms). Run it with WEAVE_ISA=none
//       and without to compare the portable conversion with the fast path's.
//
//   bench_pipeline streams MODEL CAPS [--streams S] [--frames N] [--threads T] [--batch-size B]
//       S independent streams in one pipeline: S x `appsrc caps=CAPS ! weaveinfer model=MODEL
//       [threads=T] [batch-size=B] ! fakesink`, each appsrc fed by its own thread (with B > 1 the
//       elements batch up to B streams' frames into one run), all elements sharing the
//       process-wide thread budget (set it with WEAVE_NUM_THREADS). After one warm-up frame per
//       stream, times S x N frames: total frames per second, and the CPU time of the process
//       over the same interval (cpu_s / wall_s = cores kept busy on average).
//
// GST_PLUGIN_PATH must reach libgstweave.so. Frames are pushed as new GstBuffers wrapping one
// shared, read-only block of memory (no per-frame allocation of pixels on our side).
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <sys/resource.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench/bench_gst_util.h"
#include "core/loader/model_loader.h"
#include "core/runtime/executor.h"

namespace weave::bench {
namespace {

struct Options {
  std::string cmd, model, caps;
  int width = 224, height = 224, threads = 1, frames = 20, rounds = 3, streams = 4, batch_size = 1;
  bool threads_set = false;
};

Options parse(int argc, char** argv) {
  const char* usage =
      "usage: bench_pipeline overhead MODEL --width W --height H [--threads T] [--frames N] [--rounds R]\n"
      "       bench_pipeline streams MODEL CAPS [--streams S] [--frames N] [--threads T] [--batch-size B]\n"
      "       bench_pipeline convert --width W --height H [--frames N]";
  if (argc < 2) die(usage);
  Options o;
  o.cmd = argv[1];
  int i = 2;
  if (o.cmd != "convert") {
    if (argc < 3) die(usage);
    o.model = argv[2];
    i = 3;
  }
  if (o.cmd == "streams") {
    if (argc < 4) die(usage);
    o.caps = argv[3];
    i = 4;
  } else if (o.cmd != "overhead" && o.cmd != "convert") {
    die(usage);
  }
  for (; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) die("bench_pipeline: " + k + " needs a value");
    const int v = std::atoi(argv[++i]);
    if (v < 1 || v > 100000) die("bench_pipeline: " + k + " expects a positive integer");
    if (k == "--width") {
      o.width = v;
    } else if (k == "--height") {
      o.height = v;
    } else if (k == "--threads") {
      o.threads = v;
      o.threads_set = true;
    } else if (k == "--frames") {
      o.frames = v;
    } else if (k == "--rounds") {
      o.rounds = v;
    } else if (k == "--streams") {
      o.streams = v;
    } else if (k == "--batch-size") {
      o.batch_size = v;
    } else {
      die("bench_pipeline: unknown option " + k);
    }
  }
  return o;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Output buffers seen by each fakesink (its "handoff" signal), with a way to wait for a count.
class SinkCounter {
 public:
  explicit SinkCounter(int sinks) : counts_(static_cast<std::size_t>(sinks), 0) {}

  void attach(GstElement* pipeline, int index, const std::string& name) {
    GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), name.c_str());
    if (!sink) die("bench_pipeline: no element " + name);
    g_object_set(sink, "signal-handoffs", TRUE, nullptr);
    slots_.push_back({this, index});
    g_signal_connect(sink, "handoff", G_CALLBACK(&SinkCounter::on_handoff), &slots_.back());
    gst_object_unref(sink);
  }

  // Waits until every sink has seen at least `target` buffers; dies on a bus error or after
  // `timeout_s` seconds, so a broken pipeline never hangs the benchmark.
  void wait_all(GstBus* bus, uint64_t target, double timeout_s) {
    const auto t0 = Clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      bool done = true;
      for (uint64_t c : counts_) done = done && c >= target;
      if (done) return;
      cv_.wait_for(lock, std::chrono::milliseconds(20));
      if (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
        GError* e = nullptr;
        gchar* dbg = nullptr;
        gst_message_parse_error(m, &e, &dbg);
        die(std::string("bench_pipeline: ") + e->message + (dbg ? std::string("\n") + dbg : ""));
      }
      if (ms_since(t0) > timeout_s * 1e3) die("bench_pipeline: timed out waiting for output frames");
    }
  }

 private:
  struct Slot {
    SinkCounter* self;
    int index;
  };
  static void on_handoff(GstElement*, GstBuffer*, GstPad*, gpointer data) {
    auto* slot = static_cast<Slot*>(data);
    {
      std::lock_guard<std::mutex> lock(slot->self->mutex_);
      ++slot->self->counts_[static_cast<std::size_t>(slot->index)];
    }
    slot->self->cv_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<uint64_t> counts_;
  std::deque<Slot> slots_;  // stable addresses for the signal's user data
};

// One frame's memory, shared read-only by every buffer pushed.
GstMemory* frame_memory(std::size_t bytes, bool floats) {
  GstMemory* mem = gst_allocator_alloc(nullptr, bytes, nullptr);
  GstMapInfo map;
  if (!mem || !gst_memory_map(mem, &map, GST_MAP_WRITE)) die("bench_pipeline: cannot allocate a frame");
  if (floats) {
    auto* f = reinterpret_cast<float*>(map.data);
    for (std::size_t i = 0; i < bytes / 4; ++i) f[i] = static_cast<float>(i % 251) / 251.0f - 0.5f;
  } else {
    for (std::size_t i = 0; i < bytes; ++i) map.data[i] = static_cast<uint8_t>((i * 7) % 251);
  }
  gst_memory_unmap(mem, &map);
  return mem;
}

void push_frame(GstElement* src, GstMemory* mem, uint64_t index) {
  GstBuffer* buf = gst_buffer_new();
  gst_buffer_append_memory(buf, gst_memory_ref(mem));
  GST_BUFFER_PTS(buf) = static_cast<GstClockTime>(index) * GST_SECOND / 30;
  GST_BUFFER_DURATION(buf) = GST_SECOND / 30;
  if (gst_app_src_push_buffer(GST_APP_SRC(src), buf) != GST_FLOW_OK) die("bench_pipeline: push refused");
}

GstElement* launch(const std::string& desc) {
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
  if (!pipeline || err)
    die(std::string("bench_pipeline: ") + (err ? err->message : "parse failed") + "\n" + desc);
  return pipeline;
}

void play(GstElement* pipeline) {
  if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    die("bench_pipeline: pipeline refused PLAYING");
}

// The weaveinfer element's counters that say whether it ran as intended.
nlohmann::json infer_counters(GstElement* pipeline, const std::string& name) {
  GstElement* w = gst_bin_get_by_name(GST_BIN(pipeline), name.c_str());
  if (!w) return {};
  guint64 processed = 0, dropped = 0, in_copies = 0, out_copies = 0, batched = 0;
  double mean_ms = 0;
  g_object_get(w, "frames-processed", &processed, "frames-dropped", &dropped, "input-copies", &in_copies,
               "output-copies", &out_copies, "mean-inference-ms", &mean_ms, "frames-batched", &batched,
               nullptr);
  gst_object_unref(w);
  return {{"frames_processed", processed}, {"frames_dropped", dropped},   {"frames_batched", batched},
          {"input_copies", in_copies},     {"output_copies", out_copies}, {"mean_inference_ms", mean_ms}};
}

std::string appsrc_desc(const std::string& name, const std::string& caps, std::size_t frame_bytes) {
  // block=true with room for two frames: the feeder waits instead of queueing everything.
  return "appsrc name=" + name + " format=time block=true max-bytes=" + std::to_string(2 * frame_bytes) +
         " caps=\"" + caps + "\"";
}

// The RGB frames the overhead and convert modes push: o.width x o.height, 3 bytes a pixel.
std::size_t rgb_frame_bytes(const Options& o) {
  return static_cast<std::size_t>(o.width) * o.height * 3;
}
std::string rgb_caps(const Options& o) {
  return "video/x-raw,format=RGB,width=" + std::to_string(o.width) + ",height=" + std::to_string(o.height) +
         ",framerate=30/1";
}

int run_overhead(const Options& o) {
  // The bare executor, configured as weaveinfer configures its own.
  LoadOptions lo;
  lo.factory.plan_shapes["input"] = Shape{1, 3, o.height, o.width};
  lo.use_cache = true;
  auto factory = load_factory(o.model, lo);
  if (!factory) die("bench_pipeline: " + factory.message());
  if ((*factory)->num_inputs() != 1) die("bench_pipeline: overhead needs a model of one input");
  ExecutorOptions eo;
  eo.threads = o.threads;
  eo.lend_arena = true;
  auto ex = Executor::create(*factory, eo);
  if (!ex) die("bench_pipeline: " + ex.message());
  const std::vector<Dims> dims{Dims{1, 3, o.height, o.width}};
  auto inputs = make_inputs(**factory, dims);
  if (Status s = ex->bind_input(0, inputs[0].view()); !s) die("bench_pipeline: " + s.message());
  std::vector<Tensor> outputs;
  for (int k = 0; k < (*factory)->num_outputs(); ++k) {
    auto od = ex->output_dims(k);
    if (!od) die("bench_pipeline: " + od.message());
    outputs.emplace_back((*factory)->output_info(k).dtype, *od);
    if (Status s = ex->bind_output(k, outputs.back().view()); !s) die("bench_pipeline: " + s.message());
  }

  const std::size_t frame_bytes = rgb_frame_bytes(o);
  const std::string caps = rgb_caps(o);
  GstElement* pipeline =
      launch(appsrc_desc("src", caps, frame_bytes) + " ! weaveconvert name=c ! weaveinfer name=w model=\"" +
             o.model + "\" threads=" + std::to_string(o.threads) +
             " ! fakesink name=sink sync=false enable-last-sample=false");
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstBus* bus = gst_element_get_bus(pipeline);
  SinkCounter counter(1);
  counter.attach(pipeline, 0, "sink");
  play(pipeline);
  GstMemory* mem = frame_memory(frame_bytes, false);
  uint64_t pushed = 0;
  const double timeout_s = 600;
  // Warm-up: both paths run twice before anything is timed.
  for (int k = 0; k < 2; ++k) {
    push_frame(src, mem, pushed++);
    if (Status s = ex->run(); !s) die("bench_pipeline: " + s.message());
  }
  counter.wait_all(bus, pushed, timeout_s);

  std::vector<double> bare_fps, pipe_fps;
  for (int r = 0; r < o.rounds; ++r) {
    for (int part = 0; part < 2; ++part) {
      const bool bare = (part == 0) == (r % 2 == 0);  // bare first in even rounds
      const auto t0 = Clock::now();
      if (bare) {
        for (int k = 0; k < o.frames; ++k)
          if (Status s = ex->run(); !s) die("bench_pipeline: " + s.message());
        bare_fps.push_back(o.frames / (ms_since(t0) * 1e-3));
      } else {
        for (int k = 0; k < o.frames; ++k) push_frame(src, mem, pushed++);
        counter.wait_all(bus, pushed, timeout_s);
        pipe_fps.push_back(o.frames / (ms_since(t0) * 1e-3));
      }
    }
  }
  nlohmann::json j;
  j["bench"] = "pipeline_overhead";
  j["model"] = o.model;
  j["width"] = o.width;
  j["height"] = o.height;
  j["threads"] = o.threads;
  j["frames"] = o.frames;
  j["rounds"] = o.rounds;
  j["bare_fps"] = bare_fps;
  j["pipeline_fps"] = pipe_fps;
  j["bare_fps_median"] = median(bare_fps);
  j["pipeline_fps_median"] = median(pipe_fps);
  std::vector<double> paired;
  for (std::size_t r = 0; r < bare_fps.size(); ++r)
    paired.push_back((bare_fps[r] / pipe_fps[r] - 1.0) * 100.0);
  j["overhead_per_round_pct"] = paired;
  j["overhead_pct"] = median(paired);
  j["overhead_of_medians_pct"] = (median(bare_fps) / median(pipe_fps) - 1.0) * 100.0;
  j["weaveinfer"] = infer_counters(pipeline, "w");
  if (GstElement* c = gst_bin_get_by_name(GST_BIN(pipeline), "c")) {
    double convert_ms = 0;
    g_object_get(c, "mean-ms", &convert_ms, nullptr);
    j["weaveconvert_mean_ms"] = convert_ms;
    gst_object_unref(c);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_memory_unref(mem);
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

int run_streams(const Options& o) {
  const std::size_t bytes = float_tensor_bytes(o.caps, "bench_pipeline");
  std::string desc;
  for (int i = 0; i < o.streams; ++i) {
    const std::string n = std::to_string(i);
    desc += appsrc_desc("src" + n, o.caps, bytes) + " ! weaveinfer name=w" + n + " model=\"" + o.model +
            "\"" + (o.threads_set ? " threads=" + std::to_string(o.threads) : std::string()) +
            " batch-size=" + std::to_string(o.batch_size) + " ! fakesink name=sink" + n +
            " sync=false enable-last-sample=false ";
  }
  GstElement* pipeline = launch(desc);
  GstBus* bus = gst_element_get_bus(pipeline);
  SinkCounter counter(o.streams);
  std::vector<GstElement*> srcs;
  for (int i = 0; i < o.streams; ++i) {
    const std::string n = std::to_string(i);
    counter.attach(pipeline, i, "sink" + n);
    srcs.push_back(gst_bin_get_by_name(GST_BIN(pipeline), ("src" + n).c_str()));
  }
  play(pipeline);
  GstMemory* mem = frame_memory(bytes, true);
  for (GstElement* s : srcs) push_frame(s, mem, 0);  // warm-up: one frame per stream
  counter.wait_all(bus, 1, 600);

  const double cpu0 = cpu_seconds();
  const auto t0 = Clock::now();
  std::vector<std::thread> feeders;
  for (GstElement* s : srcs)
    feeders.emplace_back([s, mem, &o] {
      for (int k = 1; k <= o.frames; ++k) push_frame(s, mem, static_cast<uint64_t>(k));
    });
  for (auto& f : feeders) f.join();
  counter.wait_all(bus, 1 + static_cast<uint64_t>(o.frames), 3600);
  const double wall_s = ms_since(t0) * 1e-3;
  const double cpu_s = cpu_seconds() - cpu0;

  nlohmann::json j;
  j["bench"] = "pipeline_streams";
  j["model"] = o.model;
  j["caps"] = o.caps;
  j["streams"] = o.streams;
  j["batch_size"] = o.batch_size;
  j["frames_per_stream"] = o.frames;
  j["threads_property"] = o.threads_set ? nlohmann::json(o.threads) : nlohmann::json("default (0: budget)");
  const char* budget = std::getenv("WEAVE_NUM_THREADS");
  j["weave_num_threads"] = budget ? budget : "";
  j["wall_s"] = wall_s;
  j["cpu_s"] = cpu_s;
  j["cpu_per_wall"] = cpu_s / wall_s;
  j["total_fps"] = o.streams * o.frames / wall_s;
  nlohmann::json per = nlohmann::json::array();
  for (int i = 0; i < o.streams; ++i) {
    const std::string n = std::to_string(i);  // named first: GCC 12 warns (-Wrestrict) on "w" + to_string()
    per.push_back(infer_counters(pipeline, "w" + n));
  }
  j["weaveinfer"] = per;
  for (GstElement* s : srcs) gst_app_src_end_of_stream(GST_APP_SRC(s));
  gst_element_set_state(pipeline, GST_STATE_NULL);
  for (GstElement* s : srcs) gst_object_unref(s);
  gst_memory_unref(mem);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

int run_convert(const Options& o) {
  const std::size_t frame_bytes = rgb_frame_bytes(o);
  const std::string caps = rgb_caps(o);
  GstElement* pipeline =
      launch(appsrc_desc("src", caps, frame_bytes) +
             " ! weaveconvert name=c ! fakesink name=sink sync=false enable-last-sample=false");
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement* conv = gst_bin_get_by_name(GST_BIN(pipeline), "c");
  GstBus* bus = gst_element_get_bus(pipeline);
  SinkCounter counter(1);
  counter.attach(pipeline, 0, "sink");
  play(pipeline);
  GstMemory* mem = frame_memory(frame_bytes, false);
  for (int k = 0; k < o.frames; ++k) push_frame(src, mem, static_cast<uint64_t>(k));
  counter.wait_all(bus, static_cast<uint64_t>(o.frames), 600);
  double mean_ms = 0;
  guint64 frames = 0;
  g_object_get(conv, "mean-ms", &mean_ms, "frames", &frames, nullptr);
  nlohmann::json j;
  j["bench"] = "convert";
  j["width"] = o.width;
  j["height"] = o.height;
  j["frames"] = frames;
  j["weaveconvert_mean_ms"] = mean_ms;
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_memory_unref(mem);
  gst_object_unref(bus);
  gst_object_unref(conv);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

int run(int argc, char** argv) {
  gst_init(&argc, &argv);
  const Options o = parse(argc, argv);
  GstElementFactory* infer = gst_element_factory_find("weaveinfer");
  if (!infer) die("bench_pipeline: no weaveinfer element (set GST_PLUGIN_PATH to build/gst-plugin)");
  gst_object_unref(infer);
  if (o.cmd == "convert") return run_convert(o);
  return o.cmd == "overhead" ? run_overhead(o) : run_streams(o);
}

}  // namespace
}  // namespace weave::bench

int main(int argc, char** argv) {
  return weave::bench::run(argc, argv);
}
