/**
 * SECTION:element-weavepublish
 * @title: weavepublish
 *
 * Sends one JSON message per frame -- the frame's regions as weavemeta's `json` writes them,
 * with the camera's id, the frame's number, the wall-clock time and #GstWeavePublish:tags in
 * front: `{"camera":"door-3","frame":12,"time":1795713467.125,"pts":480000000,"texts":[...]}`
 * -- to #GstWeavePublish:uri, and passes the frame on unchanged:
 *
 *  - `mqtt://[USER[:PASSWORD]@]HOST[:PORT]/TOPIC`: an MQTT broker (libmosquitto), QoS 1 by
 *    default (#GstWeavePublish:qos): a message counts as sent when the broker acknowledges it;
 *  - `kafka://HOST[:PORT][,HOST[:PORT]...]/TOPIC`: Kafka (librdkafka), an idempotent producer
 *    with acks=all, each message keyed by the camera, so one camera's results stay in order;
 *  - `file:///PATH`: JSON lines, flushed one by one.
 *
 * A broker that is away does not stall the pipeline: messages wait in a queue of
 * #GstWeavePublish:queue-size while the element reconnects (with a growing pause, up to 5 s),
 * and are sent in order once it is back; messages not acknowledged when a connection was lost
 * are sent again (at least once: a consumer drops repeats by camera and pts). When the queue is
 * full, #GstWeavePublish:when-full either drops the oldest message or blocks the stream.
 * Nothing goes silently: drops are counted (#GstWeavePublish:dropped), logged and posted on the
 * bus, as are connections lost and made -- an element message named `weavepublish` with fields
 * `event` ("connected", "disconnected", "dropped" or "undelivered"), `detail` and `count`. At
 * end of stream the element waits up to #GstWeavePublish:flush-timeout for the queue to empty
 * and warns of what is left.
 *
 * ## Example launch line
 * The OCR cascade's texts to an MQTT broker (pipelines/ocr.sh --publish does this):
 * |[
 * gst-launch-1.0 ... weavemeta mode=ctc ... ! weavepublish uri=mqtt://localhost:1883/weave/door-3
 * camera=door-3 \ ! weaveoverlay ! videoconvert ! autovideosink
 * ]|
 * Objects of a detector to Kafka, keyed by camera:
 * |[
 * gst-launch-1.0 ... weavemeta mode=yolo labels=coco.txt ! weavetrack \
 *     ! weavepublish uri=kafka://k1:9092,k2:9092/detections camera=gate ! fakesink
 * ]|
 */
#include "gst-plugin/gstweavepublish.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "caps/roi_meta.h"
#include "core/publish/message.h"
#include "core/publish/publish_uri.h"
#include "core/publish/publisher.h"
#include "core/stream/work_time.h"
#include "gst-plugin/elements.h"
#include "gst-plugin/instance_state.h"
#include "gst-plugin/work_properties.h"

GST_DEBUG_CATEGORY_STATIC(weave_publish_debug);
#define GST_CAT_DEFAULT weave_publish_debug

namespace wp = weave::publish;

namespace {

enum {
  PROP_0,
  PROP_URI,
  PROP_CAMERA,
  PROP_TAGS,
  PROP_QUEUE_SIZE,
  PROP_WHEN_FULL,
  PROP_FLUSH_TIMEOUT,
  PROP_QOS,
  PROP_CLIENT_ID,
  PROP_USERNAME,
  PROP_PASSWORD,
  PROP_TLS_CA_FILE,
  PROP_TLS_CERT_FILE,
  PROP_TLS_KEY_FILE,
  PROP_SENT,
  PROP_DROPPED,
  PROP_PENDING,
  PROP_CONNECTED,
  PROP_FRAMES,
  PROP_MEAN_MS,
};

constexpr guint kDefaultQueueSize = 1000;
constexpr guint kDefaultFlushTimeoutMs = 5000;

struct PublishState {
  std::mutex lock;  // guards the settings and `publisher` (not its own state)
  std::string uri, camera, tags, client_id, username, password, tls_ca, tls_cert, tls_key;
  wp::MessageHeader header;  // camera and tags from start(); frame and time per frame
  guint queue_size = kDefaultQueueSize;
  wp::WhenFull when_full = wp::WhenFull::drop_oldest;
  guint flush_timeout_ms = kDefaultFlushTimeoutMs;
  gint qos = 1;
  std::unique_ptr<wp::Publisher> publisher;
  weave::vision::RegionLines lines;
  bool flushed_at_eos = false;
  uint64_t undelivered = 0;  // left in the queue at the end of a stream or at stop
  weave::stream::WorkTime work;
};

}  // namespace

struct _GstWeavePublish {
  GstBaseTransform parent;
  weave::gst::InstanceState<PublishState> state;
};

G_DEFINE_TYPE(GstWeavePublish, gst_weave_publish, GST_TYPE_BASE_TRANSFORM)

GType gst_weave_publish_when_full_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(wp::WhenFull::drop_oldest), "Drop the oldest message (counted and reported)",
       "drop-oldest"},
      {static_cast<gint>(wp::WhenFull::block), "Block the stream until there is room", "block"},
      {0, nullptr, nullptr}};
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstWeavePublishWhenFull", values));
  return type;
}

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void post_event(GstElement* element, const char* event, const std::string& detail, uint64_t count) {
  GstStructure* s =
      gst_structure_new("weavepublish", "event", G_TYPE_STRING, event, "detail", G_TYPE_STRING,
                        detail.c_str(), "count", G_TYPE_UINT64, static_cast<guint64>(count), nullptr);
  gst_element_post_message(element, gst_message_new_element(GST_OBJECT(element), s));
}

static gboolean gst_weave_publish_start(GstBaseTransform* trans) {
  PublishState& s = *GST_WEAVE_PUBLISH(trans)->state;
  std::lock_guard lock(s.lock);
  if (s.uri.empty()) {
    GST_ELEMENT_ERROR(trans, RESOURCE, SETTINGS, ("weavepublish: no uri set"),
                      ("set uri=mqtt://HOST:PORT/TOPIC, kafka://HOST:PORT/TOPIC or file:///PATH"));
    return FALSE;
  }
  auto uri = wp::parse_publish_uri(s.uri);
  if (!uri) {
    GST_ELEMENT_ERROR(trans, RESOURCE, SETTINGS, ("weavepublish: %s", uri.error().message().c_str()),
                      (nullptr));
    return FALSE;
  }
  auto tags = wp::parse_tags(s.tags);
  if (!tags) {
    GST_ELEMENT_ERROR(trans, RESOURCE, SETTINGS, ("weavepublish: %s", tags.error().message().c_str()),
                      (nullptr));
    return FALSE;
  }
  if (s.camera.empty()) {
    gchar* name = gst_element_get_name(GST_ELEMENT(trans));
    s.camera = name;
    g_free(name);
  }
  s.header = wp::MessageHeader{s.camera, 0, 0, std::move(*tags)};
  wp::TransportOptions to;
  to.client_id = s.client_id.empty() ? "weave-" + s.camera : s.client_id;
  to.username = s.username;
  to.password = s.password;
  to.tls_ca_file = s.tls_ca;
  to.tls_cert_file = s.tls_cert;
  to.tls_key_file = s.tls_key;
  to.mqtt_qos = s.qos;
  auto transport = wp::make_transport(*uri, to);
  if (!transport) {
    GST_ELEMENT_ERROR(trans, RESOURCE, SETTINGS, ("weavepublish: %s", transport.error().message().c_str()),
                      (nullptr));
    return FALSE;
  }
  wp::PublisherOptions po;
  po.queue_size = s.queue_size;
  po.when_full = s.when_full;
  auto* element = GST_ELEMENT(trans);
  s.publisher =
      std::make_unique<wp::Publisher>(std::move(*transport), po, [element](const wp::PublisherEvent& e) {
        switch (e.kind) {
          case wp::PublisherEvent::Kind::connected:
            GST_INFO_OBJECT(element, "connected to %s", e.detail.c_str());
            post_event(element, "connected", e.detail, 0);
            break;
          case wp::PublisherEvent::Kind::disconnected:
            GST_WARNING_OBJECT(element, "not connected: %s (messages queue until it is back)",
                               e.detail.c_str());
            post_event(element, "disconnected", e.detail, 0);
            break;
          case wp::PublisherEvent::Kind::dropped:
            GST_WARNING_OBJECT(element, "queue full: %" G_GUINT64_FORMAT " messages dropped so far",
                               e.dropped_total);
            post_event(element, "dropped", "the queue was full", e.dropped_total);
            break;
        }
      });
  s.lines = weave::vision::RegionLines();
  s.flushed_at_eos = false;
  GST_DEBUG_OBJECT(trans, "publishing camera %s to %s", s.camera.c_str(), uri->text.c_str());
  return TRUE;
}

// Waits for the queue, up to the flush timeout; reports what is left. Called with s.lock held.
static void flush_queue(GstBaseTransform* trans, PublishState& s, std::chrono::milliseconds timeout) {
  if (!s.publisher) return;
  const std::size_t left = s.publisher->flush(timeout);
  if (left == 0) return;
  s.undelivered += left;
  GST_ELEMENT_WARNING(trans, RESOURCE, WRITE,
                      ("weavepublish: %zu messages not delivered to %s within %u ms", left,
                       s.publisher->describe().c_str(), s.flush_timeout_ms),
                      (nullptr));
  post_event(GST_ELEMENT(trans), "undelivered", s.publisher->describe(), left);
}

static gboolean gst_weave_publish_stop(GstBaseTransform* trans) {
  PublishState& s = *GST_WEAVE_PUBLISH(trans)->state;
  std::lock_guard lock(s.lock);
  // After an end of stream the queue was flushed already; a pipeline stopped mid-stream gets a
  // short wait, not the whole timeout, and a warning for what is left.
  if (!s.flushed_at_eos)
    flush_queue(trans, s, std::chrono::milliseconds(std::min<guint>(s.flush_timeout_ms, 1000)));
  s.publisher.reset();
  return TRUE;
}

static GstFlowReturn gst_weave_publish_transform_ip(GstBaseTransform* trans, GstBuffer* buffer) {
  PublishState& s = *GST_WEAVE_PUBLISH(trans)->state;
  const auto t0 = weave::stream::WorkTime::Clock::now();
  std::unique_lock lock(s.lock);
  if (!s.publisher) return GST_FLOW_OK;
  const auto regions = weave::caps::read_regions(buffer);
  std::optional<uint64_t> pts;
  if (GST_BUFFER_PTS_IS_VALID(buffer)) pts = GST_BUFFER_PTS(buffer);
  s.header.time = static_cast<double>(g_get_real_time()) / 1e6;
  std::string message = wp::frame_message(s.header, pts, regions, s.lines);
  ++s.header.frame;
  wp::Publisher* publisher = s.publisher.get();
  const std::string key = s.camera;
  lock.unlock();  // push may block (when-full=block): property reads go on meanwhile
  if (!publisher->push(std::move(message), key))
    GST_DEBUG_OBJECT(trans, "flushing: the frame's message was not queued");
  s.work.count_frame();
  s.work.add_since(t0);
  return GST_FLOW_OK;
}

static gboolean gst_weave_publish_sink_event(GstBaseTransform* trans, GstEvent* event) {
  PublishState& s = *GST_WEAVE_PUBLISH(trans)->state;
  switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_FLUSH_START:
      // A producer blocked on a full queue must let the flush through.
      if (s.publisher) s.publisher->interrupt();
      break;
    case GST_EVENT_FLUSH_STOP:
      if (s.publisher) s.publisher->resume();
      break;
    case GST_EVENT_EOS: {
      std::lock_guard lock(s.lock);
      flush_queue(trans, s, std::chrono::milliseconds(s.flush_timeout_ms));
      s.flushed_at_eos = true;
      break;
    }
    default:
      break;
  }
  return GST_BASE_TRANSFORM_CLASS(gst_weave_publish_parent_class)->sink_event(trans, event);
}

static GstStateChangeReturn gst_weave_publish_change_state(GstElement* element, GstStateChange transition) {
  PublishState& s = *GST_WEAVE_PUBLISH(element)->state;
  // The streaming thread may be blocked in push() (when-full=block): release it before the
  // base class waits for it.
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY && s.publisher) s.publisher->interrupt();
  return GST_ELEMENT_CLASS(gst_weave_publish_parent_class)->change_state(element, transition);
}

static void set_string(std::string& to, const GValue* value) {
  const char* v = g_value_get_string(value);
  to = v != nullptr ? v : "";
}

static void gst_weave_publish_set_property(GObject* object, guint prop_id, const GValue* value,
                                           GParamSpec* pspec) {
  PublishState& s = *GST_WEAVE_PUBLISH(object)->state;
  std::lock_guard lock(s.lock);
  switch (prop_id) {
    case PROP_URI:
      set_string(s.uri, value);
      break;
    case PROP_CAMERA:
      set_string(s.camera, value);
      break;
    case PROP_TAGS:
      set_string(s.tags, value);
      break;
    case PROP_QUEUE_SIZE:
      s.queue_size = g_value_get_uint(value);
      break;
    case PROP_WHEN_FULL:
      s.when_full = static_cast<wp::WhenFull>(g_value_get_enum(value));
      break;
    case PROP_FLUSH_TIMEOUT:
      s.flush_timeout_ms = g_value_get_uint(value);
      break;
    case PROP_QOS:
      s.qos = g_value_get_int(value);
      break;
    case PROP_CLIENT_ID:
      set_string(s.client_id, value);
      break;
    case PROP_USERNAME:
      set_string(s.username, value);
      break;
    case PROP_PASSWORD:
      set_string(s.password, value);
      break;
    case PROP_TLS_CA_FILE:
      set_string(s.tls_ca, value);
      break;
    case PROP_TLS_CERT_FILE:
      set_string(s.tls_cert, value);
      break;
    case PROP_TLS_KEY_FILE:
      set_string(s.tls_key, value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_publish_get_property(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec) {
  PublishState& s = *GST_WEAVE_PUBLISH(object)->state;
  if (weave::gst::get_work_property(s.work, prop_id, PROP_FRAMES, PROP_MEAN_MS, value)) return;
  std::lock_guard lock(s.lock);
  const wp::PublisherStats st = s.publisher ? s.publisher->stats() : wp::PublisherStats{};
  auto str = [&](const std::string& v) { g_value_set_string(value, v.empty() ? nullptr : v.c_str()); };
  switch (prop_id) {
    case PROP_URI:
      str(s.uri);
      break;
    case PROP_CAMERA:
      str(s.camera);
      break;
    case PROP_TAGS:
      str(s.tags);
      break;
    case PROP_QUEUE_SIZE:
      g_value_set_uint(value, s.queue_size);
      break;
    case PROP_WHEN_FULL:
      g_value_set_enum(value, static_cast<gint>(s.when_full));
      break;
    case PROP_FLUSH_TIMEOUT:
      g_value_set_uint(value, s.flush_timeout_ms);
      break;
    case PROP_QOS:
      g_value_set_int(value, s.qos);
      break;
    case PROP_CLIENT_ID:
      str(s.client_id);
      break;
    case PROP_USERNAME:
      str(s.username);
      break;
    case PROP_PASSWORD:
      g_value_set_string(value, s.password.empty() ? nullptr : "********");  // never read back
      break;
    case PROP_TLS_CA_FILE:
      str(s.tls_ca);
      break;
    case PROP_TLS_CERT_FILE:
      str(s.tls_cert);
      break;
    case PROP_TLS_KEY_FILE:
      str(s.tls_key);
      break;
    case PROP_SENT:
      g_value_set_uint64(value, st.delivered);
      break;
    case PROP_DROPPED:
      g_value_set_uint64(value, st.dropped + s.undelivered);
      break;
    case PROP_PENDING:
      g_value_set_uint(value, static_cast<guint>(st.pending));
      break;
    case PROP_CONNECTED:
      g_value_set_boolean(value, st.connected);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_publish_finalize(GObject* object) {
  GST_WEAVE_PUBLISH(object)->state.destroy();
  G_OBJECT_CLASS(gst_weave_publish_parent_class)->finalize(object);
}

static void gst_weave_publish_init(GstWeavePublish* self) {
  self->state.construct();
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), TRUE);
}

static void gst_weave_publish_class_init(GstWeavePublishClass* klass) {
  auto* gobject_class = G_OBJECT_CLASS(klass);
  auto* element_class = GST_ELEMENT_CLASS(klass);
  auto* trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  gobject_class->set_property = gst_weave_publish_set_property;
  gobject_class->get_property = gst_weave_publish_get_property;
  gobject_class->finalize = gst_weave_publish_finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR(gst_weave_publish_change_state);

  const auto rw =
      static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
  const auto ro = static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_property(
      gobject_class, PROP_URI,
      g_param_spec_string("uri", "URI",
                          "Where the messages go: mqtt://[USER[:PASSWORD]@]HOST[:PORT]/TOPIC, "
                          "kafka://HOST[:PORT][,HOST[:PORT]...]/TOPIC or file:///PATH",
                          nullptr, rw));
  g_object_class_install_property(
      gobject_class, PROP_CAMERA,
      g_param_spec_string(
          "camera", "Camera",
          "The stream's id in every message (\"camera\") and the Kafka message key; NULL = the "
          "element's name",
          nullptr, rw));
  g_object_class_install_property(
      gobject_class, PROP_TAGS,
      g_param_spec_string("tags", "Tags",
                          "More string fields for every message, as key=value,key=value (e.g. "
                          "site=north,worker=w1); keys are letters, digits, _ and -",
                          nullptr, rw));
  g_object_class_install_property(
      gobject_class, PROP_QUEUE_SIZE,
      g_param_spec_uint("queue-size", "Queue size",
                        "Messages kept while the destination is away or slow, those sent but not yet "
                        "acknowledged included",
                        1, 10000000, kDefaultQueueSize, rw));
  g_object_class_install_property(
      gobject_class, PROP_WHEN_FULL,
      g_param_spec_enum("when-full", "When full", "What a full queue does to the next frame's message",
                        GST_TYPE_WEAVE_PUBLISH_WHEN_FULL, static_cast<gint>(wp::WhenFull::drop_oldest), rw));
  g_object_class_install_property(
      gobject_class, PROP_FLUSH_TIMEOUT,
      g_param_spec_uint("flush-timeout", "Flush timeout",
                        "At end of stream, how long to wait for the queue to empty, in milliseconds; what is "
                        "left is reported (a warning and an \"undelivered\" bus message)",
                        0, G_MAXUINT, kDefaultFlushTimeoutMs, rw));
  g_object_class_install_property(
      gobject_class, PROP_QOS,
      g_param_spec_int("qos", "MQTT QoS",
                       "MQTT quality of service: 1 = at least once (acknowledged), 2 = exactly once, 0 = "
                       "fire and forget (nothing to resend)",
                       0, 2, 1, rw));
  g_object_class_install_property(
      gobject_class, PROP_CLIENT_ID,
      g_param_spec_string("client-id", "Client id",
                          "MQTT client id and Kafka client.id; NULL = \"weave-\" and the camera", nullptr,
                          rw));
  g_object_class_install_property(
      gobject_class, PROP_USERNAME,
      g_param_spec_string("username", "User name",
                          "MQTT user name, or Kafka SASL/PLAIN user name; overrides the URI's", nullptr, rw));
  g_object_class_install_property(
      gobject_class, PROP_PASSWORD,
      g_param_spec_string("password", "Password", "Password for username (reads back as ********)", nullptr,
                          rw));
  g_object_class_install_property(
      gobject_class, PROP_TLS_CA_FILE,
      g_param_spec_string(
          "tls-ca-file", "TLS CA file",
          "PEM file of the certificate authority to verify the broker with; set = TLS (Kafka: SSL)", nullptr,
          rw));
  g_object_class_install_property(
      gobject_class, PROP_TLS_CERT_FILE,
      g_param_spec_string("tls-cert-file", "TLS certificate file",
                          "PEM certificate of this client, for brokers that require one", nullptr, rw));
  g_object_class_install_property(
      gobject_class, PROP_TLS_KEY_FILE,
      g_param_spec_string("tls-key-file", "TLS key file", "PEM private key of tls-cert-file", nullptr, rw));
  g_object_class_install_property(
      gobject_class, PROP_SENT,
      g_param_spec_uint64("sent", "Sent", "Messages acknowledged by the destination since start", 0,
                          G_MAXUINT64, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_DROPPED,
      g_param_spec_uint64("dropped", "Dropped",
                          "Messages dropped from a full queue, or left undelivered at end of stream or stop",
                          0, G_MAXUINT64, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_PENDING,
      g_param_spec_uint("pending", "Pending", "Messages queued now, not yet acknowledged", 0, G_MAXUINT, 0,
                        ro));
  g_object_class_install_property(
      gobject_class, PROP_CONNECTED,
      g_param_spec_boolean("connected", "Connected", "Whether the destination is reachable now", FALSE, ro));
  weave::gst::install_work_properties(
      gobject_class, PROP_FRAMES, PROP_MEAN_MS, "Frames published since start",
      "Mean time per frame spent building and queueing its message, in milliseconds");

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "Weave result publisher", "Filter/Analyzer/Video",
      "Sends each frame's regions as a JSON message to MQTT, Kafka or a file", "Weave developers");
  trans_class->start = GST_DEBUG_FUNCPTR(gst_weave_publish_start);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_weave_publish_stop);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR(gst_weave_publish_transform_ip);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_weave_publish_sink_event);
  gst_type_mark_as_plugin_api(GST_TYPE_WEAVE_PUBLISH_WHEN_FULL, static_cast<GstPluginAPIFlags>(0));
  GST_DEBUG_CATEGORY_INIT(weave_publish_debug, "weavepublish", 0, "Weave result publisher");
}

GST_ELEMENT_REGISTER_DEFINE(weavepublish, "weavepublish", GST_RANK_NONE, GST_TYPE_WEAVE_PUBLISH);
