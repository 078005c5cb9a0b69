// Soak test: eight weaveinfer streams of two models in one process, for a set time, with state
// changes under load. scripts/soak.sh makes the models and runs it (docs/reliability.md).
//
//   soak MODEL_DIR CACHE_DIR SECONDS
//
// Streams (every weaveinfer behind a weaveconvert, all non-leaky):
//   tee0..tee2    one videotestsrc, tee'd three ways               soak_classify.onnx
//   solo0..solo2  a videotestsrc each                               soak_classify.onnx
//   pair0, pair1  a videotestsrc each, tee'd into both inputs        soak_pair.onnx (two inputs)
// The first 20% of the time is warm-up. From 20% to 60% it cycles through state changes under
// load: PLAYING -> PAUSED -> PLAYING, a flushing seek, a fourth tee branch (queue ! weaveconvert !
// weaveinfer ! fakesink) added while running and removed again after the next change. The rest
// runs steady. Then EOS.
//
// Checks (exit status 1 and a line saying which failed):
//   - every buffer into a weaveinfer since its last flush is a buffer out (pad probes count them
//     per element; a multi-input element gives one output per pair of inputs), also for every
//     branch that was added and removed; no element drops a frame (frames-dropped 0);
//   - no ERROR or WARNING message on the bus, no GLib critical or warning;
//   - EOS reaches every sink within 60 s (no hang);
//   - RSS (one sample a second) is printed per phase, with its least-squares slope in MB per 10
//     minutes. Judged from 40 % on (the second half of the changes, then steady): runs of 10
//     minutes or more fail at SOAK_MAX_SLOPE_MB (default 1) or above. The first half of the
//     changes is the allocator's warm-up for them: glibc's per-thread arenas and free lists grow
//     while the first branches' threads come and go, and the growth per change falls off (from
//     8 KB per change after 15 changes to under 1 KB after 120, in a run of 330 changes made
//     every 0.3 s). A leak grows with every change and shows in the judged window; the slope
//     from 20 % is printed too. Shorter runs are dominated by first-time allocations: printed, not judged.
// SOAK_CHANGE_INTERVAL (seconds, default 2) sets the time between two state changes: a small
// value makes hundreds of changes in minutes, to tell a leak from the allocator settling.
// Leaks are LeakSanitizer's job: run the binary of the ASan build (scripts/soak.sh does).
#include <gst/gst.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Buffers in (per sink pad) and out (the src pad) of one weaveinfer, and the counts at its last
// flush: what was queued inside when a flush came is dropped by design, so only buffers after
// the last flush must all come out.
struct Counter {
  std::string name;
  int inputs = 1;
  std::atomic<uint64_t> in[2] = {0, 0};
  std::atomic<uint64_t> out{0};
  std::atomic<uint64_t> in_at_flush[2] = {0, 0};
  std::atomic<uint64_t> out_at_flush{0};
  std::atomic<uint64_t> flushes{0};
  // A reference until the element's frames-dropped is read: at the end of the run, or when its
  // branch is removed (keeping removed elements alive would itself make RSS grow).
  GstElement* element = nullptr;
  guint64 dropped = 0;

  void release() {
    if (element == nullptr) return;
    g_object_get(element, "frames-dropped", &dropped, nullptr);
    gst_object_unref(element);
    element = nullptr;
  }

  uint64_t new_in() const {
    uint64_t n = in[0] - in_at_flush[0];
    if (inputs == 2) n = std::min(n, in[1] - in_at_flush[1]);
    return n;
  }
  uint64_t new_out() const { return out - out_at_flush; }
};

struct SinkProbe {
  Counter* c;
  int index;
};

GstPadProbeReturn on_sink(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* p = static_cast<SinkProbe*>(data);
  if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) {
    ++p->c->in[p->index];
  } else if (GstEvent* e = GST_PAD_PROBE_INFO_EVENT(info); e && GST_EVENT_TYPE(e) == GST_EVENT_FLUSH_STOP) {
    p->c->in_at_flush[p->index] = p->c->in[p->index].load();
  }
  return GST_PAD_PROBE_OK;
}

GstPadProbeReturn on_src(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* c = static_cast<Counter*>(data);
  if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) {
    ++c->out;
  } else if (GstEvent* e = GST_PAD_PROBE_INFO_EVENT(info); e && GST_EVENT_TYPE(e) == GST_EVENT_FLUSH_STOP) {
    c->out_at_flush = c->out.load();
    ++c->flushes;
  }
  return GST_PAD_PROBE_OK;
}

std::vector<std::unique_ptr<Counter>> g_counters;
std::vector<std::unique_ptr<SinkProbe>> g_probes;

Counter* watch(GstElement* infer, const char* name, std::vector<const char*> sinks, const char* src) {
  auto c = std::make_unique<Counter>();
  c->name = name;
  c->inputs = static_cast<int>(sinks.size());
  c->element = GST_ELEMENT(gst_object_ref(infer));
  const auto kinds = static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_FLUSH);
  for (int i = 0; i < c->inputs; ++i) {
    g_probes.push_back(std::make_unique<SinkProbe>(SinkProbe{c.get(), i}));
    GstPad* pad = gst_element_get_static_pad(infer, sinks[i]);
    gst_pad_add_probe(pad, kinds, on_sink, g_probes.back().get(), nullptr);
    gst_object_unref(pad);
  }
  GstPad* pad = gst_element_get_static_pad(infer, src);
  gst_pad_add_probe(pad, kinds, on_src, c.get(), nullptr);
  gst_object_unref(pad);
  g_counters.push_back(std::move(c));
  return g_counters.back().get();
}

std::atomic<int> g_log_problems{0};

void log_handler(const gchar* domain, GLogLevelFlags level, const gchar* message, gpointer) {
  std::fprintf(stderr, "soak: %s %s: %s\n", level & G_LOG_LEVEL_CRITICAL ? "CRITICAL" : "WARNING",
               domain ? domain : "", message);
  ++g_log_problems;
}

// Every thread's stack, for a hang: gdb attaches to this process (SOAK_GDB=0 turns it off).
void dump_stacks() {
  const char* env = std::getenv("SOAK_GDB");
  if ((env != nullptr && std::string(env) == "0") || std::system("command -v gdb >/dev/null 2>&1") != 0)
    return;
  const std::string cmd = "gdb -p " + std::to_string(::getpid()) +
                          " -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' </dev/null 1>&2";
  std::fprintf(stderr, "soak: stacks of every thread (%s):\n", cmd.c_str());
  (void)std::system(cmd.c_str());
}

double rss_mb() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// Least-squares slope of (t, mb) in MB per second.
double slope(const std::vector<std::pair<double, double>>& s) {
  if (s.size() < 3) return 0;
  double mt = 0, mm = 0;
  for (auto [t, m] : s) mt += t, mm += m;
  mt /= static_cast<double>(s.size());
  mm /= static_cast<double>(s.size());
  double num = 0, den = 0;
  for (auto [t, m] : s) num += (t - mt) * (m - mm), den += (t - mt) * (t - mt);
  return den > 0 ? num / den : 0;
}

struct Soak {
  GstElement* pipeline = nullptr;
  GstBus* bus = nullptr;
  std::string model_dir, cache_dir;
  int bus_problems = 0;
  bool eos = false;

  // Drains the bus; ERROR and WARNING messages are failures.
  void poll(GstClockTime timeout) {
    while (GstMessage* m = gst_bus_timed_pop_filtered(
               bus, timeout,
               static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_WARNING | GST_MESSAGE_EOS))) {
      timeout = 0;
      if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS) {
        eos = true;
      } else {
        GError* err = nullptr;
        gchar* dbg = nullptr;
        if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR)
          gst_message_parse_error(m, &err, &dbg);
        else
          gst_message_parse_warning(m, &err, &dbg);
        std::fprintf(stderr, "soak: %s from %s: %s (%s)\n", GST_MESSAGE_TYPE_NAME(m), GST_OBJECT_NAME(m->src),
                     err->message, dbg ? dbg : "");
        g_error_free(err);
        g_free(dbg);
        ++bus_problems;
      }
      gst_message_unref(m);
    }
  }

  void run_for(double seconds) {
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < end) poll(100 * GST_MSECOND);
  }

  std::string model(const char* name) const { return model_dir + "/" + name; }
};

// A tee branch added and removed while the pipeline plays.
struct Branch {
  GstElement *queue = nullptr, *convert = nullptr, *infer = nullptr, *sink = nullptr;
  GstPad* tee_pad = nullptr;
  Counter* counter = nullptr;
  std::atomic<bool> unlinked{false}, eos{false};
};

GstPadProbeReturn on_branch_eos(GstPad*, GstPadProbeInfo* info, gpointer data) {
  if (GstEvent* e = GST_PAD_PROBE_INFO_EVENT(info); e && GST_EVENT_TYPE(e) == GST_EVENT_EOS) {
    static_cast<Branch*>(data)->eos = true;
    return GST_PAD_PROBE_DROP;  // the pipeline's EOS is for the end of the run only
  }
  return GST_PAD_PROBE_OK;
}

std::unique_ptr<Branch> add_branch(Soak& s, int index) {
  auto b = std::make_unique<Branch>();
  GstElement* tee = gst_bin_get_by_name(GST_BIN(s.pipeline), "t");
  b->queue = gst_element_factory_make("queue", nullptr);
  b->convert = gst_element_factory_make("weaveconvert", nullptr);
  b->infer = gst_element_factory_make("weaveinfer", nullptr);
  b->sink = gst_element_factory_make("fakesink", nullptr);
  g_object_set(b->infer, "model", s.model("soak_classify.onnx").c_str(), "cache-dir", s.cache_dir.c_str(),
               nullptr);
  g_object_set(b->sink, "sync", FALSE, nullptr);
  gst_bin_add_many(GST_BIN(s.pipeline), b->queue, b->convert, b->infer, b->sink, nullptr);
  gst_element_link_many(b->queue, b->convert, b->infer, b->sink, nullptr);
  const std::string name = "branch" + std::to_string(index);
  b->counter = watch(b->infer, name.c_str(), {"sink_x"}, "src_logits");
  GstPad* sinkpad = gst_element_get_static_pad(b->sink, "sink");
  gst_pad_add_probe(sinkpad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, on_branch_eos, b.get(), nullptr);
  gst_object_unref(sinkpad);
  for (GstElement* e : {b->sink, b->infer, b->convert, b->queue}) gst_element_sync_state_with_parent(e);
  b->tee_pad = gst_element_request_pad_simple(tee, "src_%u");
  GstPad* qpad = gst_element_get_static_pad(b->queue, "sink");
  gst_pad_link(b->tee_pad, qpad);
  gst_object_unref(qpad);
  gst_object_unref(tee);
  return b;
}

GstPadProbeReturn unlink_when_idle(GstPad* pad, GstPadProbeInfo*, gpointer data) {
  auto* b = static_cast<Branch*>(data);
  if (b->unlinked.exchange(true)) return GST_PAD_PROBE_REMOVE;
  GstPad* qpad = gst_element_get_static_pad(b->queue, "sink");
  gst_pad_unlink(pad, qpad);
  gst_pad_send_event(qpad, gst_event_new_eos());
  gst_object_unref(qpad);
  return GST_PAD_PROBE_REMOVE;
}

// Unlinks the branch at an idle moment, lets EOS drain it, and removes it; false on a hang.
bool remove_branch(Soak& s, Branch& b) {
  gst_pad_add_probe(b.tee_pad, GST_PAD_PROBE_TYPE_IDLE, unlink_when_idle, &b, nullptr);
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!b.eos && Clock::now() < deadline) s.poll(50 * GST_MSECOND);
  if (!b.eos) return false;
  GstElement* tee = gst_bin_get_by_name(GST_BIN(s.pipeline), "t");
  gst_element_release_request_pad(tee, b.tee_pad);
  gst_object_unref(b.tee_pad);
  gst_object_unref(tee);
  for (GstElement* e : {b.queue, b.convert, b.infer, b.sink}) {
    gst_element_set_state(e, GST_STATE_NULL);
    gst_bin_remove(GST_BIN(s.pipeline), e);
  }
  b.counter->release();
  return true;
}

std::string launch_line(const Soak& s) {
  const std::string caps = " ! video/x-raw,width=64,height=48,framerate=30/1 ! ";
  const std::string cls = "model=" + s.model("soak_classify.onnx") + " cache-dir=" + s.cache_dir;
  const std::string pair = "model=" + s.model("soak_pair.onnx") + " cache-dir=" + s.cache_dir;
  const std::string sink = " ! fakesink sync=false ";
  std::string l = "videotestsrc pattern=smpte" + caps + "tee name=t ";
  for (int i = 0; i < 3; ++i)
    l += "t. ! queue ! weaveconvert ! weaveinfer name=tee" + std::to_string(i) + " " + cls + sink;
  const char* patterns[] = {"ball", "snow", "gradient"};
  for (int i = 0; i < 3; ++i)
    l += "videotestsrc pattern=" + std::string(patterns[i]) + caps + "weaveconvert ! weaveinfer name=solo" +
         std::to_string(i) + " " + cls + sink;
  // The two inputs of a pair come from one source through a tee, so their timestamps match (two
  // free-running sources would drift apart and the gather would drop by design).
  for (int i = 0; i < 2; ++i) {
    const std::string n = "pair" + std::to_string(i), t = "pt" + std::to_string(i);
    l += "videotestsrc pattern=" + std::string(i ? "circular" : "pinwheel") + caps + "tee name=" + t + " ";
    l += t + ". ! queue ! weaveconvert ! " + n + ".sink_a ";
    l += t + ". ! queue ! videoflip method=horizontal-flip ! weaveconvert ! " + n + ".sink_b ";
    l += "weaveinfer name=" + n + " " + pair + sink;
  }
  return l;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: soak MODEL_DIR CACHE_DIR SECONDS\n");
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  gst_init(&argc, &argv);
  for (const char* domain : std::initializer_list<const char*>{"GLib", "GLib-GObject", "GStreamer", nullptr})
    g_log_set_handler(domain, static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING),
                      log_handler, nullptr);
  const double seconds = std::atof(argv[3]);
  const char* max_slope_env = std::getenv("SOAK_MAX_SLOPE_MB");
  const double max_slope = max_slope_env ? std::atof(max_slope_env) : 1.0;
  const char* interval_env = std::getenv("SOAK_CHANGE_INTERVAL");
  const double change_interval = interval_env ? std::max(0.05, std::atof(interval_env)) : 2.0;
  Soak s;
  s.model_dir = argv[1];
  s.cache_dir = argv[2];
  GError* err = nullptr;
  s.pipeline = gst_parse_launch(launch_line(s).c_str(), &err);
  if (s.pipeline == nullptr || err != nullptr) {
    std::fprintf(stderr, "soak: cannot build the pipeline: %s\n", err ? err->message : "?");
    return 1;
  }
  s.bus = gst_element_get_bus(s.pipeline);
  for (int i = 0; i < 3; ++i) {
    for (const char* kind : {"tee", "solo"}) {
      const std::string name = kind + std::to_string(i);
      GstElement* e = gst_bin_get_by_name(GST_BIN(s.pipeline), name.c_str());
      watch(e, name.c_str(), {"sink_x"}, "src_logits");
      gst_object_unref(e);
    }
  }
  for (int i = 0; i < 2; ++i) {
    const std::string name = "pair" + std::to_string(i);
    GstElement* e = gst_bin_get_by_name(GST_BIN(s.pipeline), name.c_str());
    watch(e, name.c_str(), {"sink_a", "sink_b"}, "src_diff");
    gst_object_unref(e);
  }

  std::vector<std::pair<double, double>> rss;
  std::mutex rss_mu;
  std::atomic<bool> stop{false};
  const auto t0 = Clock::now();
  std::thread sampler([&] {
    while (!stop) {
      {
        std::lock_guard<std::mutex> lock(rss_mu);
        rss.emplace_back(std::chrono::duration<double>(Clock::now() - t0).count(), rss_mb());
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });

  bool ok = true;
  auto fail = [&](const std::string& what) {
    std::fprintf(stderr, "soak: FAIL: %s\n", what.c_str());
    ok = false;
  };
  gst_element_set_state(s.pipeline, GST_STATE_PLAYING);
  s.run_for(0.2 * seconds);

  // State changes under load.
  std::vector<std::unique_ptr<Branch>> branches;
  Branch* live = nullptr;
  int changes = 0, pauses = 0, seeks = 0, added = 0, removed = 0;
  const auto churn_end = t0 + std::chrono::duration<double>(0.6 * seconds);
  // A watchdog: a state change or EOS that never completes is a hang, reported as a failure
  // with the counts so far rather than a test that never ends.
  std::atomic<int64_t> watchdog_deadline{0};
  auto arm = [&](const char* what, int s_) {
    std::printf("soak: %.1f s: %s\n", std::chrono::duration<double>(Clock::now() - t0).count(), what);
    watchdog_deadline =
        std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch()).count() + s_;
  };
  std::thread watchdog([&] {
    while (!stop) {
      const int64_t d = watchdog_deadline;
      const int64_t now =
          std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch()).count();
      if (d != 0 && now > d) {
        std::fprintf(stderr, "soak: FAIL: hang: the last step did not complete within its time\n");
        for (const auto& c : g_counters)
          std::fprintf(stderr, "  %s in %llu/%llu out %llu flushes %llu\n", c->name.c_str(),
                       static_cast<unsigned long long>(c->in[0].load()),
                       static_cast<unsigned long long>(c->in[1].load()),
                       static_cast<unsigned long long>(c->out.load()),
                       static_cast<unsigned long long>(c->flushes.load()));
        dump_stacks();
        std::_Exit(1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  while (Clock::now() < churn_end && ok) {
    switch (changes++ % 3) {
      case 0:
        arm("PLAYING -> PAUSED -> PLAYING", 60);
        gst_element_set_state(s.pipeline, GST_STATE_PAUSED);
        s.run_for(0.5);
        gst_element_set_state(s.pipeline, GST_STATE_PLAYING);
        ++pauses;
        break;
      case 1:
        arm("flushing seek", 60);
        if (!gst_element_seek_simple(s.pipeline, GST_FORMAT_TIME,
                                     static_cast<GstSeekFlags>(GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_KEY_UNIT),
                                     0))
          fail("the flushing seek was refused");
        ++seeks;
        break;
      default:
        arm(live != nullptr ? "remove a branch" : "add a branch", 90);
        if (live != nullptr) {
          if (!remove_branch(s, *live)) fail(live->counter->name + ": no EOS within 60 s after removal");
          ++removed;
          live = nullptr;
        } else {
          branches.push_back(add_branch(s, added++));
          live = branches.back().get();
        }
        break;
    }
    if (changes % 30 == 0)
      std::printf("soak: %.1f s: %d state changes, RSS %.2f MB\n",
                  std::chrono::duration<double>(Clock::now() - t0).count(), changes, rss_mb());
    s.run_for(change_interval);
  }
  if (live != nullptr) {
    arm("remove a branch", 90);
    if (!remove_branch(s, *live)) fail(live->counter->name + ": no EOS within 60 s after removal");
    ++removed;
  }
  arm("steady", static_cast<int>(seconds) + 60);
  s.run_for(
      std::chrono::duration<double>(t0 + std::chrono::duration<double>(seconds) - Clock::now()).count());

  arm("EOS", 90);
  gst_element_send_event(s.pipeline, gst_event_new_eos());
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!s.eos && Clock::now() < deadline) s.poll(100 * GST_MSECOND);
  if (!s.eos) fail("no EOS within 60 s of sending it (hang)");
  stop = true;
  sampler.join();
  watchdog.join();
  gst_element_set_state(s.pipeline, GST_STATE_NULL);

  std::printf("%-8s %9s %9s %9s %8s %8s  (in/out since each element's last flush)\n", "element", "in", "out",
              "lost", "flushes", "dropped");
  uint64_t total = 0;
  for (const auto& c : g_counters) {
    const uint64_t in = c->new_in(), out = c->new_out();
    c->release();
    const guint64 dropped = c->dropped;
    total += c->out;
    std::printf("%-8s %9llu %9llu %9lld %8llu %8llu\n", c->name.c_str(), static_cast<unsigned long long>(in),
                static_cast<unsigned long long>(out),
                static_cast<long long>(in) - static_cast<long long>(out),
                static_cast<unsigned long long>(c->flushes.load()), static_cast<unsigned long long>(dropped));
    if (in != out) {
      fail(c->name + ": " + std::to_string(in) + " buffers in since the last flush, " + std::to_string(out) +
           " out");
    }
    if (c->out == 0) fail(c->name + ": no output at all");
    // Non-leaky: nothing may be dropped, not even sets of a two-input model whose inputs drift.
    if (dropped != 0) fail(c->name + ": frames-dropped " + std::to_string(dropped));
  }
  std::vector<std::pair<double, double>> after, judged, churn1, churn2, steady;
  for (auto [t, m] : rss) {
    if (t >= 0.2 * seconds) after.emplace_back(t, m);
    if (t >= 0.4 * seconds) judged.emplace_back(t, m);
    if (t >= 0.2 * seconds && t < 0.4 * seconds) churn1.emplace_back(t, m);
    if (t >= 0.4 * seconds && t < 0.6 * seconds) churn2.emplace_back(t, m);
    if (t >= 0.6 * seconds) steady.emplace_back(t, m);
  }
  const double mb_per_10min = slope(judged) * 600.0;
  auto phase = [](const char* what, const std::vector<std::pair<double, double>>& v) {
    if (v.empty()) return;
    std::printf("RSS %s: %.1f MB at %.0f s, %.1f MB at %.0f s; slope %.3f MB per 10 min\n", what,
                v.front().second, v.front().first, v.back().second, v.back().first, slope(v) * 600.0);
  };
  phase("while elements come and go, first half (20-40%)", churn1);
  phase("while elements come and go, second half (40-60%)", churn2);
  phase("steady (60-100%)", steady);
  std::printf(
      "buffers out: %llu in %.0f s; state changes: %d pauses, %d flushing seeks, %d branches added, "
      "%d removed\n",
      static_cast<unsigned long long>(total), seconds, pauses, seeks, added, removed);
  std::printf("RSS: %.1f MB after warm-up (20%%), %.1f MB at the end; slope from 20%% %.3f MB per 10 min\n",
              after.empty() ? 0.0 : after.front().second, after.empty() ? 0.0 : after.back().second,
              slope(after) * 600.0);
  std::printf(
      "RSS judged from 40%% (second half of the changes, then steady): slope %.3f MB per 10 min "
      "(limit %.1f%s)\n",
      mb_per_10min, max_slope, seconds >= 600 ? "" : "; not judged under 600 s");
  if (seconds >= 600 && mb_per_10min >= max_slope)
    fail("RSS grows by " + std::to_string(mb_per_10min) + " MB per 10 min");
  if (s.bus_problems) fail(std::to_string(s.bus_problems) + " error/warning messages on the bus");
  if (g_log_problems) fail(std::to_string(g_log_problems.load()) + " GLib criticals/warnings");

  gst_object_unref(s.bus);
  gst_object_unref(s.pipeline);
  gst_deinit();
  std::printf("soak: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
