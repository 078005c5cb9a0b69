/**
 * SECTION:element-weavedecode
 * @title: weavedecode
 *
 * Turns a model's output tensor into results. Buffers pass through unchanged, so the element can
 * sit anywhere after a `weaveinfer` source pad. For every buffer it posts an element message on the
 * bus and, with #GstWeaveDecode:json set, writes one JSON line.
 *
 * Mode `classification` reads a float32 tensor of shape `<N>` or `<1,N>` and reports the top-k
 * classes. The bus message is a structure named `weave-classification` with fields `pts`
 * (guint64, GST_CLOCK_TIME_NONE when unknown), `labels` (array of strings), `scores` (array of
 * doubles) and `class-ids` (array of ints), best first. A JSON line looks like
 * `{"pts":0,"results":[{"class_id":281,"label":"tabby","score":0.91}]}`.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=10 ! weaveconvert ! weaveinfer model=resnet18.onnx \
 *     ! weavedecode labels=imagenet.txt top-k=3 softmax=true json=stdout ! fakesink
 * ]|
 */
#include "gst-plugin/gstweavedecode.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "caps/tensor_caps.h"
#include "core/vision/decoder.h"
#include "core/vision/json.h"
#include "core/vision/labels.h"
#include "gst-plugin/elements.h"
#include "gst-plugin/instance_state.h"

GST_DEBUG_CATEGORY_STATIC(weave_decode_debug);
#define GST_CAT_DEFAULT weave_decode_debug

namespace wv = weave::vision;

namespace {

enum {
  PROP_0,
  PROP_MODE,
  PROP_LABELS,
  PROP_TOP_K,
  PROP_SOFTMAX,
  PROP_THRESHOLD,
  PROP_JSON,
  PROP_RESULTS,
  PROP_FRAMES,
};

constexpr guint kDefaultTopK = 5;
constexpr double kDefaultThreshold = -G_MAXDOUBLE;

struct DecodeState {
  std::mutex lock;  // guards the properties and the per-run state below
  int mode = GST_WEAVE_DECODE_MODE_CLASSIFICATION;
  std::string labels_path;
  guint top_k = kDefaultTopK;
  bool softmax = false;
  double threshold = kDefaultThreshold;
  std::string json;  // "" = off, "stdout", or a file path

  // Per run (start .. stop)
  std::unique_ptr<wv::Decoder> decoder;
  std::size_t num_labels = 0;
  wv::JsonLineWriter json_out;
  weave::DType dtype = weave::DType::undefined;
  weave::Dims dims;
  bool caps_ok = false;

  std::atomic<guint64> results{0};
  std::atomic<guint64> frames{0};
};

}  // namespace

struct _GstWeaveDecode {
  GstBaseTransform parent;
  weave::gst::InstanceState<DecodeState> state;
};

G_DEFINE_TYPE(GstWeaveDecode, gst_weave_decode, GST_TYPE_BASE_TRANSFORM)

GType gst_weave_decode_mode_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_WEAVE_DECODE_MODE_CLASSIFICATION,
       "Top-k classes of a <N> score tensor, or of each row of a <B,N> one", "classification"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstWeaveDecodeMode", values));
  return type;
}

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("tensor/x-raw"));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("tensor/x-raw"));

namespace {

DecodeState& st(GstBaseTransform* bt) {
  return *GST_WEAVE_DECODE(bt)->state;
}

GstStructure* result_structure(const char* mode, GstClockTime pts, const wv::DecodeResult& r) {
  GValue labels = G_VALUE_INIT, scores = G_VALUE_INIT, ids = G_VALUE_INIT;
  gst_value_array_init(&labels, r.classes.size());
  gst_value_array_init(&scores, r.classes.size());
  gst_value_array_init(&ids, r.classes.size());
  for (const auto& c : r.classes) {
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_STRING);
    g_value_set_string(&v, c.label.c_str());
    gst_value_array_append_and_take_value(&labels, &v);
    g_value_init(&v, G_TYPE_DOUBLE);
    g_value_set_double(&v, c.score);
    gst_value_array_append_and_take_value(&scores, &v);
    g_value_init(&v, G_TYPE_INT);
    g_value_set_int(&v, c.class_id);
    gst_value_array_append_and_take_value(&ids, &v);
  }
  gchar* name = g_strdup_printf("weave-%s", mode);
  GstStructure* s = gst_structure_new(name, "pts", G_TYPE_UINT64, static_cast<guint64>(pts), nullptr);
  g_free(name);
  gst_structure_take_value(s, "labels", &labels);
  gst_structure_take_value(s, "scores", &scores);
  gst_structure_take_value(s, "class-ids", &ids);
  return s;
}

}  // namespace

static gboolean gst_weave_decode_start(GstBaseTransform* bt) {
  DecodeState& s = st(bt);
  std::unique_lock lock(s.lock);
  wv::DecoderOptions opts;
  if (!s.labels_path.empty()) {
    auto labels = wv::load_labels(s.labels_path);
    if (!labels) {
      lock.unlock();
      GST_ELEMENT_ERROR(bt, RESOURCE, OPEN_READ, ("%s", labels.message().c_str()), (nullptr));
      return FALSE;
    }
    opts.labels = std::move(*labels);
  }
  s.num_labels = opts.labels.size();
  opts.top_k = s.top_k;
  opts.softmax = s.softmax;
  opts.threshold = s.threshold;
  auto decoder = wv::DecoderRegistry::global().make(
      weave_enum_nick(gst_weave_decode_mode_get_type(), s.mode, "classification"), opts);
  if (!decoder) {
    lock.unlock();
    GST_ELEMENT_ERROR(bt, LIBRARY, SETTINGS, ("%s", decoder.message().c_str()), (nullptr));
    return FALSE;
  }
  s.decoder = std::move(*decoder);
  if (auto st = s.json_out.open(s.json); !st) {
    s.decoder.reset();
    lock.unlock();
    GST_ELEMENT_ERROR(bt, RESOURCE, OPEN_WRITE, ("%s", st.message().c_str()), (nullptr));
    return FALSE;
  }
  s.results = 0;
  s.frames = 0;
  s.caps_ok = false;
  return TRUE;
}

static gboolean gst_weave_decode_stop(GstBaseTransform* bt) {
  DecodeState& s = st(bt);
  std::lock_guard lock(s.lock);
  s.decoder.reset();
  s.json_out.close();
  s.caps_ok = false;
  return TRUE;
}

static gboolean gst_weave_decode_set_caps(GstBaseTransform* bt, GstCaps* incaps, GstCaps* outcaps) {
  (void)outcaps;
  DecodeState& s = st(bt);
  std::unique_lock lock(s.lock);
  s.caps_ok = false;
  auto tensor = weave::caps::parse_fixed_caps(incaps);
  if (!tensor) {
    lock.unlock();
    GST_ELEMENT_ERROR(bt, STREAM, FORMAT, ("weavedecode: %s", tensor.message().c_str()),
                      ("caps: %" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  const weave::DType dtype = tensor->dtype;
  const weave::Dims dims = tensor->dims;
  if (!s.decoder) return FALSE;
  if (auto ok = s.decoder->accepts(dtype, dims); !ok) {
    lock.unlock();
    GST_ELEMENT_ERROR(bt, STREAM, FORMAT, ("weavedecode: %s", ok.message().c_str()),
                      ("caps: %" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  const auto classes = static_cast<std::size_t>(dims[dims.rank() - 1]);
  s.dtype = dtype;
  s.dims = dims;
  s.caps_ok = true;
  if (s.num_labels != 0 && s.num_labels != classes) {
    const std::string path = s.labels_path;
    const std::size_t num_labels = s.num_labels;
    lock.unlock();
    GST_ELEMENT_WARNING(bt, STREAM, FORMAT,
                        ("weavedecode: labels file '%s' has %zu labels but the tensor has %zu classes",
                         path.c_str(), num_labels, classes),
                        (nullptr));
  }
  GST_INFO_OBJECT(bt, "decoding %s tensors of shape %s", std::string(weave::dtype_name(dtype)).c_str(),
                  weave::shape_str(dims.span()).c_str());
  return TRUE;
}

static GstFlowReturn gst_weave_decode_transform_ip(GstBaseTransform* bt, GstBuffer* buf) {
  DecodeState& s = st(bt);
  std::unique_lock lock(s.lock);
  if (!s.caps_ok || !s.decoder) {
    lock.unlock();
    GST_ELEMENT_ERROR(bt, CORE, NEGOTIATION, ("weavedecode: no tensor caps before the first buffer"),
                      (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  GstMapInfo map;
  if (!gst_buffer_map(buf, &map, GST_MAP_READ)) {
    lock.unlock();
    GST_ELEMENT_ERROR(bt, RESOURCE, READ, ("weavedecode: cannot map the input buffer"), (nullptr));
    return GST_FLOW_ERROR;
  }
  const std::size_t need = static_cast<std::size_t>(s.dims.numel()) * weave::dtype_size(s.dtype);
  if (map.size < need) {
    gst_buffer_unmap(buf, &map);
    lock.unlock();
    GST_ELEMENT_ERROR(bt, STREAM, FORMAT,
                      ("weavedecode: buffer of %zu bytes is smaller than tensor %s (%zu bytes)", map.size,
                       weave::shape_str(s.dims.span()).c_str(), need),
                      (nullptr));
    return GST_FLOW_ERROR;
  }
  // Tensor memory from the pipeline is aligned; anything else is read through an aligned copy.
  std::vector<std::uint64_t> aligned;
  const void* data = map.data;
  if (reinterpret_cast<std::uintptr_t>(map.data) % alignof(std::uint64_t) != 0) {
    aligned.resize((need + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
    std::memcpy(aligned.data(), map.data, need);
    data = aligned.data();
  }
  auto result = s.decoder->decode(weave::ConstTensorView{data, s.dtype, s.dims});
  gst_buffer_unmap(buf, &map);
  if (!result) {
    lock.unlock();
    GST_ELEMENT_ERROR(bt, STREAM, DECODE, ("weavedecode: %s", result.message().c_str()), (nullptr));
    return GST_FLOW_ERROR;
  }

  const GstClockTime pts = GST_BUFFER_PTS(buf);
  if (s.json_out.active()) {
    const auto st = s.json_out.write(wv::to_json_line(
        GST_CLOCK_TIME_IS_VALID(pts) ? std::optional<std::uint64_t>(pts) : std::nullopt, *result));
    if (!st) {
      lock.unlock();
      GST_ELEMENT_ERROR(bt, RESOURCE, WRITE, ("weavedecode: %s", st.message().c_str()), (nullptr));
      return GST_FLOW_ERROR;
    }
  }
  s.results += result->classes.size();
  s.frames += 1;
  GstStructure* msg = result_structure(std::string(s.decoder->mode()).c_str(), pts, *result);
  GST_LOG_OBJECT(bt, "%" GST_PTR_FORMAT, msg);
  lock.unlock();
  gst_element_post_message(GST_ELEMENT(bt), gst_message_new_element(GST_OBJECT(bt), msg));
  return GST_FLOW_OK;
}

static void gst_weave_decode_set_property(GObject* object, guint prop_id, const GValue* value,
                                          GParamSpec* pspec) {
  DecodeState& s = st(GST_BASE_TRANSFORM(object));
  std::lock_guard lock(s.lock);
  switch (prop_id) {
    case PROP_MODE:
      s.mode = g_value_get_enum(value);
      break;
    case PROP_LABELS: {
      const char* v = g_value_get_string(value);
      s.labels_path = v != nullptr ? v : "";
      break;
    }
    case PROP_TOP_K:
      s.top_k = g_value_get_uint(value);
      break;
    case PROP_SOFTMAX:
      s.softmax = g_value_get_boolean(value);
      break;
    case PROP_THRESHOLD:
      s.threshold = g_value_get_double(value);
      break;
    case PROP_JSON: {
      const char* v = g_value_get_string(value);
      s.json = v != nullptr ? v : "";
      break;
    }
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_decode_get_property(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec) {
  DecodeState& s = st(GST_BASE_TRANSFORM(object));
  switch (prop_id) {
    case PROP_RESULTS:
      g_value_set_uint64(value, s.results.load());
      return;
    case PROP_FRAMES:
      g_value_set_uint64(value, s.frames.load());
      return;
    default:
      break;
  }
  std::lock_guard lock(s.lock);
  switch (prop_id) {
    case PROP_MODE:
      g_value_set_enum(value, s.mode);
      break;
    case PROP_LABELS:
      g_value_set_string(value, s.labels_path.empty() ? nullptr : s.labels_path.c_str());
      break;
    case PROP_TOP_K:
      g_value_set_uint(value, s.top_k);
      break;
    case PROP_SOFTMAX:
      g_value_set_boolean(value, s.softmax);
      break;
    case PROP_THRESHOLD:
      g_value_set_double(value, s.threshold);
      break;
    case PROP_JSON:
      g_value_set_string(value, s.json.empty() ? nullptr : s.json.c_str());
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_decode_finalize(GObject* object) {
  auto* self = GST_WEAVE_DECODE(object);
  self->state.destroy();
  G_OBJECT_CLASS(gst_weave_decode_parent_class)->finalize(object);
}

static void gst_weave_decode_init(GstWeaveDecode* self) {
  self->state.construct();
  // Buffers leave unchanged; transform_ip still sees each one.
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), TRUE);
}

static void gst_weave_decode_class_init(GstWeaveDecodeClass* klass) {
  auto* gobject_class = G_OBJECT_CLASS(klass);
  auto* element_class = GST_ELEMENT_CLASS(klass);
  auto* bt_class = GST_BASE_TRANSFORM_CLASS(klass);

  gobject_class->set_property = gst_weave_decode_set_property;
  gobject_class->get_property = gst_weave_decode_get_property;
  gobject_class->finalize = gst_weave_decode_finalize;

  // Settings are read when the element starts (READY -> PAUSED).
  const auto rw_ready =
      static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
  const auto ro = static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_property(
      gobject_class, PROP_MODE,
      g_param_spec_enum("mode", "Mode", "What the tensor holds and how to decode it",
                        gst_weave_decode_mode_get_type(), GST_WEAVE_DECODE_MODE_CLASSIFICATION, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_LABELS,
      g_param_spec_string("labels", "Labels",
                          "Path of a text file with one label per line (line i names class i); a missing "
                          "file is an error. Without it, labels are the class ids",
                          nullptr, rw_ready));
  g_object_class_install_property(gobject_class, PROP_TOP_K,
                                  g_param_spec_uint("top-k", "Top k", "Report the k best classes (0 = all)",
                                                    0, G_MAXINT, kDefaultTopK, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_SOFTMAX,
      g_param_spec_boolean("softmax", "Softmax",
                           "Apply softmax to the scores first (for models that output logits)", FALSE,
                           rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_THRESHOLD,
      g_param_spec_double("threshold", "Threshold",
                          "Drop classes scoring below this (after softmax if enabled); the default keeps all",
                          -G_MAXDOUBLE, G_MAXDOUBLE, kDefaultThreshold, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_JSON,
      g_param_spec_string(
          "json", "JSON output",
          "Write one JSON line per buffer to \"stdout\" or to this file (truncated at start); "
          "NULL = off",
          nullptr, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_RESULTS,
      g_param_spec_uint64("results", "Results", "Number of results (classes) reported since start", 0,
                          G_MAXUINT64, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_FRAMES,
      g_param_spec_uint64("frames", "Frames", "Number of buffers decoded since start", 0, G_MAXUINT64, 0,
                          ro));

  gst_element_class_set_static_metadata(element_class, "Weave tensor decoder", "Filter/Analyzer",
                                        "Decodes model output tensors into classification results, posted as "
                                        "bus messages and JSON lines",
                                        "Weave developers");
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);

  bt_class->start = GST_DEBUG_FUNCPTR(gst_weave_decode_start);
  bt_class->stop = GST_DEBUG_FUNCPTR(gst_weave_decode_stop);
  bt_class->set_caps = GST_DEBUG_FUNCPTR(gst_weave_decode_set_caps);
  bt_class->transform_ip = GST_DEBUG_FUNCPTR(gst_weave_decode_transform_ip);
  bt_class->transform_ip_on_passthrough = TRUE;

  gst_type_mark_as_plugin_api(gst_weave_decode_mode_get_type(), static_cast<GstPluginAPIFlags>(0));
  GST_DEBUG_CATEGORY_INIT(weave_decode_debug, "weavedecode", 0, "Weave tensor decoder");
}

GST_ELEMENT_REGISTER_DEFINE(weavedecode, "weavedecode", GST_RANK_NONE, GST_TYPE_WEAVE_DECODE);
