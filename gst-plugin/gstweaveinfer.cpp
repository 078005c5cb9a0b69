/**
 * SECTION:element-weaveinfer
 * @title: weaveinfer
 *
 * Runs one neural-network model (an ONNX file or a compiled .weave artifact) on tensor
 * streams. Pads come from the model: one `sink_<input>` per model input and one
 * `src_<output>` per model output, names sanitized to [a-z0-9_]; the original tensor name
 * travels in the caps (`tensor/x-raw, name=..., dtype=..., shape=<...>`). The pads exist as
 * soon as the `model` property is set, so gst-launch-1.0 can link them by name.
 *
 * Each instance has its own streaming thread: sink pads validate and enqueue buffers into a
 * bounded queue (`queue-size`; full = backpressure unless `leaky` says what to drop); the
 * element's task gathers one buffer per input with the same timestamp, runs the model and
 * pushes every output with the input's timestamps and its untagged metas (e.g. where a tensor
 * came from, which weavemeta reads). A GAP event keeps its place and goes out on every output.
 * Instances opening the same model share one immutable Factory (graph, params, plans); each has
 * its own Executor. The queue, gathering and runs are core/stream (StreamRunner, FrameRunner);
 * this file is the GStreamer side.
 *
 * An ONNX model is compiled once into a .weave artifact in `cache-dir` (codec `compression`)
 * and read from there while the ONNX file is unchanged. A cache entry that cannot be read
 * (corrupt, truncated) is compiled again; a cache directory that cannot be written (read-only,
 * full) leaves the model compiled in memory: either way the element runs and posts a warning
 * message saying what was wrong.
 *
 * The model file may be replaced, rewritten in place or deleted while the element runs: it keeps
 * the model it loaded (a .weave file is read into memory, never used through a mapping of the
 * user's file), and the next start from READY loads the file as it is then, or fails naming it.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 appsrc caps="tensor/x-raw,dtype=float32,shape=<1,3,224,224>" ! \
 *     weaveinfer model=backbone.onnx name=bb \
 *     bb.src_features ! queue ! weaveinfer model=head.onnx name=head \
 *     head.src_logits ! fakesink
 * ]|
 *
 * `model` can only be changed in the NULL or READY state; setting it later is refused with a
 * warning and the running model is kept.
 *
 * Zero-copy: an input buffer of one memory block whose data is aligned to its element size is
 * read in place (bound to the executor for the run); other buffers are copied once. Output
 * buffers are allocated 64-byte aligned (frames of 256 KiB and more as their own pages, which go
 * back to the system when the buffer is freed) and the model writes straight into them. Copies are
 * counted in `input-copies`, `output-copies` and `bytes-copied`. `max-shape`
 * ("x=1x3x960x960;y=...") plans memory once for the largest dims of an input, so frames of any
 * size within it run without allocating; without it, finite upper bounds of the upstream caps
 * (e.g. shape=<1,3,[1,960],[1,960]>) are used.
 */
#include "gst-plugin/gstweaveinfer.h"

#include <gst/base/gstflowcombiner.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "caps/tensor_caps.h"
#include "caps/tensor_origin.h"
#include "core/loader/model_settings.h"
#include "core/loader/model_slot.h"
#include "core/runtime/tensor_names.h"
#include "core/stream/frame_runner.h"
#include "core/stream/stream_runner.h"
#include "core/threads/thread_budget.h"
#include "gst-plugin/elements.h"
#include "gst-plugin/gstweavememory.h"
#include "gst-plugin/instance_state.h"

GST_DEBUG_CATEGORY_STATIC(gst_weave_infer_debug);
#define GST_CAT_DEFAULT gst_weave_infer_debug

namespace {

enum {
  PROP_0,
  PROP_MODEL,
  PROP_COMPRESSION,
  PROP_CACHE_DIR,
  PROP_THREADS,
  PROP_QUEUE_SIZE,
  PROP_LEAKY,
  PROP_FRAMES_PROCESSED,
  PROP_FRAMES_DROPPED,
  PROP_MEAN_INFERENCE_MS,
  PROP_LAST_INFERENCE_MS,
  PROP_FACTORY_ID,
  PROP_ARTIFACT,
  PROP_MAX_SHAPE,
  PROP_INPUT_COPIES,
  PROP_OUTPUT_COPIES,
  PROP_BYTES_COPIED,
};

constexpr int kDefaultQueueSize = 4;
#ifdef WEAVE_HAVE_ZSTD
constexpr GstWeaveCompression kDefaultCompression = GST_WEAVE_COMPRESSION_ZSTD_PLANES;
#else
constexpr GstWeaveCompression kDefaultCompression = GST_WEAVE_COMPRESSION_ZLIB_PLANES;
#endif
constexpr GstWeaveInferLeaky kDefaultLeaky = GST_WEAVE_INFER_LEAKY_NONE;

struct BufferUnref {
  void operator()(GstBuffer* b) const { gst_buffer_unref(b); }
};
using BufferPtr = std::unique_ptr<GstBuffer, BufferUnref>;
struct EventUnref {
  void operator()(GstEvent* e) const { gst_event_unref(e); }
};
using EventPtr = std::unique_ptr<GstEvent, EventUnref>;

// What travels in the queue besides buffers, in stream order: a serialized event, or the output
// caps planned once every input had caps.
struct Control {
  EventPtr event;                 // null: caps item
  std::vector<weave::Dims> caps;  // output dims from the plan
};
// A queued input buffer with the tensor its caps described when it came: caps may change (e.g.
// crops of another batch size) while earlier buffers still wait in the queue.
struct Input {
  BufferPtr buffer;
  weave::caps::CapsTensor tensor;
};
using Runner = weave::stream::StreamRunner;
using weave::stream::Payload;

struct PadInfo {
  GstPad* pad = nullptr;  // owned by the element
  weave::TensorInfo info;
  // Sink: negotiated tensor. Src: dims of the caps last pushed.
  bool has_caps = false;
  weave::caps::CapsTensor tensor;
};

weave::stream::Leaky leaky_of(int leaky) {
  switch (leaky) {
    case GST_WEAVE_INFER_LEAKY_UPSTREAM:
      return weave::stream::Leaky::upstream;
    case GST_WEAVE_INFER_LEAKY_DOWNSTREAM:
      return weave::stream::Leaky::downstream;
    default:
      return weave::stream::Leaky::none;
  }
}

}  // namespace

// All C++ state lives here, constructed in instance_init and destroyed in finalize.
struct WeaveInferImpl {
  // Settings (GST_OBJECT_LOCK).
  std::string model;
  std::string cache_dir;
  bool cache_dir_set = false;
  int compression = kDefaultCompression;
  int threads = 0;
  int leaky = kDefaultLeaky;
  std::string max_shape;  // as set (validated by parse_shape_bounds)

  // The loaded model (changed only in NULL/READY).
  weave::ModelSlot loaded;
  std::vector<PadInfo> sinks;
  std::vector<PadInfo> srcs;
  GstFlowCombiner* combiner = nullptr;
  std::mutex caps_lock;  // has_caps and tensor of the pads (streaming threads and queries)

  // Queue, gathering and end of stream between the sink pads and the task.
  Runner runner{Runner::Options{1, kDefaultQueueSize, leaky_of(kDefaultLeaky)}};

  // Task thread only.
  std::unique_ptr<weave::stream::FrameRunner> frames;
  bool stream_started = false;
  bool segment_pushed = false;
  // Sticky events (segment, tags) that arrived before the output caps could be known (a
  // multi-input model needs caps on every input): pushed right after the caps, in order.
  std::vector<EventPtr> held;

  // Statistics of the model runs; they survive state changes.
  std::shared_ptr<weave::stream::FrameStats> stats = std::make_shared<weave::stream::FrameStats>();
};

struct _GstWeaveInfer {
  GstElement parent;
  weave::gst::InstanceState<WeaveInferImpl> impl;
};

G_DEFINE_TYPE(GstWeaveInfer, gst_weave_infer, GST_TYPE_ELEMENT)

GType gst_weave_compression_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_WEAVE_COMPRESSION_NONE, "Params stored uncompressed (used in place from the mapped file)", "none"},
      {GST_WEAVE_COMPRESSION_ZLIB, "zlib (deflate)", "zlib"},
      {GST_WEAVE_COMPRESSION_LZ4, "LZ4 (fast decompression; needs a build with lz4)", "lz4"},
      {GST_WEAVE_COMPRESSION_ZSTD, "Zstandard (needs a build with zstd)", "zstd"},
      {GST_WEAVE_COMPRESSION_ZLIB_PLANES,
       "zlib over float byte planes: ~0.86x of the ONNX file on trained weights (the default without zstd)",
       "zlib-planes"},
      {GST_WEAVE_COMPRESSION_ZSTD_PLANES,
       "Zstandard over float byte planes: as small, loads 2x faster (the default in builds with zstd)",
       "zstd-planes"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) {
    GType t = g_enum_register_static("GstWeaveCompression", values);
    g_once_init_leave(&type, t);
  }
  return type;
}

GType gst_weave_infer_leaky_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_WEAVE_INFER_LEAKY_NONE, "Not leaky: block upstream while the queue is full", "none"},
      {GST_WEAVE_INFER_LEAKY_UPSTREAM, "Drop the incoming buffer when the queue is full", "upstream"},
      {GST_WEAVE_INFER_LEAKY_DOWNSTREAM, "Drop the oldest queued buffer when the queue is full",
       "downstream"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) {
    GType t = g_enum_register_static("GstWeaveInferLeaky", values);
    g_once_init_leave(&type, t);
  }
  return type;
}

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink_%s", GST_PAD_SINK, GST_PAD_SOMETIMES, GST_STATIC_CAPS("tensor/x-raw"));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src_%s", GST_PAD_SRC, GST_PAD_SOMETIMES, GST_STATIC_CAPS("tensor/x-raw"));

static GstFlowReturn weave_infer_chain(GstPad* pad, GstObject* parent, GstBuffer* buffer);
// GST_EVENT_IS_SERIALIZED / GST_EVENT_IS_STICKY mix two enum types, deprecated in C++20.
static bool event_has_flag(GstEvent* event, GstEventTypeFlags flag) {
  return (gst_event_type_get_flags(GST_EVENT_TYPE(event)) & flag) != 0;
}

static gboolean weave_infer_sink_event(GstPad* pad, GstObject* parent, GstEvent* event);
static gboolean weave_infer_sink_query(GstPad* pad, GstObject* parent, GstQuery* query);
static gboolean weave_infer_src_event(GstPad* pad, GstObject* parent, GstEvent* event);
static gboolean weave_infer_src_query(GstPad* pad, GstObject* parent, GstQuery* query);
static gboolean weave_infer_src_activate_mode(GstPad* pad, GstObject* parent, GstPadMode mode,
                                              gboolean active);
static void weave_infer_loop(gpointer user_data);

static int pad_index(GstPad* pad) {
  return GPOINTER_TO_INT(gst_pad_get_element_private(pad));
}

static std::string pad_list(const WeaveInferImpl* impl) {
  std::string s;
  for (const auto* v : {&impl->sinks, &impl->srcs})
    for (const auto& p : *v) {
      if (!s.empty()) s += ", ";
      s += GST_PAD_NAME(p.pad);
    }
  return s.empty() ? std::string("none") : s;
}

// ---------------------------------------------------------------------------------------------
// Model loading and pads (NULL/READY only)

static void remove_pads(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  if (impl->combiner != nullptr) {
    gst_flow_combiner_free(impl->combiner);
    impl->combiner = nullptr;
  }
  for (auto* v : {&impl->sinks, &impl->srcs})
    for (auto& p : *v) gst_element_remove_pad(GST_ELEMENT(self), p.pad);
  impl->sinks.clear();
  impl->srcs.clear();
}

static void add_pads(GstWeaveInfer* self, const weave::Factory& f) {
  WeaveInferImpl* impl = self->impl.get();
  impl->combiner = gst_flow_combiner_new();
  std::vector<std::string> in_names, out_names;
  for (const auto& i : f.inputs()) in_names.push_back(i.name);
  for (const auto& o : f.outputs()) out_names.push_back(o.name);
  auto in_ids = weave::unique_tensor_names(in_names);
  auto out_ids = weave::unique_tensor_names(out_names);
  GstElementClass* klass = GST_ELEMENT_GET_CLASS(self);
  for (std::size_t i = 0; i < in_ids.size(); ++i) {
    std::string name = "sink_" + in_ids[i];
    GstPad* pad =
        gst_pad_new_from_template(gst_element_class_get_pad_template(klass, "sink_%s"), name.c_str());
    gst_pad_set_element_private(pad, GINT_TO_POINTER(static_cast<int>(i)));
    gst_pad_set_chain_function(pad, GST_DEBUG_FUNCPTR(weave_infer_chain));
    gst_pad_set_event_function(pad, GST_DEBUG_FUNCPTR(weave_infer_sink_event));
    gst_pad_set_query_function(pad, GST_DEBUG_FUNCPTR(weave_infer_sink_query));
    PadInfo info;
    info.pad = pad;
    info.info = f.input_info(static_cast<int>(i));
    impl->sinks.push_back(std::move(info));
  }
  for (std::size_t i = 0; i < out_ids.size(); ++i) {
    std::string name = "src_" + out_ids[i];
    GstPad* pad =
        gst_pad_new_from_template(gst_element_class_get_pad_template(klass, "src_%s"), name.c_str());
    gst_pad_set_element_private(pad, GINT_TO_POINTER(static_cast<int>(i)));
    gst_pad_set_event_function(pad, GST_DEBUG_FUNCPTR(weave_infer_src_event));
    gst_pad_set_query_function(pad, GST_DEBUG_FUNCPTR(weave_infer_src_query));
    gst_pad_set_activatemode_function(pad, GST_DEBUG_FUNCPTR(weave_infer_src_activate_mode));
    PadInfo info;
    info.pad = pad;
    info.info = f.output_info(static_cast<int>(i));
    impl->srcs.push_back(std::move(info));
    gst_flow_combiner_add_pad(impl->combiner, pad);
  }
  impl->runner.set_inputs(static_cast<int>(impl->sinks.size()));
  // The pad vectors are complete before any pad becomes visible (pad-added handlers query).
  for (auto* v : {&impl->sinks, &impl->srcs})
    for (auto& p : *v) gst_element_add_pad(GST_ELEMENT(self), p.pad);
  gst_element_no_more_pads(GST_ELEMENT(self));
}

// Bounds for the next load: the max-shape property, else what upstream caps promise.
static weave::ShapeBounds effective_bounds(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  GST_OBJECT_LOCK(self);
  std::string text = impl->max_shape;
  GST_OBJECT_UNLOCK(self);
  if (!text.empty()) {
    auto parsed = weave::parse_shape_bounds(text);  // validated when set
    return parsed ? *parsed : weave::ShapeBounds{};
  }
  weave::ShapeBounds bounds;
  for (const auto& s : impl->sinks) {
    if (weave::shape_is_static(s.info.shape)) continue;
    auto mine = weave::caps::caps_from_info(s.info, false);
    if (!mine) continue;
    // No filter in the query: subset checks on shape arrays with ranges are unreliable
    // (capsfilter warns); intersect here instead.
    GstCaps* peer = gst_pad_peer_query_caps(s.pad, nullptr);
    auto both = weave::caps::intersect(peer, mine->get());
    auto shape = weave::caps::shape_bound(both.get());
    if (shape && shape->size() == s.info.shape.size()) {
      GST_INFO_OBJECT(self, "pad %s: upstream caps bound the input to %s", GST_PAD_NAME(s.pad),
                      weave::shape_str(*shape).c_str());
      bounds[s.info.name] = *shape;
    }
    if (peer != nullptr) gst_caps_unref(peer);
  }
  return bounds;
}

// The settings of the properties, without bounds. Call with the object lock held.
static weave::ModelSettings settings_locked(const WeaveInferImpl* impl) {
  weave::ModelSettings s;
  s.model = impl->model;
  s.cache_dir = impl->cache_dir_set ? impl->cache_dir : weave::default_cache_dir();
  s.codec = weave_enum_nick(GST_TYPE_WEAVE_COMPRESSION, impl->compression, "zlib");  // nicks are codec names
  return s;
}

// Loads the model of `settings`. `make_pads`: rebuild the pads (model changed); otherwise the
// new factory must have the interface the pads were made for. False on failure
// (impl->loaded.error() says why).
static bool load_model(GstWeaveInfer* self, const weave::ModelSettings& settings, bool make_pads,
                       bool from_property) {
  WeaveInferImpl* impl = self->impl.get();
  if (make_pads) remove_pads(self);
  const weave::LoadFailure failure = impl->loaded.load(settings, !make_pads, "property 'model'");
  if (failure == weave::LoadFailure::unreadable) {
    const char* model = settings.model.c_str();
    const char* error = impl->loaded.error().c_str();
    GST_WARNING_OBJECT(self, "cannot load model '%s': %s", model, error);
    // gst-launch-1.0 has no bus yet while it sets properties: say it where users look.
    if (from_property)
      g_warning("weaveinfer %s: cannot load model '%s': %s", GST_OBJECT_NAME(self), model, error);
    GST_ELEMENT_WARNING(self, RESOURCE, OPEN_READ, ("Cannot load model '%s'.", model), ("%s", error));
  } else if (failure != weave::LoadFailure::no_model && !impl->loaded.warning().empty()) {
    GST_WARNING_OBJECT(self, "model cache: %s", impl->loaded.warning().c_str());
  }
  if (failure != weave::LoadFailure::none) return false;
  const auto factory = impl->loaded.factory();
  GST_INFO_OBJECT(self, "model '%s' loaded (factory %p, artifact '%s'%s)", settings.model.c_str(),
                  static_cast<const void*>(factory.get()), impl->loaded.artifact_path().c_str(),
                  impl->loaded.compiled_now() ? ", compiled now" : "");
  if (make_pads) {
    add_pads(self, *factory);
    GST_INFO_OBJECT(self, "pads: %s", pad_list(impl).c_str());
  }
  return true;
}

// Why the model is not loaded, for the error that fails a start.
static std::string load_error(const WeaveInferImpl* impl) {
  if (impl->loaded.failure() == weave::LoadFailure::interface_changed)
    return impl->loaded.error() + " since its pads were made; set 'model' again";
  return impl->loaded.error();
}

// ---------------------------------------------------------------------------------------------
// Input: chain, events and queries of the sink pads

static GstFlowReturn flow_of(const Runner& runner, weave::stream::Push r) {
  switch (r) {
    case weave::stream::Push::queued:
    case weave::stream::Push::dropped:
      return GST_FLOW_OK;
    case weave::stream::Push::eos:
      return GST_FLOW_EOS;
    case weave::stream::Push::flushing:
      return GST_FLOW_FLUSHING;
    case weave::stream::Push::stopped:
      break;
  }
  return static_cast<GstFlowReturn>(runner.code());
}

static GstFlowReturn weave_infer_chain(GstPad* pad, GstObject* parent, GstBuffer* buffer) {
  auto* self = GST_WEAVE_INFER(parent);
  WeaveInferImpl* impl = self->impl.get();
  BufferPtr owned(buffer);
  const int index = pad_index(pad);
  if (index < 0 || index >= static_cast<int>(impl->sinks.size())) return GST_FLOW_ERROR;
  if (auto r = impl->runner.accepting(index); r != weave::stream::Push::queued)
    return flow_of(impl->runner, r);

  PadInfo& sp = impl->sinks[index];
  std::unique_lock lock(impl->caps_lock);
  if (!sp.has_caps) {
    lock.unlock();
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Pad %s got a buffer before caps.", GST_PAD_NAME(pad)),
                      (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const weave::caps::CapsTensor tensor = sp.tensor;
  lock.unlock();
  const std::size_t want = tensor.bytes();
  const std::size_t have = gst_buffer_get_size(buffer);
  if (have != want) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                      ("Pad %s: buffer of %zu bytes, but caps %s %s need %zu bytes.", GST_PAD_NAME(pad), have,
                       std::string(weave::dtype_name(tensor.dtype)).c_str(),
                       weave::caps::shape_text(tensor.dims).c_str(), want),
                      (nullptr));
    return GST_FLOW_ERROR;
  }
  std::optional<uint64_t> pts;
  if (GST_BUFFER_PTS_IS_VALID(buffer)) pts = GST_BUFFER_PTS(buffer);
  const auto r = impl->runner.push(index, pts, Payload(Input{std::move(owned), tensor}));
  if (r == weave::stream::Push::dropped) GST_LOG_OBJECT(self, "queue full, dropped a buffer");
  return flow_of(impl->runner, r);
}

static void start_task(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  if (impl->srcs.empty()) return;
  impl->runner.start();
  gst_pad_start_task(impl->srcs[0].pad, weave_infer_loop, self, nullptr);
}

static bool post_negotiation_error(GstWeaveInfer* self, const std::string& message) {
  GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("%s", message.c_str()), (nullptr));
  return false;
}

static gboolean handle_sink_caps(GstWeaveInfer* self, int index, GstCaps* caps) {
  WeaveInferImpl* impl = self->impl.get();
  PadInfo& sp = impl->sinks[index];
  auto t = weave::caps::parse_fixed_caps(caps);
  if (!t)
    return post_negotiation_error(self, std::string("pad ") + GST_PAD_NAME(sp.pad) + ": " + t.message());
  auto fits = weave::caps::check_fits(*t, sp.info, GST_PAD_NAME(sp.pad), "input");
  if (!fits) return post_negotiation_error(self, fits.message());

  std::vector<weave::Dims> in_dims;
  bool all = true;
  {
    std::lock_guard lock(impl->caps_lock);
    sp.tensor = *t;
    sp.has_caps = true;
    for (const auto& s : impl->sinks) {
      all = all && s.has_caps;
      in_dims.push_back(s.tensor.dims);
    }
  }
  GST_DEBUG_OBJECT(self, "pad %s: caps %" GST_PTR_FORMAT, GST_PAD_NAME(sp.pad), caps);
  const auto factory = impl->loaded.factory();
  if (!factory->replan_beyond_bound())
    if (auto bound = factory->check_bound(index, t->dims); !bound)
      return post_negotiation_error(self, std::string("pad ") + GST_PAD_NAME(sp.pad) + ": " +
                                              bound.message() + " (property max-shape)");
  if (!all) return TRUE;

  auto plan = factory->plan_for(in_dims);
  if (!plan) {
    std::string shapes;
    for (const auto& s : impl->sinks)
      shapes += std::string(shapes.empty() ? "" : ", ") + GST_PAD_NAME(s.pad) + " " +
                weave::caps::shape_text(s.tensor.dims);
    return post_negotiation_error(self,
                                  "the model cannot run with input shapes " + shapes + ": " + plan.message());
  }
  Control item;
  for (int32_t v : factory->graph().outputs) item.caps.push_back((*plan)->slots[v].dims);
  (void)impl->runner.push_event(Payload(std::move(item)), index);
  return TRUE;
}

static gboolean weave_infer_sink_event(GstPad* pad, GstObject* parent, GstEvent* event) {
  auto* self = GST_WEAVE_INFER(parent);
  WeaveInferImpl* impl = self->impl.get();
  int index = pad_index(pad);
  if (index < 0 || index >= static_cast<int>(impl->sinks.size()))
    return gst_pad_event_default(pad, parent, event);
  GST_LOG_OBJECT(pad, "event %" GST_PTR_FORMAT, event);

  switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_CAPS: {
      GstCaps* caps = nullptr;
      gst_event_parse_caps(event, &caps);
      gboolean ok = handle_sink_caps(self, index, caps);
      gst_event_unref(event);
      return ok;
    }
    case GST_EVENT_FLUSH_START: {
      // A seek reaches the flush of every input (a source tee'd into two inputs flushes both,
      // once per seek it gets): the first input's flush-start flushes the element and goes
      // downstream, and the element flushes until every input that started has stopped.
      if (impl->runner.flush_input(index, GST_FLOW_FLUSHING)) {
        for (auto& s : impl->srcs) gst_pad_push_event(s.pad, gst_event_ref(event));
        if (!impl->srcs.empty()) gst_pad_pause_task(impl->srcs[0].pad);
      }
      gst_event_unref(event);
      return TRUE;
    }
    case GST_EVENT_FLUSH_STOP: {
      if (!impl->runner.flush_input_done(index)) {
        GST_DEBUG_OBJECT(pad, "flush-stop: other inputs still flushing");
        gst_event_unref(event);
        return TRUE;
      }
      // The last flushing input stopped; the task is paused (flush-start): the runner's and the
      // task's state are ours to reset.
      impl->runner.reset();
      if (impl->combiner != nullptr) gst_flow_combiner_reset(impl->combiner);
      impl->segment_pushed = false;  // the flush removed downstream's segment
      for (auto& s : impl->srcs) gst_pad_push_event(s.pad, gst_event_ref(event));
      gst_event_unref(event);
      // Input 0 (where stream events come from) may not send another segment: it was not
      // flushed, or its new one came before this. Its current segment goes out again first.
      if (GstEvent* seg = gst_pad_get_sticky_event(impl->sinks[0].pad, GST_EVENT_SEGMENT, 0)) {
        Control item;
        item.event.reset(seg);
        (void)impl->runner.push_event(Payload(std::move(item)));
      }
      if (!impl->srcs.empty() && gst_pad_is_active(impl->srcs[0].pad)) start_task(self);
      return TRUE;
    }
    case GST_EVENT_EOS:
      gst_event_unref(event);
      (void)impl->runner.push_eos(index);
      return TRUE;
    case GST_EVENT_STREAM_START:
    case GST_EVENT_SEGMENT:
    default:
      if (!event_has_flag(event, GST_EVENT_TYPE_SERIALIZED)) return gst_pad_event_default(pad, parent, event);
      // Stream-level events of a multi-input model come from its first input only.
      if (index != 0) {
        gst_event_unref(event);
        return TRUE;
      }
      Control item;
      item.event.reset(event);
      (void)impl->runner.push_event(Payload(std::move(item)), index);
      return TRUE;
  }
}

static gboolean weave_infer_sink_query(GstPad* pad, GstObject* parent, GstQuery* query) {
  auto* self = GST_WEAVE_INFER(parent);
  WeaveInferImpl* impl = self->impl.get();
  int index = pad_index(pad);
  if (index < 0 || index >= static_cast<int>(impl->sinks.size()))
    return gst_pad_query_default(pad, parent, query);
  const PadInfo& sp = impl->sinks[index];
  switch (GST_QUERY_TYPE(query)) {
    case GST_QUERY_CAPS: {
      GstCaps* filter = nullptr;
      gst_query_parse_caps(query, &filter);
      auto mine = weave::caps::caps_from_info(sp.info, false);
      if (!mine) return FALSE;
      auto result = weave::caps::intersect(filter, mine->get());
      gst_query_set_caps_result(query, result.get());
      return TRUE;
    }
    case GST_QUERY_ACCEPT_CAPS: {
      // Any fixed tensor caps are accepted here; the CAPS event checks them against the model
      // and posts an error naming both shapes (a refused accept-caps would only surface as a
      // bare not-negotiated). The caps query above is exact, so link-time negotiation is not
      // loosened.
      GstCaps* caps = nullptr;
      gst_query_parse_accept_caps(query, &caps);
      auto t = weave::caps::parse_fixed_caps(caps);
      if (t) {
        auto fits = weave::caps::check_fits(*t, sp.info, GST_PAD_NAME(pad));
        if (!fits) GST_INFO_OBJECT(pad, "%s", fits.message().c_str());
      }
      gst_query_set_accept_caps_result(query, t.ok());
      return TRUE;
    }
    case GST_QUERY_ALLOCATION: {
      // Outputs are new buffers; upstream's allocation is none of downstream's business. We
      // only ask for 64-byte aligned memory, so that inputs can be read in place (zero-copy).
      GstAllocationParams params;
      gst_allocation_params_init(&params);
      params.align = weave::kAlignment - 1;
      gst_query_add_allocation_param(query, nullptr, &params);
      return TRUE;
    }
    default:
      return gst_pad_query_default(pad, parent, query);
  }
}

// ---------------------------------------------------------------------------------------------
// Output: events and queries of the src pads

static gboolean weave_infer_src_event(GstPad* pad, GstObject* parent, GstEvent* event) {
  // Upstream events (seek, QoS, reconfigure, ...) go to every input.
  return gst_pad_event_default(pad, parent, event);
}

static gboolean weave_infer_src_query(GstPad* pad, GstObject* parent, GstQuery* query) {
  auto* self = GST_WEAVE_INFER(parent);
  WeaveInferImpl* impl = self->impl.get();
  int index = pad_index(pad);
  if (index < 0 || index >= static_cast<int>(impl->srcs.size()))
    return gst_pad_query_default(pad, parent, query);
  switch (GST_QUERY_TYPE(query)) {
    case GST_QUERY_CAPS: {
      GstCaps* filter = nullptr;
      gst_query_parse_caps(query, &filter);
      std::unique_lock lock(impl->caps_lock);
      const bool fixed = impl->srcs[index].has_caps;
      const weave::caps::CapsTensor t = impl->srcs[index].tensor;
      lock.unlock();
      weave::caps::CapsPtr mine;
      if (fixed) {
        mine = weave::caps::caps_from_dims(t.name, t.dtype, t.dims);
      } else {
        auto c = weave::caps::caps_from_info(impl->srcs[index].info, true);
        if (!c) return FALSE;
        mine = std::move(*c);
      }
      auto result = weave::caps::intersect(filter, mine.get());
      gst_query_set_caps_result(query, result.get());
      return TRUE;
    }
    case GST_QUERY_LATENCY: {
      // The latency of the slowest input; the element adds no fixed latency of its own.
      gboolean live = FALSE;
      GstClockTime min = 0, max = GST_CLOCK_TIME_NONE;
      bool any = false;
      for (auto& s : impl->sinks) {
        GstQuery* q = gst_query_new_latency();
        if (gst_pad_peer_query(s.pad, q)) {
          gboolean l = FALSE;
          GstClockTime mn = 0, mx = GST_CLOCK_TIME_NONE;
          gst_query_parse_latency(q, &l, &mn, &mx);
          any = true;
          live = live || l;
          if (mn > min) min = mn;
          if (GST_CLOCK_TIME_IS_VALID(mx) && (!GST_CLOCK_TIME_IS_VALID(max) || mx < max)) max = mx;
        }
        gst_query_unref(q);
      }
      if (!any) return FALSE;
      gst_query_set_latency(query, live, min, max);
      return TRUE;
    }
    default:
      return gst_pad_query_default(pad, parent, query);
  }
}

static gboolean weave_infer_src_activate_mode(GstPad* pad, GstObject* parent, GstPadMode mode,
                                              gboolean active) {
  auto* self = GST_WEAVE_INFER(parent);
  WeaveInferImpl* impl = self->impl.get();
  if (mode != GST_PAD_MODE_PUSH) return FALSE;
  // The task lives on the first src pad; the others only follow.
  if (impl->srcs.empty() || pad != impl->srcs[0].pad) return TRUE;
  if (active) {
    start_task(self);
    return TRUE;
  }
  impl->runner.flush(GST_FLOW_FLUSHING);
  return gst_pad_stop_task(pad);
}

// ---------------------------------------------------------------------------------------------
// The streaming task

static void ensure_stream_start(GstWeaveInfer* self, GstEvent* upstream) {
  WeaveInferImpl* impl = self->impl.get();
  guint group = 0;
  bool has_group = upstream != nullptr && gst_event_parse_group_id(upstream, &group);
  const gchar* upstream_id = nullptr;
  if (upstream != nullptr) gst_event_parse_stream_start(upstream, &upstream_id);
  // One stream per output; gst_pad_create_stream_id() only serves elements with one sink pad.
  std::string base;
  if (upstream_id != nullptr) {
    base = upstream_id;
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%08x%08x", g_random_int(), g_random_int());
    base = buf;
  }
  for (auto& s : impl->srcs) {
    std::string id = base + "/" + GST_PAD_NAME(s.pad);
    GstEvent* ev = gst_event_new_stream_start(id.c_str());
    if (has_group) gst_event_set_group_id(ev, group);
    gst_pad_push_event(s.pad, ev);
  }
  impl->stream_started = true;
}

static void push_src_caps(GstWeaveInfer* self, int k, const weave::Dims& dims) {
  WeaveInferImpl* impl = self->impl.get();
  PadInfo& s = impl->srcs[k];
  if (!impl->stream_started) ensure_stream_start(self, nullptr);
  weave::caps::CapsTensor t;
  t.name = s.info.name;
  t.dtype = s.info.dtype;
  t.dims = dims;
  auto caps = weave::caps::caps_from_dims(t.name, t.dtype, t.dims);
  {
    std::lock_guard lock(impl->caps_lock);
    s.tensor = t;
    s.has_caps = true;
  }
  GST_DEBUG_OBJECT(s.pad, "caps %" GST_PTR_FORMAT, caps.get());
  gst_pad_push_event(s.pad, gst_event_new_caps(caps.get()));
}

static void push_all(GstWeaveInfer* self, GstEvent* event) {
  for (auto& s : self->impl->srcs) gst_pad_push_event(s.pad, gst_event_ref(event));
  gst_event_unref(event);
}

static bool src_caps_known(WeaveInferImpl* impl) {
  std::lock_guard lock(impl->caps_lock);
  for (const auto& s : impl->srcs)
    if (!s.has_caps) return false;
  return true;
}

static void push_held(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  std::vector<EventPtr> held;
  held.swap(impl->held);
  for (auto& ev : held) {
    if (GST_EVENT_TYPE(ev.get()) == GST_EVENT_SEGMENT) impl->segment_pushed = true;
    push_all(self, ev.release());
  }
}

// Held events first, then a default segment if upstream sent none: what must precede data or a gap.
static void ensure_segment(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  if (!impl->held.empty()) push_held(self);
  if (impl->segment_pushed) return;
  GstSegment seg;
  gst_segment_init(&seg, GST_FORMAT_TIME);
  push_all(self, gst_event_new_segment(&seg));
  impl->segment_pushed = true;
}

// Output buffers the model writes into directly (R7): 64-byte aligned, mapped for writing while
// the frame runs; pushed (or released) afterwards.
class OutBuffers final : public weave::stream::OutputSink {
 public:
  explicit OutBuffers(std::size_t n) : outs_(n) {}
  ~OutBuffers() override {
    for (auto& o : outs_) {
      unmap(o);
      if (o.buffer != nullptr) gst_buffer_unref(o.buffer);
    }
  }
  weave::Expected<std::span<std::byte>> allocate(int index, weave::DType, const weave::Dims&,
                                                 std::size_t bytes) override {
    Out& o = outs_[static_cast<std::size_t>(index)];
    o.buffer = bytes > 0 ? weave::gst::output_buffer_new(bytes) : gst_buffer_new();
    if (o.buffer == nullptr) return weave::make_error("cannot allocate ", bytes, " bytes for output ", index);
    if (bytes == 0) return std::span<std::byte>();
    if (!gst_buffer_map(o.buffer, &o.map, GST_MAP_WRITE))
      return weave::make_error("cannot map the buffer of output ", index);
    o.mapped = true;
    return std::span<std::byte>(reinterpret_cast<std::byte*>(o.map.data), o.map.size);
  }
  // Unmaps every output and hands buffer k over.
  void unmap_all() {
    for (auto& o : outs_) unmap(o);
  }
  GstBuffer* take(std::size_t k) { return std::exchange(outs_[k].buffer, nullptr); }

 private:
  struct Out {
    GstBuffer* buffer = nullptr;
    GstMapInfo map{};
    bool mapped = false;
  };
  static void unmap(Out& o) {
    if (o.mapped) gst_buffer_unmap(o.buffer, &o.map);
    o.mapped = false;
  }
  std::vector<Out> outs_;
};

// The input buffers of one set, mapped for reading while the frame runs.
class MappedInputs {
 public:
  explicit MappedInputs(const std::vector<Payload>& inputs) : inputs_(inputs), maps_(inputs.size()) {}
  ~MappedInputs() {
    for (std::size_t i = 0; i < mapped_; ++i) gst_buffer_unmap(input(i).buffer.get(), &maps_[i]);
  }
  // Maps every buffer; views of the tensors their caps described.
  bool map(std::vector<weave::stream::InputFrame>& out) {
    for (; mapped_ < inputs_.size(); ++mapped_) {
      GstBuffer* b = input(mapped_).buffer.get();
      const guint blocks = gst_buffer_n_memory(b);
      if (!gst_buffer_map(b, &maps_[mapped_], GST_MAP_READ)) return false;
      const auto& t = input(mapped_).tensor;
      out.push_back(
          {weave::ConstTensorView{maps_[mapped_].data, t.dtype, t.dims}, maps_[mapped_].size, blocks > 1});
    }
    return true;
  }

 private:
  const Input& input(std::size_t i) const { return inputs_[i].get<Input>(); }
  const std::vector<Payload>& inputs_;
  std::vector<GstMapInfo> maps_;
  std::size_t mapped_ = 0;
};

static GstFlowReturn run_set(GstWeaveInfer* self, const std::vector<Payload>& inputs) {
  WeaveInferImpl* impl = self->impl.get();
  if (!impl->stream_started) ensure_stream_start(self, nullptr);
  OutBuffers outs(impl->srcs.size());
  weave::Expected<std::vector<weave::Dims>> out_dims = weave::make_error("not run");
  {
    // Inputs stay mapped (READ) until the run is over: bound ones are read in place.
    MappedInputs mapped(inputs);
    std::vector<weave::stream::InputFrame> frames;
    if (!mapped.map(frames)) {
      GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot map an input buffer."), (nullptr));
      return GST_FLOW_ERROR;
    }
    out_dims = impl->frames->run(frames, outs);
    outs.unmap_all();
  }
  if (!out_dims) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("%s", out_dims.message().c_str()), (nullptr));
    return GST_FLOW_ERROR;
  }

  GstBuffer* first = inputs.empty() ? nullptr : inputs[0].get<Input>().buffer.get();
  for (std::size_t k = 0; k < impl->srcs.size(); ++k) {
    PadInfo& s = impl->srcs[k];
    if (!s.has_caps || !(s.tensor.dims == (*out_dims)[k]) || s.tensor.dtype != s.info.dtype)
      push_src_caps(self, static_cast<int>(k), (*out_dims)[k]);
  }
  // Sticky order: caps, then segment (and held tags), then data.
  ensure_segment(self);
  GstFlowReturn ret = GST_FLOW_OK;
  for (std::size_t k = 0; k < impl->srcs.size(); ++k) {
    GstBuffer* buf = outs.take(k);
    if (first != nullptr) {
      gst_buffer_copy_into(buf, first, GST_BUFFER_COPY_TIMESTAMPS, 0, static_cast<gsize>(-1));
      // Metas about the stream (e.g. where a tensor came from) follow the data.
      weave::caps::copy_untagged_metas(buf, first);
    }
    GstFlowReturn r = gst_pad_push(impl->srcs[k].pad, buf);
    ret = gst_flow_combiner_update_pad_flow(impl->combiner, impl->srcs[k].pad, r);
  }
  return ret;
}

static void handle_control(GstWeaveInfer* self, Control& item) {
  WeaveInferImpl* impl = self->impl.get();
  if (!item.event) {
    for (std::size_t k = 0; k < impl->srcs.size() && k < item.caps.size(); ++k)
      push_src_caps(self, static_cast<int>(k), item.caps[k]);
    push_held(self);
    return;
  }
  GstEvent* ev = item.event.get();
  if (GST_EVENT_TYPE(ev) == GST_EVENT_STREAM_START) {
    ensure_stream_start(self, ev);
  } else if ((event_has_flag(ev, GST_EVENT_TYPE_STICKY) || GST_EVENT_TYPE(ev) == GST_EVENT_GAP) &&
             !src_caps_known(impl)) {
    // A gap keeps its place behind the segment it belongs to.
    impl->held.push_back(std::move(item.event));
  } else if (GST_EVENT_TYPE(ev) == GST_EVENT_GAP) {
    // A frame without data (e.g. no region to crop): every output says so, in its place.
    ensure_segment(self);
    push_all(self, item.event.release());
  } else {
    if (GST_EVENT_TYPE(ev) == GST_EVENT_SEGMENT) {
      if (!impl->stream_started) ensure_stream_start(self, nullptr);
      impl->segment_pushed = true;
    }
    push_all(self, item.event.release());
  }
}

static void weave_infer_loop(gpointer user_data) {
  auto* self = GST_WEAVE_INFER(user_data);
  WeaveInferImpl* impl = self->impl.get();
  Runner::Step step = impl->runner.next();
  GstFlowReturn ret = GST_FLOW_OK;
  switch (step.kind) {
    case Runner::StepKind::flushing:
      gst_pad_pause_task(impl->srcs[0].pad);
      return;
    case Runner::StepKind::set:
      ret = run_set(self, step.buffers);
      break;
    case Runner::StepKind::event:
      handle_control(self, step.event.get<Control>());
      break;
    case Runner::StepKind::eos:
      if (!impl->stream_started) ensure_stream_start(self, nullptr);
      push_all(self, gst_event_new_eos());
      break;
  }
  if (ret == GST_FLOW_OK) return;
  GST_DEBUG_OBJECT(self, "pausing task: %s", gst_flow_get_name(ret));
  impl->runner.stop(ret);
  gst_pad_pause_task(impl->srcs[0].pad);
  if (ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS) {
    GST_ELEMENT_FLOW_ERROR(self, ret);
    push_all(self, gst_event_new_eos());
  }
}

// ---------------------------------------------------------------------------------------------
// State changes

static bool prepare_to_run(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  GST_OBJECT_LOCK(self);
  weave::ModelSettings settings = settings_locked(impl);
  const std::string model = settings.model;
  const int threads = impl->threads;
  const bool bounds_from_caps = impl->max_shape.empty();
  GST_OBJECT_UNLOCK(self);
  settings.bounds = effective_bounds(self);
  if (model.empty()) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND,
                      ("No model set: set the 'model' property to an .onnx or .weave file."), (nullptr));
    return false;
  }
  // A running element keeps the model it loaded; the next start runs the file as it is then
  // (or fails saying why).
  const weave::Reload reload = impl->loaded.reload_needed(settings);
  if (reload == weave::Reload::file_changed)
    GST_INFO_OBJECT(self, "model file '%s' changed since it was loaded: loading it again", model.c_str());
  if (reload != weave::Reload::none) load_model(self, settings, impl->srcs.empty(), false);
  if (!impl->loaded.factory() && bounds_from_caps && !settings.bounds.empty()) {
    // Upstream caps promise a range (weaveconvert offers up to 16384x16384), not frames that
    // large: when planning for the whole range fails, plan per frame size instead.
    GST_WARNING_OBJECT(self,
                       "planning for the upstream caps bound %s failed (%s); planning per input size instead",
                       weave::shape_bounds_text(settings.bounds).c_str(), load_error(impl).c_str());
    settings.bounds.clear();
    load_model(self, settings, impl->srcs.empty(), false);
  }
  const auto factory = impl->loaded.factory();
  if (!factory) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Cannot load model '%s'.", model.c_str()),
                      ("%s", load_error(impl).c_str()));
    return false;
  }
  // Posted here, not in load_model(): a model set as a property is loaded before there is a bus.
  if (const std::string warning = impl->loaded.take_warning(); !warning.empty())
    GST_ELEMENT_WARNING(self, RESOURCE, WRITE,
                        ("Model cache problem for '%s' (running anyway).", model.c_str()),
                        ("%s", warning.c_str()));
  weave::ExecutorOptions eo;
  eo.threads = threads;  // a cap on this instance's share of the process-wide budget
  // Inputs and outputs are bound every frame, so the intermediates need to exist only while a
  // frame computes: lease the compute slot's arena then, and N idle elements cost no arena each.
  eo.lend_arena = true;
  eo.log = [self](std::string_view m) {
    GST_INFO_OBJECT(self, "%.*s", static_cast<int>(m.size()), m.data());
  };
  auto runner = weave::stream::FrameRunner::create(factory, eo, impl->stats);
  if (!runner) {
    GST_ELEMENT_ERROR(self, CORE, FAILED, ("Cannot create an executor for '%s'.", model.c_str()),
                      ("%s", runner.message().c_str()));
    return false;
  }
  impl->frames = std::move(*runner);
  impl->runner.reset();
  impl->stream_started = false;
  impl->segment_pushed = false;
  for (auto& s : impl->sinks) {
    if (!gst_pad_is_linked(s.pad))
      GST_ELEMENT_WARNING(
          self, CORE, PAD,
          ("Input pad %s is not linked; the model runs only when every input has data.", GST_PAD_NAME(s.pad)),
          ("pads: %s", pad_list(impl).c_str()));
  }
  bool any_src_linked = false;
  for (auto& s : impl->srcs) any_src_linked = any_src_linked || gst_pad_is_linked(s.pad);
  if (!any_src_linked)
    GST_ELEMENT_WARNING(self, CORE, PAD, ("No output pad is linked."), ("pads: %s", pad_list(impl).c_str()));
  if (impl->combiner != nullptr) gst_flow_combiner_reset(impl->combiner);
  // A gst-launch delayed link waiting for a pad that does not exist is reported by the
  // parser when it sees no-more-pads; say it again now that all links are made.
  gst_element_no_more_pads(GST_ELEMENT(self));
  GST_INFO_OBJECT(self, "running '%s' with up to %d of the process's %d thread(s); pads: %s", model.c_str(),
                  weave::ThreadBudget::global().parallel(threads).threads(),
                  weave::ThreadBudget::global().threads(), pad_list(impl).c_str());
  return true;
}

static void cleanup_after_run(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  impl->runner.reset();
  {
    std::lock_guard lock(impl->caps_lock);
    for (auto& v : {&impl->sinks, &impl->srcs})
      for (auto& p : *v) p.has_caps = false;
  }
  impl->held.clear();
  impl->frames.reset();
}

static GstStateChangeReturn gst_weave_infer_change_state(GstElement* element, GstStateChange transition) {
  auto* self = GST_WEAVE_INFER(element);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED && !prepare_to_run(self))
    return GST_STATE_CHANGE_FAILURE;
  GstStateChangeReturn ret =
      GST_ELEMENT_CLASS(gst_weave_infer_parent_class)->change_state(element, transition);
  if (ret == GST_STATE_CHANGE_FAILURE) {
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) cleanup_after_run(self);
    return ret;
  }
  // Pads (and with them the task) are deactivated by the parent class before this point.
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) cleanup_after_run(self);
  return ret;
}

// ---------------------------------------------------------------------------------------------
// Properties

static bool model_may_change(GstWeaveInfer* self) {
  GST_OBJECT_LOCK(self);
  bool ok = GST_STATE(self) <= GST_STATE_READY && GST_STATE_TARGET(self) <= GST_STATE_READY;
  GST_OBJECT_UNLOCK(self);
  return ok;
}

static void gst_weave_infer_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec) {
  auto* self = GST_WEAVE_INFER(object);
  WeaveInferImpl* impl = self->impl.get();
  switch (prop_id) {
    case PROP_MODEL: {
      const gchar* m = g_value_get_string(value);
      if (!model_may_change(self)) {
        g_warning("weaveinfer %s: model can only be changed in NULL or READY state; keeping '%s'",
                  GST_OBJECT_NAME(self), impl->model.c_str());
        GST_ELEMENT_WARNING(self, CORE, STATE_CHANGE, ("model can only be changed in NULL or READY state"),
                            ("keeping '%s', ignoring '%s'", impl->model.c_str(), m != nullptr ? m : ""));
        break;
      }
      GST_OBJECT_LOCK(self);
      impl->model = m != nullptr ? m : "";
      const weave::ModelSettings settings = settings_locked(impl);  // no bounds: they were another model's
      GST_OBJECT_UNLOCK(self);
      load_model(self, settings, true, true);
      break;
    }
    case PROP_COMPRESSION:
      GST_OBJECT_LOCK(self);
      impl->compression = g_value_get_enum(value);
      GST_OBJECT_UNLOCK(self);
      break;
    case PROP_CACHE_DIR: {
      const gchar* d = g_value_get_string(value);
      GST_OBJECT_LOCK(self);
      impl->cache_dir_set = d != nullptr;
      impl->cache_dir = d != nullptr ? d : "";
      GST_OBJECT_UNLOCK(self);
      break;
    }
    case PROP_THREADS:
      GST_OBJECT_LOCK(self);
      impl->threads = g_value_get_int(value);
      GST_OBJECT_UNLOCK(self);
      break;
    case PROP_QUEUE_SIZE:
      impl->runner.set_capacity(g_value_get_int(value));  // a larger queue may unblock waiting inputs
      break;
    case PROP_LEAKY:
      GST_OBJECT_LOCK(self);
      impl->leaky = g_value_get_enum(value);
      impl->runner.set_leaky(leaky_of(impl->leaky));
      GST_OBJECT_UNLOCK(self);
      break;
    case PROP_MAX_SHAPE: {
      const gchar* m = g_value_get_string(value);
      std::string text = m != nullptr ? m : "";
      if (auto parsed = weave::parse_shape_bounds(text); !parsed) {
        g_warning("weaveinfer %s: max-shape: %s; keeping '%s'", GST_OBJECT_NAME(self),
                  parsed.message().c_str(), impl->max_shape.c_str());
        GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS, ("Invalid max-shape '%s'.", text.c_str()),
                            ("%s", parsed.message().c_str()));
        break;
      }
      GST_OBJECT_LOCK(self);
      impl->max_shape = text;
      GST_OBJECT_UNLOCK(self);
      break;
    }
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_infer_get_property(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec) {
  auto* self = GST_WEAVE_INFER(object);
  WeaveInferImpl* impl = self->impl.get();
  switch (prop_id) {
    case PROP_MODEL:
      GST_OBJECT_LOCK(self);
      g_value_set_string(value, impl->model.empty() ? nullptr : impl->model.c_str());
      GST_OBJECT_UNLOCK(self);
      break;
    case PROP_COMPRESSION:
      GST_OBJECT_LOCK(self);
      g_value_set_enum(value, impl->compression);
      GST_OBJECT_UNLOCK(self);
      break;
    case PROP_CACHE_DIR: {
      GST_OBJECT_LOCK(self);
      std::string d = impl->cache_dir_set ? impl->cache_dir : weave::default_cache_dir();
      GST_OBJECT_UNLOCK(self);
      g_value_set_string(value, d.c_str());
      break;
    }
    case PROP_THREADS:
      GST_OBJECT_LOCK(self);
      g_value_set_int(value, impl->threads);
      GST_OBJECT_UNLOCK(self);
      break;
    case PROP_QUEUE_SIZE:
      g_value_set_int(value, impl->runner.capacity());
      break;
    case PROP_LEAKY:
      GST_OBJECT_LOCK(self);
      g_value_set_enum(value, impl->leaky);
      GST_OBJECT_UNLOCK(self);
      break;
    case PROP_FRAMES_PROCESSED:
      g_value_set_uint64(value, impl->stats->processed.load());
      break;
    case PROP_FRAMES_DROPPED:
      g_value_set_uint64(value, impl->runner.dropped());
      break;
    case PROP_MEAN_INFERENCE_MS:
      g_value_set_double(value, impl->stats->mean_ms());
      break;
    case PROP_LAST_INFERENCE_MS:
      g_value_set_double(value, impl->stats->last_ms.load());
      break;
    case PROP_FACTORY_ID: {
      const auto factory = impl->loaded.factory();
      const void* f = factory.get();
      if (f == nullptr) {
        g_value_set_string(value, nullptr);
      } else {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%p", f);
        g_value_set_string(value, buf);
      }
      break;
    }
    case PROP_ARTIFACT: {
      const std::string artifact = impl->loaded.artifact_path();
      g_value_set_string(value, artifact.empty() ? nullptr : artifact.c_str());
      break;
    }
    case PROP_MAX_SHAPE:
      GST_OBJECT_LOCK(self);
      g_value_set_string(value, impl->max_shape.empty() ? nullptr : impl->max_shape.c_str());
      GST_OBJECT_UNLOCK(self);
      break;
    case PROP_INPUT_COPIES:
      g_value_set_uint64(value, impl->stats->input_copies.load());
      break;
    case PROP_OUTPUT_COPIES:
      g_value_set_uint64(value, impl->stats->output_copies.load());
      break;
    case PROP_BYTES_COPIED:
      g_value_set_uint64(value, impl->stats->bytes_copied.load());
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_infer_finalize(GObject* object) {
  auto* self = GST_WEAVE_INFER(object);
  if (self->impl->combiner != nullptr) gst_flow_combiner_free(self->impl->combiner);
  self->impl.destroy();
  G_OBJECT_CLASS(gst_weave_infer_parent_class)->finalize(object);
}

static void gst_weave_infer_class_init(GstWeaveInferClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  gobject_class->set_property = gst_weave_infer_set_property;
  gobject_class->get_property = gst_weave_infer_get_property;
  gobject_class->finalize = gst_weave_infer_finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR(gst_weave_infer_change_state);

  const auto rw = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  const auto ro = static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_property(
      gobject_class, PROP_MODEL,
      g_param_spec_string(
          "model", "Model",
          "Model file: an ONNX model (.onnx, compiled on first use into the cache) or a compiled "
          "Weave artifact (.weave). Setting it loads the model and creates the pads sink_<input> "
          "and src_<output>. Can only be changed in the NULL or READY state.",
          nullptr, static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property(
      gobject_class, PROP_COMPRESSION,
      g_param_spec_enum(
          "compression", "Compression",
          "Params codec of the .weave artifact written into cache-dir when an ONNX model is compiled "
          "(none = uncompressed, read in place from the mapped file). Each codec has its own cache "
          "entry. No effect for .weave models.",
          GST_TYPE_WEAVE_COMPRESSION, kDefaultCompression,
          static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property(
      gobject_class, PROP_CACHE_DIR,
      g_param_spec_string(
          "cache-dir", "Cache directory",
          "Directory of compiled artifacts. An ONNX model is compiled once into "
          "<cache-dir>/<name>-<key>.weave (key: path, size, modification time, compression, "
          "Weave version) and reused while the file is unchanged; written atomically. "
          "Default: $XDG_CACHE_HOME/weave or ~/.cache/weave. An empty string disables the "
          "cache (the model is compiled in memory every time). Set it before model (on a gst-launch "
          "line: cache-dir=... model=...), since setting model loads the model.",
          nullptr, static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property(
      gobject_class, PROP_THREADS,
      g_param_spec_int("threads", "Threads",
                       "Maximum threads this instance may use from the process-wide budget (0 = all). All "
                       "elements share one budget of WEAVE_NUM_THREADS threads (default: one per core), so "
                       "several elements do not oversubscribe cores. Applied when going to PAUSED.",
                       0, 256, 0, static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property(
      gobject_class, PROP_QUEUE_SIZE,
      g_param_spec_int(
          "queue-size", "Queue size",
          "Input buffers held between the sink pads and the element's streaming thread. When full, "
          "upstream blocks (leaky=none) or a buffer is dropped (see leaky).",
          1, 1024, kDefaultQueueSize, static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_PLAYING)));
  g_object_class_install_property(
      gobject_class, PROP_LEAKY,
      g_param_spec_enum(
          "leaky", "Leaky",
          "What to do when the input queue is full: none = block upstream (nothing is dropped), "
          "upstream = drop the incoming buffer, downstream = drop the oldest queued buffer. Drops "
          "are counted in frames-dropped.",
          GST_TYPE_WEAVE_INFER_LEAKY, kDefaultLeaky,
          static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_PLAYING)));
  g_object_class_install_property(
      gobject_class, PROP_FRAMES_PROCESSED,
      g_param_spec_uint64("frames-processed", "Frames processed",
                          "Model runs completed (one per gathered set of input buffers).", 0, G_MAXUINT64, 0,
                          ro));
  g_object_class_install_property(
      gobject_class, PROP_FRAMES_DROPPED,
      g_param_spec_uint64("frames-dropped", "Frames dropped",
                          "Input buffers dropped: by a leaky queue, or (multi-input models) buffers whose "
                          "timestamp never got a partner on every input.",
                          0, G_MAXUINT64, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_MEAN_INFERENCE_MS,
      g_param_spec_double("mean-inference-ms", "Mean inference time",
                          "Mean wall-clock time of one model run in milliseconds (0 before the first run).",
                          0, G_MAXDOUBLE, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_LAST_INFERENCE_MS,
      g_param_spec_double("last-inference-ms", "Last inference time",
                          "Wall-clock time of the last model run in milliseconds.", 0, G_MAXDOUBLE, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_FACTORY_ID,
      g_param_spec_string("factory-id", "Factory id",
                          "Identity of the shared, immutable model (Factory) this instance runs; instances "
                          "with the same model file and settings show the same id. NULL when no model is "
                          "loaded.",
                          nullptr, ro));
  g_object_class_install_property(
      gobject_class, PROP_ARTIFACT,
      g_param_spec_string(
          "artifact", "Artifact",
          "The .weave file the model was read from: the model itself, its entry in cache-dir, "
          "or NULL when it was compiled in memory.",
          nullptr, ro));

  g_object_class_install_property(
      gobject_class, PROP_MAX_SHAPE,
      g_param_spec_string(
          "max-shape", "Max shape",
          "Upper bound of every dim of model inputs, e.g. \"x=1x3x960x960\" (several separated by ';'; the "
          "model's input names). Memory is planned once for the bound and any frame size within it runs "
          "without allocating; larger caps are refused. Unset: finite upper bounds of the upstream caps are "
          "used (e.g. shape=<1,3,[1,960],[1,960]>), else no bound. Applied when going to PAUSED.",
          nullptr, static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property(
      gobject_class, PROP_INPUT_COPIES,
      g_param_spec_uint64("input-copies", "Input copies",
                          "Input tensors copied into the model since start. An input buffer of one memory "
                          "block aligned to its element size is read in place and not counted; others "
                          "are copied once (twice when gst_buffer_map must merge several blocks). "
                          "Per frame: input-copies / frames-processed.",
                          0, G_MAXUINT64, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_OUTPUT_COPIES,
      g_param_spec_uint64("output-copies", "Output copies",
                          "Outputs copied into their buffer after the run instead of being written in place "
                          "(an output that is a constant of the model or one of its inputs).",
                          0, G_MAXUINT64, 0, ro));
  g_object_class_install_property(gobject_class, PROP_BYTES_COPIED,
                                  g_param_spec_uint64("bytes-copied", "Bytes copied",
                                                      "Bytes of all the copies counted by input-copies and "
                                                      "output-copies.",
                                                      0, G_MAXUINT64, 0, ro));

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "Weave inference", "Filter/Analyzer/Tensor",
      "Runs a neural-network model (ONNX or .weave) on tensor streams: one sink pad per model input, one "
      "src pad per output",
      "Weave developers");
  gst_type_mark_as_plugin_api(GST_TYPE_WEAVE_COMPRESSION, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_WEAVE_INFER_LEAKY, static_cast<GstPluginAPIFlags>(0));
}

static void gst_weave_infer_init(GstWeaveInfer* self) {
  self->impl.construct();
}

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE(weaveinfer, "weaveinfer", GST_RANK_NONE, GST_TYPE_WEAVE_INFER,
                                      GST_DEBUG_CATEGORY_INIT(gst_weave_infer_debug, "weaveinfer", 0,
                                                              "Weave model inference element"));
