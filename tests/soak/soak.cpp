// Soak test: ten weaveinfer streams of three models in one process, for a set time, with state
// changes under load. scripts/soak.sh makes the models and runs it (docs/reliability.md).
//
//   soak MODEL_DIR CACHE_DIR SECONDS
//
// Streams (every weaveinfer behind a weaveconvert, all non-leaky):
//   tee0..tee2    one videotestsrc, tee'd three ways               soak_classify.onnx
//   solo0..solo2  a videotestsrc each (solo2 runs the model on every 3rd frame: inference-interval,
//                 the others going out as GAPs)                     soak_classify.onnx
//   pair0, pair1  a videotestsrc each, tee'd into both inputs        soak_pair.onnx (two inputs)
//   track0, track1  a videotestsrc each: a detector batched across the two streams (batch-size=2),
//                 its boxes (weavemeta mode=yolo) followed by weavetrack  soak_detect.onnx
// The first 20% of the time is warm-up. From 20% to 60% it cycles through state changes under
// load: PLAYING -> PAUSED -> PLAYING, a flushing seek, a fourth tee branch (queue ! weaveconvert !
// weaveinfer ! fakesink) added while running and removed again after the next change. The rest
// runs steady. Then EOS.
//
// Checks (exit status 1 and a line saying which failed):
//   - every buffer into a weaveinfer since its last flush is a buffer (or a GAP) out (pad probes count them
//     per element; a multi-input element gives one output per pair of inputs), also for every
//     branch that was added and removed; no element drops a frame (frames-dropped 0);
//   - no ERROR or WARNING message on the bus, no GLib critical or warning;
//   - EOS reaches every sink within 60 s, every state change completes, and each of the ten
//     fixed streams keeps putting out buffers (none silent for SOAK_STALL_SECONDS, default 30)
//     until EOS: no hang. A hang prints every thread's stack (gdb), then the last step, the
//     state of the pipeline and of each sink, and the counts, so the end of a log says it all;
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
#include <sstream>
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
  guint64 batched = 0;  // frames run in a batch with another stream's (batch-size)

  void release() {
    if (element == nullptr) return;
    g_object_get(element, "frames-dropped", &dropped, "frames-batched", &batched, nullptr);
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

// A GAP counts as an output: with inference-interval, a skipped set of inputs goes out as a GAP
// of its time.
GstPadProbeReturn on_src(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* c = static_cast<Counter*>(data);
  if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) {
    ++c->out;
  } else if (GstEvent* g = GST_PAD_PROBE_INFO_EVENT(info); g && GST_EVENT_TYPE(g) == GST_EVENT_GAP) {
    ++c->out;
  } else if (GstEvent* e = GST_PAD_PROBE_INFO_EVENT(info); e && GST_EVENT_TYPE(e) == GST_EVENT_FLUSH_STOP) {
    c->out_at_flush = c->out.load();
    ++c->flushes;
  }
  return GST_PAD_PROBE_OK;
}

std::mutex g_counters_mu;  // g_counters grows while the watchdog may read it
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
  gst_pad_add_probe(pad, static_cast<GstPadProbeType>(kinds | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM), on_src,
                    c.get(), nullptr);
  gst_object_unref(pad);
  std::lock_guard<std::mutex> lock(g_counters_mu);
  g_counters.push_back(std::move(c));
  return g_counters.back().get();
}

std::atomic<int> g_log_problems{0};

// Bus errors and warnings and GLib criticals, as printed: a hang's report repeats them at its end
// (what a CI log keeps), since one of them may be why a stream stopped.
std::mutex g_problems_mu;
std::vector<std::string> g_problems;

void note_problem(const std::string& text) {
  std::fprintf(stderr, "soak: %s\n", text.c_str());
  std::lock_guard<std::mutex> lock(g_problems_mu);
  if (g_problems.size() < 20) g_problems.push_back(text);  // the first ones tell; any fails the run
}

void log_handler(const gchar* domain, GLogLevelFlags level, const gchar* message, gpointer) {
  note_problem(std::string(level & G_LOG_LEVEL_CRITICAL ? "CRITICAL " : "WARNING ") + (domain ? domain : "") +
               ": " + message);
  ++g_log_problems;
}

// Every thread's stack, for a hang: gdb attaches to this process (SOAK_GDB=0 turns it off) and
// writes them to `file`; printed is one line per thread, its innermost named frames.
void dump_stacks(const std::string& file) {
  const char* env = std::getenv("SOAK_GDB");
  if ((env != nullptr && std::string(env) == "0") || std::system("command -v gdb >/dev/null 2>&1") != 0)
    return;
  const std::string cmd = "gdb -p " + std::to_string(::getpid()) +
                          " -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' </dev/null >'" +
                          file + "' 2>&1";
  std::fprintf(stderr, "soak: stacks of every thread in %s; innermost frames:\n", file.c_str());
  (void)std::system(cmd.c_str());
  std::ifstream in(file);
  std::string line, summary;
  int frames = 0;
  auto flush = [&] {
    if (!summary.empty()) std::fprintf(stderr, "  %s\n", summary.c_str());
    summary.clear();
    frames = 0;
  };
  while (std::getline(in, line)) {
    if (line.rfind("Thread ", 0) == 0) {
      flush();
      const auto q = line.find('"');
      const auto q2 = q == std::string::npos ? q : line.find('"', q + 1);
      summary = q2 == std::string::npos ? line.substr(0, line.find(' ', 7)) : line.substr(q + 1, q2 - q - 1);
      summary += ":";
    } else if (line.rfind("#", 0) == 0 && !summary.empty() && frames < 7) {
      // "#3  0x... in name (args) at file" or "#3  name (args) at file"
      std::size_t b = line.find(" in ");
      b = b == std::string::npos ? line.find_first_not_of(' ', line.find(' ')) : b + 4;
      const std::string name = line.substr(b, line.find(' ', b) - b);
      // Named frames only, and not the C library's internals of a wait.
      if (name.empty() || name == "()" || name == "??" || name[0] == '_' || name == "syscall") continue;
      summary += (frames++ ? " < " : " ") + name;
    }
  }
  flush();
}

// Debug messages of the elements and of state changes, kept in memory (a ring of 32 KB per
// thread, kept 45 s after the thread's last message: longer than a stall takes to be noticed)
// so that a hang can show what led to it. The categories log per state change, flush and task
// start or pause, not per buffer, so that the run's timing barely changes. On by default for
// runs under 10 minutes at the default change interval (what CI runs); elsewhere the rings of
// the many threads that come and go would blur the RSS figures those runs are for. SOAK_TRACE
// sets the categories and turns it on ("0": off); not applied when GST_DEBUG is set.
constexpr const char* kTraceCategories =
    "GST_STATES:5,bin:5,task:5,weaveinfer:5,basesink:4,basesrc:4,tee:4,queue:4,queue_dataflow:4";

bool start_trace(double seconds, bool default_interval) {
  const char* env = std::getenv("SOAK_TRACE");
  if (std::getenv("GST_DEBUG") != nullptr || (env != nullptr && std::string(env) == "0") ||
      (env == nullptr && (seconds >= 600 || !default_interval)))
    return false;
  gst_debug_remove_log_function(gst_debug_log_default);
  gst_debug_set_active(TRUE);
  gst_debug_set_threshold_from_string(env != nullptr ? env : kTraceCategories, TRUE);
  gst_debug_add_ring_buffer_logger(32 * 1024, 45);
  return true;
}

// Writes the trace to `file` in time order and prints its last `tail` lines.
void dump_trace(const std::string& file, int tail) {
  gchar** logs = gst_debug_ring_buffer_logger_get_logs();
  if (logs == nullptr) return;
  std::vector<std::string> lines;
  for (gchar** l = logs; *l != nullptr; ++l) {
    std::string text(*l);
    std::size_t b = 0;
    while (b < text.size()) {
      std::size_t e = text.find('\n', b);
      if (e == std::string::npos) e = text.size();
      if (e > b) lines.emplace_back(text, b, e - b);
      b = e + 1;
    }
  }
  g_strfreev(logs);
  std::stable_sort(lines.begin(), lines.end());  // lines start with the time, fixed width
  std::ofstream out(file);
  for (const auto& l : lines) out << l << '\n';
  // Printed short: "time thread category <object> message" (the file has the whole lines).
  auto brief = [](const std::string& l) {
    std::istringstream in(l);
    std::string time, pid, thread, level, category, rest;
    in >> time >> pid >> thread >> level >> category;
    std::getline(in, rest);
    const std::size_t obj = rest.find(":<");  // "file:line:function:<object> message"
    if (obj != std::string::npos) rest = rest.substr(obj + 1);
    return time.substr(0, time.size() > 6 ? time.size() - 6 : time.size()) + " " +
           thread.substr(thread.size() > 4 ? thread.size() - 4 : 0) + " " + category + " " + rest;
  };
  // Where a stream stops is rarely in the last lines (state changes of a bin are many): first the
  // lines of the data flow (a source or queue pausing and why, weaveinfer's flushes and tasks).
  std::vector<const std::string*> flow;
  for (const auto& l : lines)
    if (l.find(" GST_STATES ") == std::string::npos && l.find(" bin ") == std::string::npos &&
        l.find(" task ") == std::string::npos)
      flow.push_back(&l);
  std::fprintf(stderr, "soak: %zu debug lines in %s; the last %d of the data flow:\n", lines.size(),
               file.c_str(), tail);
  for (std::size_t i = flow.size() > static_cast<std::size_t>(tail) ? flow.size() - tail : 0; i < flow.size();
       ++i)
    std::fprintf(stderr, "  %s\n", brief(*flow[i]).c_str());
  std::fprintf(stderr, "soak: the last %d of all:\n", tail / 2);
  for (std::size_t i = lines.size() > static_cast<std::size_t>(tail / 2) ? lines.size() - tail / 2 : 0;
       i < lines.size(); ++i)
    std::fprintf(stderr, "  %s\n", brief(lines[i]).c_str());
}

// The state of the pipeline and of every sink (current, pending): which sink never prerolled.
void report_states(GstElement* pipeline) {
  auto line = [](GstElement* e, const char* after) {
    GST_OBJECT_LOCK(e);
    const GstState cur = GST_STATE(e), pending = GST_STATE_PENDING(e);
    GST_OBJECT_UNLOCK(e);
    std::fprintf(stderr, "  %s%s%s: %s (pending %s)\n", GST_OBJECT_NAME(e), after[0] ? " after " : "", after,
                 gst_element_state_get_name(cur), gst_element_state_get_name(pending));
  };
  line(pipeline, "");
  GstIterator* it = gst_bin_iterate_sinks(GST_BIN(pipeline));
  GValue v = G_VALUE_INIT;
  while (gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
    auto* sink = GST_ELEMENT(g_value_get_object(&v));
    GstPad* pad = gst_element_get_static_pad(sink, "sink");
    GstPad* peer = pad ? gst_pad_get_peer(pad) : nullptr;
    GstElement* up = peer ? gst_pad_get_parent_element(peer) : nullptr;
    line(sink, up ? GST_OBJECT_NAME(up) : "?");
    if (up) gst_object_unref(up);
    if (peer) gst_object_unref(peer);
    if (pad) gst_object_unref(pad);
    g_value_reset(&v);
  }
  g_value_unset(&v);
  gst_iterator_free(it);
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
        const gchar* from = m->src != nullptr ? GST_OBJECT_NAME(m->src) : nullptr;
        note_problem(std::string(GST_MESSAGE_TYPE_NAME(m)) + " from " + (from ? from : "?") + ": " +
                     err->message + " (" + (dbg ? dbg : "") + ")");
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
  // Without a RECONFIGURE upstream: the branch takes the caps the source has. A link sends one
  // by default, and the source then renegotiates: its ALLOCATION query waits in each branch's
  // queue until that queue is empty. A pause meanwhile deadlocks the pipeline (GStreamer's tee
  // and queue, no weave element needed: a sink of a faster branch finds its queue already empty
  // and never prerolls, while the slow branch's prerolled sink keeps its queue from emptying).
  const GstPadLinkReturn linked = gst_pad_link_full(
      b->tee_pad, qpad,
      static_cast<GstPadLinkCheck>(GST_PAD_LINK_CHECK_DEFAULT | GST_PAD_LINK_CHECK_NO_RECONFIGURE));
  if (linked != GST_PAD_LINK_OK) {
    std::fprintf(stderr, "soak: FAIL: %s: the tee's new pad would not link to its queue (%s)\n", name.c_str(),
                 gst_pad_link_get_name(linked));
    std::_Exit(1);
  }
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
  // Locked first: the pipeline may still be finishing a state change of its own (going back to
  // PLAYING once every sink prerolled after a seek, in a thread of its own), and it would set an
  // unlocked element of the branch back to PLAYING between our NULL and the removal; the branch
  // would then be disposed while it runs (seen with changes 0.1 s apart on one CPU).
  for (GstElement* e : {b.queue, b.convert, b.infer, b.sink}) gst_element_set_locked_state(e, TRUE);
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
         std::to_string(i) + " " + cls + (i == 2 ? " inference-interval=3" : "") + sink;
  // The two inputs of a pair come from one source through a tee, so their timestamps match (two
  // free-running sources would drift apart and the gather would drop by design).
  for (int i = 0; i < 2; ++i) {
    const std::string n = "pair" + std::to_string(i), t = "pt" + std::to_string(i);
    l += "videotestsrc pattern=" + std::string(i ? "circular" : "pinwheel") + caps + "tee name=" + t + " ";
    l += t + ". ! queue ! weaveconvert ! " + n + ".sink_a ";
    l += t + ". ! queue ! videoflip method=horizontal-flip ! weaveconvert ! " + n + ".sink_b ";
    l += "weaveinfer name=" + n + " " + pair + sink;
  }
  // Tracked and batched: each frame's detector run joins the other stream's (batch-size=2; a
  // stream paused, flushed or ending holds the other at most batch-timeout), the frame waits at
  // weavemeta's video pad for its boxes, weavetrack follows them.
  const std::string det = "model=" + s.model("soak_detect.onnx") + " cache-dir=" + s.cache_dir;
  for (int i = 0; i < 2; ++i) {
    const std::string n = "track" + std::to_string(i), t = "vt" + std::to_string(i),
                      m = "tm" + std::to_string(i);
    l += "videotestsrc pattern=" + std::string(i ? "zone-plate kt=2" : "ball") + caps + "tee name=" + t + " ";
    l += t + ". ! queue ! " + m + ".video ";
    l += t + ". ! queue ! weaveconvert ! weaveinfer name=" + n + " " + det +
         " batch-size=2 batch-timeout=20 ! " + m + ".tensor ";
    l += "weavemeta name=" + m + " mode=yolo ! weavetrack" + sink;
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
  const bool tracing = start_trace(seconds, interval_env == nullptr);
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
  for (int i = 0; i < 2; ++i) {
    const std::string name = "track" + std::to_string(i);
    GstElement* e = gst_bin_get_by_name(GST_BIN(s.pipeline), name.c_str());
    watch(e, name.c_str(), {"sink_x"}, "src_boxes");
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
  std::mutex failures_mu;
  std::vector<std::string> failures;  // repeated at the end of a hang's report
  auto fail = [&](const std::string& what) {
    std::fprintf(stderr, "soak: FAIL: %s\n", what.c_str());
    ok = false;
    std::lock_guard<std::mutex> lock(failures_mu);
    failures.push_back(what);
  };
  gst_element_set_state(s.pipeline, GST_STATE_PLAYING);
  s.run_for(0.2 * seconds);

  // State changes under load.
  std::vector<std::unique_ptr<Branch>> branches;
  Branch* live = nullptr;
  int changes = 0, pauses = 0, seeks = 0, added = 0, removed = 0;
  const auto churn_end = t0 + std::chrono::duration<double>(0.6 * seconds);
  // A watchdog: a state change or EOS that never completes is a hang, and so is an element of
  // the fixed streams that puts out nothing for SOAK_STALL_SECONDS (default 30) before EOS (e.g.
  // a pipeline left PAUSED because one sink never prerolled after a seek). Either is reported as
  // a failure with the counts so far rather than a test that never ends.
  const char* stall_env = std::getenv("SOAK_STALL_SECONDS");
  const double stall_seconds = stall_env ? std::max(1.0, std::atof(stall_env)) : 30.0;
  std::atomic<int64_t> watchdog_deadline{0};
  std::atomic<bool> watch_stalls{true};
  std::mutex step_mu;
  std::string step = "warm-up";
  auto arm = [&](const char* what, int s_) {
    const double now = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("soak: %.1f s: %s\n", now, what);
    {
      std::lock_guard<std::mutex> lock(step_mu);
      char at[32];
      std::snprintf(at, sizeof at, " (at %.1f s)", now);
      step = what + std::string(at);
    }
    watchdog_deadline =
        std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch()).count() + s_;
  };
  std::vector<Counter*> fixed;  // the ten fixed streams; branches are added after these
  for (const auto& c : g_counters) fixed.push_back(c.get());
  const std::size_t fixed_streams = fixed.size();
  std::thread watchdog([&] {
    std::vector<uint64_t> last_out(fixed_streams, 0);
    std::vector<Clock::time_point> last_change(fixed_streams, Clock::now());
    while (!stop) {
      const int64_t d = watchdog_deadline;
      const auto now_tp = Clock::now();
      const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(now_tp.time_since_epoch()).count();
      std::string why;
      if (d != 0 && now > d) why = "hang: the last step did not complete within its time";
      for (std::size_t i = 0; i < fixed_streams && why.empty(); ++i) {
        const uint64_t out = fixed[i]->out.load();
        if (out != last_out[i] || !watch_stalls) {
          last_out[i] = out;
          last_change[i] = now_tp;
        } else if (std::chrono::duration<double>(now_tp - last_change[i]).count() > stall_seconds) {
          why = "stall: " + fixed[i]->name + " put out nothing for " +
                std::to_string(static_cast<int>(stall_seconds)) + " s";
        }
      }
      if (!why.empty()) {
        std::string last;
        {
          std::lock_guard<std::mutex> lock(step_mu);
          last = step;
        }
        // Most telling last (the end of the output is what a CI log keeps): the trace, the
        // stacks, the states and counts, the problems seen, what failed.
        if (tracing) dump_trace(s.model_dir + "/soak-trace.txt", 40);
        dump_stacks(s.model_dir + "/soak-stacks.txt");
        std::fprintf(stderr, "soak: last step: %s\n", last.c_str());
        report_states(s.pipeline);
        {
          std::lock_guard<std::mutex> lock(g_counters_mu);
          for (const auto& c : g_counters)
            std::fprintf(stderr, "  %s in %llu/%llu out %llu flushes %llu\n", c->name.c_str(),
                         static_cast<unsigned long long>(c->in[0].load()),
                         static_cast<unsigned long long>(c->in[1].load()),
                         static_cast<unsigned long long>(c->out.load()),
                         static_cast<unsigned long long>(c->flushes.load()));
        }
        {
          std::lock_guard<std::mutex> lock(g_problems_mu);
          for (const auto& p : g_problems) std::fprintf(stderr, "soak: (earlier) %s\n", p.c_str());
        }
        {
          std::lock_guard<std::mutex> lock(failures_mu);
          for (const auto& f : failures) std::fprintf(stderr, "soak: FAIL (earlier): %s\n", f.c_str());
        }
        std::fprintf(stderr, "soak: FAIL: %s\n", why.c_str());
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

  if (s.eos) fail("EOS on the bus before the end of the run (a stream ended early)");
  s.eos = false;
  arm("EOS", 90);
  watch_stalls = false;  // outputs end now
  gst_element_send_event(s.pipeline, gst_event_new_eos());
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!s.eos && Clock::now() < deadline) s.poll(100 * GST_MSECOND);
  if (!s.eos) fail("no EOS within 60 s of sending it (hang)");
  stop = true;
  sampler.join();
  watchdog.join();
  gst_element_set_state(s.pipeline, GST_STATE_NULL);

  std::printf("%-8s %9s %9s %9s %8s %8s %9s  (in/out since each element's last flush)\n", "element", "in",
              "out", "lost", "flushes", "dropped", "batched");
  uint64_t total = 0;
  for (const auto& c : g_counters) {
    const uint64_t in = c->new_in(), out = c->new_out();
    c->release();
    const guint64 dropped = c->dropped;
    total += c->out;
    std::printf("%-8s %9llu %9llu %9lld %8llu %8llu %9llu\n", c->name.c_str(),
                static_cast<unsigned long long>(in), static_cast<unsigned long long>(out),
                static_cast<long long>(in) - static_cast<long long>(out),
                static_cast<unsigned long long>(c->flushes.load()), static_cast<unsigned long long>(dropped),
                static_cast<unsigned long long>(c->batched));
    // The two tracked streams batch each other's frames (their sources run at one rate).
    if (c->name.rfind("track", 0) == 0 && c->batched == 0) fail(c->name + ": no frame ran in a batch");
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
  if (tracing) gst_debug_remove_ring_buffer_logger();
  gst_deinit();
  std::printf("soak: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
