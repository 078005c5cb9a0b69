// bench_gst_instances: memory of N weaveinfer elements of one model in one pipeline.
//
//   bench_gst_instances MODEL N CAPS [--buffers B] [--sink DESC]
//
// Builds, with gst_parse_launch,
//   appsrc caps=CAPS ! tee name=t  t. ! queue ! weaveinfer model=MODEL threads=1 ! SINK  (x N)
// pushes B buffers, waits until every element has processed all of them (frames-processed) and
// EOS has reached every sink, then reads the process's peak and current RSS and prints one JSON
// line. SINK is DESC, by default "fakesink sync=false enable-last-sample=false": a fakesink
// otherwise keeps its last frame, memory of the sink and not of weaveinfer (pass
// --sink "fakesink sync=false" to count it too). N = 0 runs `appsrc ! SINK` with the weave
// plugin loaded: the baseline of this binary. Run each N in a fresh process (GST_PLUGIN_PATH
// must reach libgstweave.so).
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_gst_util.h"

namespace weave::bench {
namespace {

int run(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (argc < 4) die("usage: bench_gst_instances MODEL N CAPS [--buffers B] [--sink DESC]");
  const std::string model = argv[1];
  const int n = std::atoi(argv[2]);
  const std::string caps = argv[3];
  int buffers = 3;
  std::string sink = "fakesink sync=false enable-last-sample=false";
  for (int a = 4; a < argc; a += 2) {
    const std::string opt = argv[a];
    if (a + 1 >= argc) die("bench_gst_instances: " + opt + " needs a value");
    if (opt == "--buffers")
      buffers = std::max(1, std::atoi(argv[a + 1]));
    else if (opt == "--sink")
      sink = argv[a + 1];
    else
      die("bench_gst_instances: unknown option " + opt);
  }

  nlohmann::json j;
  j["bench"] = "gst_instances_mem";
  j["model"] = model;
  j["n"] = n;
  j["sink"] = sink;
  // Load the plugin even for the baseline, so N = 0 and N >= 1 carry the same libraries.
  GstElementFactory* wf = gst_element_factory_find("weaveinfer");
  if (!wf) die("bench_gst_instances: no weaveinfer element (set GST_PLUGIN_PATH to build/gst-plugin)");
  GstPluginFeature* loaded = gst_plugin_feature_load(GST_PLUGIN_FEATURE(wf));
  if (!loaded) die("bench_gst_instances: weaveinfer failed to load");

  std::string desc = "appsrc name=src format=time caps=\"" + caps + "\" ";
  if (n == 0) {
    desc += "! " + sink;
  } else {
    desc += "! tee name=t";
    for (int i = 0; i < n; ++i)
      desc += " t. ! queue ! weaveinfer name=w" + std::to_string(i) + " model=\"" + model +
              "\" threads=1 ! " + sink;
  }
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
  if (!pipeline || err)
    die(std::string("bench_gst_instances: ") + (err ? err->message : "parse failed") + "\n" + desc);
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    die("bench_gst_instances: pipeline refused PLAYING");

  const std::size_t bytes = float_tensor_bytes(caps, "bench_gst_instances");
  for (int b = 0; b < buffers; ++b) {
    GstBuffer* buf = gst_buffer_new_allocate(nullptr, bytes, nullptr);
    GstMapInfo map;
    gst_buffer_map(buf, &map, GST_MAP_WRITE);
    auto* f = reinterpret_cast<float*>(map.data);
    for (std::size_t i = 0; i < bytes / 4; ++i) f[i] = static_cast<float>(i % 251) / 251.0f - 0.5f;
    gst_buffer_unmap(buf, &map);
    GST_BUFFER_PTS(buf) = static_cast<GstClockTime>(b) * GST_SECOND / 30;
    GST_BUFFER_DURATION(buf) = GST_SECOND / 30;
    if (gst_app_src_push_buffer(GST_APP_SRC(src), buf) != GST_FLOW_OK)
      die("bench_gst_instances: push failed");
  }

  // Wait until every element has run every buffer (or an error shows up on the bus).
  GstBus* bus = gst_element_get_bus(pipeline);
  auto t0 = Clock::now();
  for (;;) {
    if (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
      GError* e = nullptr;
      gst_message_parse_error(m, &e, nullptr);
      die(std::string("bench_gst_instances: ") + e->message);
    }
    bool done = true;
    for (int i = 0; i < n && done; ++i) {
      GstElement* w = gst_bin_get_by_name(GST_BIN(pipeline), ("w" + std::to_string(i)).c_str());
      guint64 frames = 0;
      g_object_get(w, "frames-processed", &frames, nullptr);
      gst_object_unref(w);
      done = frames >= static_cast<guint64>(buffers);
    }
    if (done) break;
    if (ms_since(t0) > 1800e3) die("bench_gst_instances: timed out waiting for frames");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  j["wait_ms"] = ms_since(t0);
  // frames-processed counts a frame before its output is pushed: let EOS through every branch
  // (sinks post EOS once all came before it), so no frame is still on its way when measured.
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstMessage* eos = gst_bus_timed_pop_filtered(
      bus, 600 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  if (eos == nullptr || GST_MESSAGE_TYPE(eos) != GST_MESSAGE_EOS) die("bench_gst_instances: no EOS");
  gst_message_unref(eos);
  j["end"] = memory_json(read_proc_memory());
  j["buffers"] = buffers;
  if (n > 0) {
    GstElement* w0 = gst_bin_get_by_name(GST_BIN(pipeline), "w0");
    gchar* id = nullptr;
    g_object_get(w0, "factory-id", &id, nullptr);
    j["factory_id_w0"] = id ? id : "";
    bool shared = true;
    for (int i = 1; i < n; ++i) {
      GstElement* w = gst_bin_get_by_name(GST_BIN(pipeline), ("w" + std::to_string(i)).c_str());
      gchar* other = nullptr;
      g_object_get(w, "factory-id", &other, nullptr);
      shared = shared && id && other && std::string(id) == other;
      g_free(other);
      gst_object_unref(w);
    }
    j["factory_shared"] = shared;
    g_free(id);
    gst_object_unref(w0);
  }

  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  gst_object_unref(loaded);
  gst_object_unref(wf);
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace
}  // namespace weave::bench

int main(int argc, char** argv) {
  return weave::bench::run(argc, argv);
}
