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
 * its own Executor. The queue, gathering and runs are core/stream (StreamRunner, FrameRunner),
 * what model to load and when core/loader (ModelSlot); gstweaveinfer*.cpp are the GStreamer side.
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
 *
 * Batching across streams: elements of one process with the same model and the same `batch-size`
 * (> 1) hand their frames to one core/stream BatchGroup, which runs up to batch-size of them as one
 * batch (joined along the first dim, waiting at most `batch-timeout` for the batch to fill) and
 * gives each element its own rows of every output. On CPUs independent streams usually run faster
 * (docs/performance.md measures it); it is there for models and machines where a batch pays.
 * |[
 * gst-launch-1.0 \
 *     videotestsrc num-buffers=100 ! video/x-raw,width=224,height=224 ! weaveconvert ! \
 *       weaveinfer model=squeezenet1_1.onnx batch-size=2 ! fakesink \
 *     videotestsrc num-buffers=100 pattern=ball ! video/x-raw,width=224,height=224 ! weaveconvert ! \
 *       weaveinfer model=squeezenet1_1.onnx batch-size=2 ! fakesink
 * ]|
 */
#include "gst-plugin/gstweaveinfer.h"

#include <cstdio>
#include <string>

#include "core/threads/thread_budget.h"
#include "gst-plugin/elements.h"
#include "gst-plugin/gstweaveinfer_private.h"

GST_DEBUG_CATEGORY(gst_weave_infer_debug);

using weave::gst::infer::kDefaultCompression;
using weave::gst::infer::kDefaultLeaky;
using weave::gst::infer::kDefaultQueueSize;
using weave::gst::infer::WeaveInferImpl;
namespace infer = weave::gst::infer;

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
  PROP_INFERENCE_INTERVAL,
  PROP_FRAMES_SKIPPED,
  PROP_BATCH_SIZE,
  PROP_BATCH_TIMEOUT,
  PROP_FRAMES_BATCHED,
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

// ---------------------------------------------------------------------------------------------
// Model loading (NULL/READY only; the policy is weave::ModelSlot's)

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
  if (make_pads) infer::remove_pads(self);
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
    infer::add_pads(self, *factory);
    GST_INFO_OBJECT(self, "pads: %s", infer::pad_list(impl).c_str());
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
// State changes

// The batch group of the model, or null with a warning when the model cannot batch (the group
// says why: core/stream/batch_group.h).
static std::shared_ptr<weave::stream::BatchGroup> join_batch(
    GstWeaveInfer* self, const std::shared_ptr<const weave::Factory>& factory, int batch_size) {
  auto group = weave::stream::BatchGroup::join(factory, batch_size);
  if (const std::string why = group->unbatchable(); !why.empty()) {
    GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("batch-size=%d ignored: frames run alone.", batch_size),
                        ("%s", why.c_str()));
    return nullptr;
  }
  GST_INFO_OBJECT(self, "batching up to %d frames with the other elements of this model", batch_size);
  return group;
}

static bool prepare_to_run(GstWeaveInfer* self) {
  WeaveInferImpl* impl = self->impl.get();
  GST_OBJECT_LOCK(self);
  weave::ModelSettings settings = settings_locked(impl);
  const std::string model = settings.model;
  const int threads = impl->threads;
  const int batch_size = impl->batch_size;
  const bool bounds_from_caps = impl->max_shape.empty();
  GST_OBJECT_UNLOCK(self);
  settings.bounds = infer::effective_bounds(self);
  // A batch holds up to batch_size frames along the first dim of inputs whose first dim is
  // dynamic (a fixed one cannot batch: join_batch() says so once the model is loaded).
  if (batch_size > 1)
    for (auto& [name, shape] : settings.bounds)
      for (const auto& s : impl->sinks)
        if (s.info.name == name && !s.info.shape.empty() && s.info.shape[0] == weave::kDynamic &&
            !shape.empty() && shape[0] > 0)
          shape[0] *= batch_size;
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
  impl->batch = batch_size > 1 ? join_batch(self, factory, batch_size) : nullptr;
  impl->warned_unbatchable = false;
  impl->runner.reset();
  impl->stream_started = false;
  impl->segment_pushed = false;
  infer::prepare_pads(self);
  GST_INFO_OBJECT(self, "running '%s' with up to %d of the process's %d thread(s); pads: %s", model.c_str(),
                  weave::ThreadBudget::global().parallel(threads).threads(),
                  weave::ThreadBudget::global().threads(), infer::pad_list(impl).c_str());
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
  impl->batch.reset();
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
    case PROP_INFERENCE_INTERVAL:
      impl->inference_interval = g_value_get_int(value);
      break;
    case PROP_BATCH_SIZE:
      GST_OBJECT_LOCK(self);
      impl->batch_size = g_value_get_int(value);
      GST_OBJECT_UNLOCK(self);
      break;
    case PROP_BATCH_TIMEOUT:
      impl->batch_timeout_ms = g_value_get_uint(value);
      break;
    case PROP_LEAKY:
      GST_OBJECT_LOCK(self);
      impl->leaky = g_value_get_enum(value);
      impl->runner.set_leaky(infer::leaky_of(impl->leaky));
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
    case PROP_INFERENCE_INTERVAL:
      g_value_set_int(value, impl->inference_interval.load());
      break;
    case PROP_FRAMES_SKIPPED:
      g_value_set_uint64(value, impl->skipped.load());
      break;
    case PROP_BATCH_SIZE:
      GST_OBJECT_LOCK(self);
      g_value_set_int(value, impl->batch_size);
      GST_OBJECT_UNLOCK(self);
      break;
    case PROP_BATCH_TIMEOUT:
      g_value_set_uint(value, impl->batch_timeout_ms.load());
      break;
    case PROP_FRAMES_BATCHED:
      g_value_set_uint64(value, impl->batched.load());
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
      gobject_class, PROP_INFERENCE_INTERVAL,
      g_param_spec_int("inference-interval", "Inference interval",
                       "Run the model on every N-th set of inputs only (counted from the first after a "
                       "segment); the others go out as a GAP on every output, in their place, so frames flow "
                       "at full rate (weavemeta marks them skipped, weavetrack fills in the regions of its "
                       "tracks). 1 = every set.",
                       1, G_MAXINT, 1, static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_PLAYING)));
  g_object_class_install_property(
      gobject_class, PROP_FRAMES_SKIPPED,
      g_param_spec_uint64("frames-skipped", "Frames skipped",
                          "Sets of inputs not run because of inference-interval (sent on as a GAP).", 0,
                          G_MAXUINT64, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_BATCH_SIZE,
      g_param_spec_int(
          "batch-size", "Batch size",
          "Run frames of up to this many weaveinfer elements of this process that run the same model (same "
          "file and settings, bounds included: max-shape or the upstream caps) and the same batch-size as "
          "one batch: inputs joined along their first dim, each "
          "element given back its own rows of every output (what its frame alone gives, up to float "
          "rounding). The first frame of a batch waits at most batch-timeout for the others; frames whose "
          "dims past the first differ run alone. The model's inputs need a dynamic first dim (else this is "
          "ignored, with a warning); the bound of the first dim (max-shape or upstream caps) is multiplied "
          "by the batch size. On CPUs independent streams are usually faster (docs/performance.md). "
          "1 = no batching. Applied when going to PAUSED.",
          1, 256, 1, static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property(
      gobject_class, PROP_BATCH_TIMEOUT,
      g_param_spec_uint("batch-timeout", "Batch timeout",
                        "With batch-size > 1: how long a frame waits in a batch for the other streams' "
                        "frames, in milliseconds; the batch runs with the frames it has when the shortest "
                        "timeout of its elements is up (at once when one of them flushes or stops). The "
                        "most latency batching adds to a frame beyond the batch's run.",
                        0, 60000, infer::kDefaultBatchTimeoutMs,
                        static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_PLAYING)));
  g_object_class_install_property(
      gobject_class, PROP_FRAMES_BATCHED,
      g_param_spec_uint64("frames-batched", "Frames batched",
                          "Frames this element ran in a batch with other elements' frames (batch-size); "
                          "the rest of frames-processed ran alone.",
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
