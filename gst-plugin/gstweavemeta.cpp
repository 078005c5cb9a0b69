/**
 * SECTION:element-weavemeta
 * @title: weavemeta
 *
 * Puts a model's results onto the video frames they belong to, as
 * GstVideoRegionOfInterestMeta with params structures (caps/roi_meta.h lists them). A
 * GstAggregator with two always sink pads: `video` takes the frames, `tensor` the model's output
 * for them (a weaveinfer src pad); `src` gives the frames with their results, one for one, in
 * order. Frames and tensors meet by timestamp:
 *
 *  - detection modes (`db` text boxes, `yolo`, `yolov8`, `ssd` boxes with NMS) add a region per
 *    box found, mapped to frame pixels through the geometry weaveconvert put on the tensor;
 *  - per-region modes (`classification`, `angle`, `ctc`) read a batch of crops (weaveconvert
 *    mode=rois) and attach row i to the region crop i was cut from (the ROI ids travel with the
 *    tensor); a frame cropped into several batches waits for all of them;
 *  - a frame without a tensor -- a GAP in its place (no region to crop), or the tensor stream
 *    ended -- goes out unchanged; a tensor whose frame already went is dropped.
 *
 * With `json` set, each frame gives one JSON line with its regions:
 * `{"pts":0,"texts":[{"text":"Invoice","score":0.98,"box":[[x,y],[x,y],[x,y],[x,y]]}]}` (an
 * empty list for a frame without text; other regions under "objects").
 *
 * ## Example launch line
 * Text boxes of PP-OCRv4's detector on the frames (the first step of pipelines/ocr.sh):
 * |[
 * gst-launch-1.0 filesrc location=in.mp4 ! decodebin ! videoconvert ! video/x-raw,format=RGB ! tee name=v \
 *     v. ! queue ! boxes.video \
 *     v. ! queue ! weaveconvert max-side=960 multiple=32 mean=0.485,0.456,0.406 std=0.229,0.224,0.225 \
 *        ! weaveinfer model=ch_PP-OCRv4_det_infer.onnx ! boxes.tensor \
 *     weavemeta name=boxes mode=db json=boxes.jsonl ! weaveoverlay ! videoconvert ! autovideosink
 * ]|
 */
#include "gst-plugin/gstweavemeta.h"

#include <gst/video/video.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "caps/roi_meta.h"
#include "caps/tensor_caps.h"
#include "caps/tensor_origin.h"
#include "core/stream/work_time.h"
#include "core/track/track_results.h"
#include "core/vision/decoder.h"
#include "core/vision/json.h"
#include "core/vision/labels.h"
#include "gst-plugin/elements.h"
#include "gst-plugin/instance_state.h"

GST_DEBUG_CATEGORY_STATIC(weave_meta_debug);
#define GST_CAT_DEFAULT weave_meta_debug

namespace wv = weave::vision;

namespace {

enum {
  PROP_0,
  PROP_MODE,
  PROP_LABELS,
  PROP_PARAM_NAME,
  PROP_ROI_TYPE,
  PROP_SOFTMAX,
  PROP_PIXEL_THRESHOLD,
  PROP_BOX_THRESHOLD,
  PROP_UNCLIP_RATIO,
  PROP_SCORE_MODE,
  PROP_MIN_SIZE,
  PROP_MAX_CANDIDATES,
  PROP_SCORE_THRESHOLD,
  PROP_IOU_THRESHOLD,
  PROP_MAX_DETECTIONS,
  PROP_CLASS_AGNOSTIC,
  PROP_ANGLE_THRESHOLD,
  PROP_JSON,
  PROP_TRACK_RESULTS,
  PROP_MERGE,
  PROP_LINE_GAP,
  PROP_FRAMES,
  PROP_REGIONS,
  PROP_RESULTS,
  PROP_DROPPED,
  PROP_MEAN_MS,
  PROP_DECODE_MS,
};

constexpr GstWeaveMetaMode kDefaultMode = GST_WEAVE_META_MODE_DB;

struct MetaState {
  std::mutex lock;  // guards the settings; the rest belongs to the aggregator's thread
  // Settings (read at start)
  int mode = kDefaultMode;
  std::string labels_path;
  std::string param_name = "classification";
  std::string roi_type;
  wv::DecoderOptions options;
  std::string json;
  int track_results = GST_WEAVE_META_TRACK_RESULTS_VOTE;
  int merge = GST_WEAVE_META_MERGE_NONE;
  wv::LineMergeOptions line_options;

  // Per run
  std::unique_ptr<wv::Decoder> decoder;
  wv::JsonLineWriter json_out;
  wv::RegionLines json_lines;           // the arrays each JSON line carries (core/vision/json.h)
  weave::track::TrackResults history;   // each track's reads so far (per-region modes)
  weave::stream::WorkTime decode_work;  // the decoder's share of the work, for decode-ms
  GstVideoInfo video_info{};
  bool video_ok = false;
  weave::caps::CapsTensor tensor;
  bool tensor_ok = false;
  // Results gathered for the frame at the head of the video pad.
  std::vector<wv::Region> found;
  std::vector<std::pair<int, wv::RowResult>> rows;
  int batches_seen = 0;
  int rows_seen = 0;     // rows of batches without ROI ids (attached to the frame's regions in order)
  bool skipped = false;  // a detection mode got a gap for the frame: the detector did not run

  GstAggregatorPad* video = nullptr;  // owned by the element
  GstAggregatorPad* tensors = nullptr;

  weave::stream::WorkTime work;
  std::atomic<guint64> regions{0};
  std::atomic<guint64> results{0};
  std::atomic<guint64> dropped{0};
};

}  // namespace

struct _GstWeaveMeta {
  GstAggregator parent;
  weave::gst::InstanceState<MetaState> state;
};

G_DEFINE_TYPE(GstWeaveMeta, gst_weave_meta, GST_TYPE_AGGREGATOR)

static GstStaticPadTemplate video_template =
    GST_STATIC_PAD_TEMPLATE("video", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw"));
static GstStaticPadTemplate tensor_template =
    GST_STATIC_PAD_TEMPLATE("tensor", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("tensor/x-raw"));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw"));

namespace {

MetaState& st(GstAggregator* agg) {
  return *GST_WEAVE_META(agg)->state;
}

void clear_pending(MetaState& s) {
  s.found.clear();
  s.rows.clear();
  s.batches_seen = 0;
  s.rows_seen = 0;
  s.skipped = false;
}

std::optional<uint64_t> pts_of(GstBuffer* b) {
  if (!GST_BUFFER_PTS_IS_VALID(b)) return std::nullopt;
  return GST_BUFFER_PTS(b);
}

}  // namespace

static gboolean gst_weave_meta_start(GstAggregator* agg) {
  MetaState& s = st(agg);
  std::unique_lock lock(s.lock);
  wv::DecoderOptions opts = s.options;
  const char* mode = weave_enum_nick(GST_TYPE_WEAVE_META_MODE, s.mode, "db");
  const bool keys = s.mode == GST_WEAVE_META_MODE_CTC;
  if (!s.labels_path.empty()) {
    // A keys file keeps its lines as they are (a key may be a space).
    auto labels = wv::load_labels(s.labels_path, !keys);
    if (!labels) {
      lock.unlock();
      GST_ELEMENT_ERROR(agg, RESOURCE, OPEN_READ, ("%s", labels.message().c_str()), (nullptr));
      return FALSE;
    }
    opts.labels = std::move(*labels);
  } else if (keys) {
    lock.unlock();
    GST_ELEMENT_ERROR(agg, RESOURCE, NOT_FOUND, ("weavemeta mode=ctc needs a keys file (property 'labels')"),
                      (nullptr));
    return FALSE;
  }
  auto decoder = wv::DecoderRegistry::global().make(mode, opts);
  if (!decoder) {
    lock.unlock();
    GST_ELEMENT_ERROR(agg, LIBRARY, SETTINGS, ("%s", decoder.message().c_str()), (nullptr));
    return FALSE;
  }
  if (auto st = s.json_out.open(s.json); !st) {
    lock.unlock();
    GST_ELEMENT_ERROR(agg, RESOURCE, OPEN_WRITE, ("%s", st.message().c_str()), (nullptr));
    return FALSE;
  }
  s.decoder = std::move(*decoder);
  wv::RegionKeys json_keys = wv::keys_for(s.decoder->result_regions(), s.roi_type);
  if (s.merge == GST_WEAVE_META_MERGE_LINE) json_keys.lines = s.line_options;
  s.json_lines = wv::RegionLines(json_keys);
  s.history = weave::track::TrackResults(static_cast<weave::track::ResultHistory>(s.track_results));
  s.video_ok = false;
  s.tensor_ok = false;
  clear_pending(s);
  s.work.reset();
  s.decode_work.reset();
  s.regions = 0;
  s.results = 0;
  s.dropped = 0;
  return TRUE;
}

static gboolean gst_weave_meta_stop(GstAggregator* agg) {
  MetaState& s = st(agg);
  std::lock_guard lock(s.lock);
  s.decoder.reset();
  s.json_out.close();
  clear_pending(s);
  return TRUE;
}

static GstFlowReturn gst_weave_meta_flush(GstAggregator* agg) {
  clear_pending(st(agg));
  st(agg).history.clear();  // tracks do not outlive a flush (weavetrack forgets them too)
  return GST_FLOW_OK;
}

// Tensor caps: the mode checks dtype and shape once, so that a keys file of the wrong size or a
// tensor of the wrong kind stops the stream before its first frame, with both sides named.
static bool tensor_caps(GstAggregator* agg, MetaState& s, GstCaps* caps) {
  auto t = weave::caps::parse_fixed_caps(caps);
  if (!t) {
    GST_ELEMENT_ERROR(agg, STREAM, FORMAT, ("weavemeta: pad tensor: %s", t.message().c_str()), (nullptr));
    return false;
  }
  if (auto ok = s.decoder->accepts(t->dtype, t->dims); !ok) {
    const std::string where = s.labels_path.empty() ? "" : " (labels file '" + s.labels_path + "')";
    GST_ELEMENT_ERROR(agg, STREAM, FORMAT, ("weavemeta: %s%s", ok.message().c_str(), where.c_str()),
                      ("caps: %" GST_PTR_FORMAT, caps));
    return false;
  }
  s.tensor = *t;
  s.tensor_ok = true;
  GST_DEBUG_OBJECT(agg, "tensor caps %" GST_PTR_FORMAT, caps);
  return true;
}

static gboolean gst_weave_meta_sink_event(GstAggregator* agg, GstAggregatorPad* pad, GstEvent* event) {
  MetaState& s = st(agg);
  if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
    GstCaps* caps = nullptr;
    gst_event_parse_caps(event, &caps);
    if (pad == s.tensors) {
      const bool ok = tensor_caps(agg, s, caps);
      gst_event_unref(event);
      return ok;
    }
    if (!gst_video_info_from_caps(&s.video_info, caps)) {
      GST_ELEMENT_ERROR(agg, STREAM, FORMAT, ("weavemeta: pad video: cannot parse caps"),
                        ("caps: %" GST_PTR_FORMAT, caps));
      gst_event_unref(event);
      return FALSE;
    }
    s.video_ok = true;
    gst_pad_mark_reconfigure(GST_AGGREGATOR_SRC_PAD(agg));
  } else if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT && pad == s.video) {
    // Frames go out with their own timestamps: the output segment is the video's.
    const GstSegment* segment = nullptr;
    gst_event_parse_segment(event, &segment);
    gst_aggregator_update_segment(agg, segment);
  }
  return GST_AGGREGATOR_CLASS(gst_weave_meta_parent_class)->sink_event(agg, pad, event);
}

static GstFlowReturn gst_weave_meta_update_src_caps(GstAggregator* agg, GstCaps* caps, GstCaps** ret) {
  GstCaps* video = gst_pad_get_current_caps(GST_PAD(st(agg).video));
  if (video == nullptr) return GST_AGGREGATOR_FLOW_NEED_DATA;
  *ret = gst_caps_intersect(caps, video);
  gst_caps_unref(video);
  return GST_FLOW_OK;
}

// Decodes one tensor for the frame at the head of the video pad and keeps the results until the
// frame goes. Returns false (element error posted) when decoding fails.
static bool take_tensor(GstAggregator* agg, MetaState& s, GstBuffer* tensor, GstBuffer* frame) {
  const auto origin = weave::caps::tensor_origin(tensor);
  ++s.batches_seen;
  if (!s.tensor_ok) {
    GST_ELEMENT_ERROR(agg, CORE, NEGOTIATION, ("weavemeta: a tensor came before its caps"), (nullptr));
    return false;
  }
  GstMapInfo map;
  if (!gst_buffer_map(tensor, &map, GST_MAP_READ)) {
    GST_ELEMENT_ERROR(agg, RESOURCE, READ, ("weavemeta: cannot map a tensor buffer"), (nullptr));
    return false;
  }
  const std::size_t need = s.tensor.bytes();
  weave::Expected<wv::DecodeResult> result =
      weave::make_error("weavemeta: tensor buffer of ", map.size, " bytes, its caps need ", need);
  std::vector<std::uint64_t> aligned;
  if (map.size >= need) {
    const void* data = map.data;
    if (reinterpret_cast<std::uintptr_t>(map.data) % alignof(std::uint64_t) != 0) {
      aligned.resize((need + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
      std::memcpy(aligned.data(), map.data, need);
      data = aligned.data();
    }
    wv::DecodeContext ctx;
    ctx.frame_width = s.video_ok ? GST_VIDEO_INFO_WIDTH(&s.video_info) : 0;
    ctx.frame_height = s.video_ok ? GST_VIDEO_INFO_HEIGHT(&s.video_info) : 0;
    if (origin) {
      ctx.input_width = origin->input_width;
      ctx.input_height = origin->input_height;
      ctx.geometry = origin->geometry;
    }
    const auto t0 = weave::stream::WorkTime::Clock::now();
    result = s.decoder->decode(weave::ConstTensorView{data, s.tensor.dtype, s.tensor.dims}, ctx);
    s.decode_work.add_since(t0);
  }
  gst_buffer_unmap(tensor, &map);
  if (!result) {
    GST_ELEMENT_ERROR(agg, STREAM, DECODE, ("weavemeta: %s", result.message().c_str()), (nullptr));
    return false;
  }
  for (wv::Region& r : result->regions) s.found.push_back(std::move(r));
  if (s.decoder->per_row()) {
    // Row i belongs to the region crop i was cut from; without ids, to the frame's regions in order.
    std::vector<int> ids;
    if (origin && !origin->roi_ids.empty()) {
      ids = origin->roi_ids;
    } else if (origin && origin->batches > 1) {
      // Several batches for the frame and no ids: the batches need not follow region order
      // (weaveconvert width-tolerance batches by width), so nothing can be attached safely.
      GST_WARNING_OBJECT(agg, "batch %d of %d of a frame without ROI ids: its %zu rows are dropped",
                         origin->batch, origin->batches, result->rows.size());
    } else {
      for (const wv::Region& r : weave::caps::read_regions(frame, s.roi_type)) ids.push_back(r.id);
      ids.erase(ids.begin(),
                ids.begin() + std::min<std::size_t>(ids.size(), static_cast<std::size_t>(s.rows_seen)));
    }
    const std::size_t n = std::min(ids.size(), result->rows.size());
    if (ids.size() != result->rows.size())
      GST_WARNING_OBJECT(agg, "a tensor of %zu rows for %zu regions: %zu attached", result->rows.size(),
                         ids.size(), n);
    for (std::size_t i = 0; i < n; ++i) s.rows.emplace_back(ids[i], std::move(result->rows[i]));
    s.rows_seen += static_cast<int>(result->rows.size());
  }
  return true;
}

// Whether every tensor of the frame has come: crops of a frame may come in several batches.
static bool frame_complete(MetaState& s, GstBuffer* last_tensor) {
  const auto origin = last_tensor != nullptr ? weave::caps::tensor_origin(last_tensor) : std::nullopt;
  return !origin || s.batches_seen >= origin->batches;
}

// Sends the frame at the head of the video pad with the results gathered for it.
static GstFlowReturn finish_frame(GstAggregator* agg, MetaState& s) {
  GstBuffer* frame = gst_aggregator_pad_pop_buffer(s.video);
  if (frame == nullptr) return GST_FLOW_OK;
  const auto t0 = weave::stream::WorkTime::Clock::now();
  frame = gst_buffer_make_writable(frame);
  for (const wv::Region& r : s.found) weave::caps::add_region(frame, r);
  if (s.skipped) weave::caps::mark_skipped(frame);
  if (s.history.mode() != weave::track::ResultHistory::frame && s.decoder->per_row()) {
    // Reads of tracked regions become their track's result (core/track/track_results.h).
    std::unordered_map<int, std::uint64_t> track_of;
    for (const wv::Region& r : weave::caps::read_regions(frame, s.roi_type))
      if (r.track) track_of[r.id] = r.track->id;
    s.history.apply(s.rows, std::move(track_of));
  }
  for (const auto& [id, row] : s.rows)
    if (!weave::caps::attach_row(frame, id, row, s.param_name))
      GST_WARNING_OBJECT(agg, "the frame has no region %d any more: its result is dropped", id);
  s.regions += s.found.size();
  s.results += s.rows.size();
  s.work.count_frame();
  s.decode_work.count_frame();
  clear_pending(s);
  if (s.json_out.active()) {
    const auto regions = weave::caps::read_regions(frame);
    if (auto w = s.json_out.write(s.json_lines.line(pts_of(frame), regions)); !w) {
      gst_buffer_unref(frame);
      GST_ELEMENT_ERROR(agg, RESOURCE, WRITE, ("weavemeta: %s", w.message().c_str()), (nullptr));
      return GST_FLOW_ERROR;
    }
  }
  s.work.add_since(t0);
  return gst_aggregator_finish_buffer(agg, frame);
}

static GstFlowReturn gst_weave_meta_aggregate(GstAggregator* agg, gboolean timeout) {
  MetaState& s = st(agg);
  GstBuffer* frame = gst_aggregator_pad_peek_buffer(s.video);
  if (frame == nullptr) {
    if (!gst_aggregator_pad_is_eos(s.video)) return GST_FLOW_OK;
    // No more frames: tensors left have nothing to go onto.
    while (GstBuffer* t = gst_aggregator_pad_pop_buffer(s.tensors)) {
      ++s.dropped;
      gst_buffer_unref(t);
    }
    return GST_FLOW_EOS;
  }
  const auto frame_pts = pts_of(frame);
  GstFlowReturn ret = GST_FLOW_OK;
  for (;;) {
    GstBuffer* tensor = gst_aggregator_pad_peek_buffer(s.tensors);
    if (tensor == nullptr) {
      // The tensor stream ended, or (live) the frame's time is up: it goes as it is.
      if (gst_aggregator_pad_is_eos(s.tensors) || timeout) ret = finish_frame(agg, s);
      break;
    }
    const auto tensor_pts = pts_of(tensor);
    if (frame_pts && tensor_pts && *tensor_pts < *frame_pts) {
      GST_DEBUG_OBJECT(agg, "tensor at %" GST_TIME_FORMAT " has no frame any more: dropped",
                       GST_TIME_ARGS(*tensor_pts));
      ++s.dropped;
      gst_buffer_unref(tensor);
      gst_aggregator_pad_drop_buffer(s.tensors);
      continue;
    }
    if (frame_pts && tensor_pts && *tensor_pts > *frame_pts) {
      // Nothing (more) came for this frame, e.g. a leaky weaveinfer dropped its tensor.
      gst_buffer_unref(tensor);
      ret = finish_frame(agg, s);
      break;
    }
    // The frame's tensor, or a gap in its place.
    const bool gap = GST_BUFFER_FLAG_IS_SET(tensor, GST_BUFFER_FLAG_GAP) && gst_buffer_get_size(tensor) == 0;
    const auto t0 = weave::stream::WorkTime::Clock::now();
    const bool ok = gap || take_tensor(agg, s, tensor, frame);
    // A detector's gap: it did not run on this frame (weaveinfer inference-interval), so the
    // frame's regions are unknown, not absent. (A per-region mode's gap: no region to crop.)
    if (gap && !s.decoder->per_row()) s.skipped = true;
    s.work.add_since(t0);
    const bool complete = gap || frame_complete(s, tensor);
    gst_buffer_unref(tensor);
    gst_aggregator_pad_drop_buffer(s.tensors);
    if (!ok) {
      ret = GST_FLOW_ERROR;
      break;
    }
    if (complete) {
      ret = finish_frame(agg, s);
      break;
    }
  }
  gst_buffer_unref(frame);
  return ret;
}

static void gst_weave_meta_set_property(GObject* object, guint prop_id, const GValue* value,
                                        GParamSpec* pspec) {
  MetaState& s = *GST_WEAVE_META(object)->state;
  std::lock_guard lock(s.lock);
  auto set_string = [&](std::string& out) {
    const char* v = g_value_get_string(value);
    out = v != nullptr ? v : "";
  };
  switch (prop_id) {
    case PROP_MODE:
      s.mode = g_value_get_enum(value);
      break;
    case PROP_LABELS:
      set_string(s.labels_path);
      break;
    case PROP_PARAM_NAME: {
      const char* v = g_value_get_string(value);
      // A params structure name: starts with a letter, no spaces.
      if (v == nullptr || !g_ascii_isalpha(v[0]) || std::strpbrk(v, " \t,;=") != nullptr) {
        g_warning("weavemeta: param-name '%s' is not a structure name; keeping '%s'", v != nullptr ? v : "",
                  s.param_name.c_str());
        break;
      }
      s.param_name = v;
      break;
    }
    case PROP_ROI_TYPE:
      set_string(s.roi_type);
      break;
    case PROP_SOFTMAX:
      s.options.softmax = g_value_get_boolean(value);
      break;
    case PROP_PIXEL_THRESHOLD:
      s.options.text.threshold = static_cast<float>(g_value_get_double(value));
      break;
    case PROP_BOX_THRESHOLD:
      s.options.text.box_threshold = static_cast<float>(g_value_get_double(value));
      break;
    case PROP_UNCLIP_RATIO:
      s.options.text.unclip_ratio = static_cast<float>(g_value_get_double(value));
      break;
    case PROP_SCORE_MODE:
      s.options.text.score_mode = g_value_get_enum(value) == GST_WEAVE_META_SCORE_MODE_SLOW
                                      ? wv::TextDetectionOptions::ScoreMode::slow
                                      : wv::TextDetectionOptions::ScoreMode::fast;
      break;
    case PROP_MIN_SIZE:
      s.options.text.min_size = g_value_get_int(value);
      break;
    case PROP_MAX_CANDIDATES:
      s.options.text.max_candidates = g_value_get_int(value);
      break;
    case PROP_MERGE:
      s.merge = g_value_get_enum(value);
      break;
    case PROP_LINE_GAP:
      s.line_options.max_gap = static_cast<float>(g_value_get_double(value));
      break;
    case PROP_SCORE_THRESHOLD:
      s.options.boxes.score_threshold = static_cast<float>(g_value_get_double(value));
      s.options.threshold = g_value_get_double(value);
      break;
    case PROP_IOU_THRESHOLD:
      s.options.boxes.iou_threshold = static_cast<float>(g_value_get_double(value));
      break;
    case PROP_MAX_DETECTIONS:
      s.options.boxes.max_detections = g_value_get_int(value);
      break;
    case PROP_CLASS_AGNOSTIC:
      s.options.boxes.class_agnostic = g_value_get_boolean(value);
      break;
    case PROP_ANGLE_THRESHOLD:
      s.options.angle_threshold = static_cast<float>(g_value_get_double(value));
      break;
    case PROP_JSON:
      set_string(s.json);
      break;
    case PROP_TRACK_RESULTS:
      s.track_results = g_value_get_enum(value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_meta_get_property(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec) {
  MetaState& s = *GST_WEAVE_META(object)->state;
  switch (prop_id) {
    case PROP_FRAMES:
      g_value_set_uint64(value, s.work.frames());
      return;
    case PROP_REGIONS:
      g_value_set_uint64(value, s.regions.load());
      return;
    case PROP_RESULTS:
      g_value_set_uint64(value, s.results.load());
      return;
    case PROP_DROPPED:
      g_value_set_uint64(value, s.dropped.load());
      return;
    case PROP_MEAN_MS:
      g_value_set_double(value, s.work.mean_ms());
      return;
    case PROP_DECODE_MS:
      g_value_set_double(value, s.decode_work.mean_ms());
      return;
    default:
      break;
  }
  std::lock_guard lock(s.lock);
  auto opt_string = [&](const std::string& v) { g_value_set_string(value, v.empty() ? nullptr : v.c_str()); };
  switch (prop_id) {
    case PROP_MODE:
      g_value_set_enum(value, s.mode);
      break;
    case PROP_LABELS:
      opt_string(s.labels_path);
      break;
    case PROP_PARAM_NAME:
      g_value_set_string(value, s.param_name.c_str());
      break;
    case PROP_ROI_TYPE:
      opt_string(s.roi_type);
      break;
    case PROP_SOFTMAX:
      g_value_set_boolean(value, s.options.softmax);
      break;
    case PROP_PIXEL_THRESHOLD:
      g_value_set_double(value, s.options.text.threshold);
      break;
    case PROP_BOX_THRESHOLD:
      g_value_set_double(value, s.options.text.box_threshold);
      break;
    case PROP_UNCLIP_RATIO:
      g_value_set_double(value, s.options.text.unclip_ratio);
      break;
    case PROP_SCORE_MODE:
      g_value_set_enum(value, s.options.text.score_mode == wv::TextDetectionOptions::ScoreMode::slow
                                  ? GST_WEAVE_META_SCORE_MODE_SLOW
                                  : GST_WEAVE_META_SCORE_MODE_FAST);
      break;
    case PROP_MIN_SIZE:
      g_value_set_int(value, s.options.text.min_size);
      break;
    case PROP_MAX_CANDIDATES:
      g_value_set_int(value, s.options.text.max_candidates);
      break;
    case PROP_SCORE_THRESHOLD:
      g_value_set_double(value, s.options.boxes.score_threshold);
      break;
    case PROP_IOU_THRESHOLD:
      g_value_set_double(value, s.options.boxes.iou_threshold);
      break;
    case PROP_MAX_DETECTIONS:
      g_value_set_int(value, s.options.boxes.max_detections);
      break;
    case PROP_CLASS_AGNOSTIC:
      g_value_set_boolean(value, s.options.boxes.class_agnostic);
      break;
    case PROP_ANGLE_THRESHOLD:
      g_value_set_double(value, s.options.angle_threshold);
      break;
    case PROP_JSON:
      opt_string(s.json);
      break;
    case PROP_TRACK_RESULTS:
      g_value_set_enum(value, s.track_results);
      break;
    case PROP_MERGE:
      g_value_set_enum(value, s.merge);
      break;
    case PROP_LINE_GAP:
      g_value_set_double(value, s.line_options.max_gap);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_meta_finalize(GObject* object) {
  auto* self = GST_WEAVE_META(object);
  self->state.destroy();
  G_OBJECT_CLASS(gst_weave_meta_parent_class)->finalize(object);
}

static GstAggregatorPad* add_sink_pad(GstWeaveMeta* self, const char* name) {
  GstPadTemplate* templ = gst_element_class_get_pad_template(GST_ELEMENT_GET_CLASS(self), name);
  auto* pad = GST_AGGREGATOR_PAD(g_object_new(GST_TYPE_AGGREGATOR_PAD, "name", name, "direction",
                                              GST_PAD_SINK, "template", templ, nullptr));
  gst_element_add_pad(GST_ELEMENT(self), GST_PAD(pad));
  return pad;
}

static void gst_weave_meta_init(GstWeaveMeta* self) {
  self->state.construct();
  gst_video_info_init(&self->state->video_info);
  self->state->options.boxes.score_threshold = 0.25f;
  self->state->options.threshold = -G_MAXDOUBLE;
  self->state->video = add_sink_pad(self, "video");
  self->state->tensors = add_sink_pad(self, "tensor");
}

static void gst_weave_meta_class_init(GstWeaveMetaClass* klass) {
  auto* gobject_class = G_OBJECT_CLASS(klass);
  auto* element_class = GST_ELEMENT_CLASS(klass);
  auto* agg_class = GST_AGGREGATOR_CLASS(klass);
  gobject_class->set_property = gst_weave_meta_set_property;
  gobject_class->get_property = gst_weave_meta_get_property;
  gobject_class->finalize = gst_weave_meta_finalize;

  const auto rw_ready =
      static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
  const auto ro = static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  const wv::DecoderOptions defaults;

  g_object_class_install_property(
      gobject_class, PROP_MODE,
      g_param_spec_enum("mode", "Mode",
                        "What the tensor holds: regions to add, or results for cropped regions",
                        GST_TYPE_WEAVE_META_MODE, kDefaultMode, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_LABELS,
      g_param_spec_string(
          "labels", "Labels",
          "Text file, one entry per line: class labels (classification, detection modes), "
          "degrees (angle; default 0 and 180), or the keys of a text recognizer (ctc, required; "
          "the model has one class more for the CTC blank, two with a space). A missing file, or "
          "a keys file whose size does not match the model's classes, is an error naming it",
          nullptr, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_PARAM_NAME,
      g_param_spec_string("param-name", "Param name",
                          "classification: name of the params structure the class goes into on each region",
                          "classification", rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_ROI_TYPE,
      g_param_spec_string(
          "roi-type", "ROI type",
          "Per-region modes, for tensors that do not say which regions they were cropped from: "
          "rows go to the frame's regions of this type, in order (NULL = every region)",
          nullptr, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_SOFTMAX,
      g_param_spec_boolean("softmax", "Softmax",
                           "classification, angle: the model outputs logits; apply softmax", FALSE,
                           rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_PIXEL_THRESHOLD,
      g_param_spec_double("pixel-threshold", "Pixel threshold", "db: probability from which a pixel is text",
                          0.0, 1.0, defaults.text.threshold, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_BOX_THRESHOLD,
      g_param_spec_double("box-threshold", "Box threshold", "db: mean probability inside a box to keep it",
                          0.0, 1.0, defaults.text.box_threshold, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_UNCLIP_RATIO,
      g_param_spec_double("unclip-ratio", "Unclip ratio",
                          "db: how much a box is grown back (the detector sees text shrunk)", 0.0, 10.0,
                          defaults.text.unclip_ratio, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_SCORE_MODE,
      g_param_spec_enum(
          "score-mode", "Score mode",
          "db: where a box's score (compared with box-threshold) is measured: inside its rotated "
          "rectangle (fast) or inside the text region's own outline (slow: exact for curved "
          "or broken text)",
          GST_TYPE_WEAVE_META_SCORE_MODE, GST_WEAVE_META_SCORE_MODE_FAST, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_MIN_SIZE,
      g_param_spec_int("min-size", "Minimum box size",
                       "db: least short side of a box in probability-map pixels (before growing it back; "
                       "min-size + 2 after)",
                       1, 10000, defaults.text.min_size, rw_ready));
  g_object_class_install_property(gobject_class, PROP_MAX_CANDIDATES,
                                  g_param_spec_int("max-candidates", "Maximum candidates",
                                                   "db: text regions looked at per frame, the largest first",
                                                   1, 1000000, defaults.text.max_candidates, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_SCORE_THRESHOLD,
      g_param_spec_double("score-threshold", "Score threshold",
                          "yolo, yolov8, ssd: least score of a box; classification: least score of a class "
                          "attached to a region",
                          -G_MAXDOUBLE, G_MAXDOUBLE, 0.25, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_IOU_THRESHOLD,
      g_param_spec_double(
          "iou-threshold", "IoU threshold",
          "yolo, yolov8, ssd: NMS drops a box overlapping a better one of its class more than this", 0.0, 1.0,
          defaults.boxes.iou_threshold, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_MAX_DETECTIONS,
      g_param_spec_int(
          "max-detections", "Max detections",
          "yolo, yolov8, ssd: boxes per frame at most, counting only boxes in the frame after NMS", 1, 100000,
          defaults.boxes.max_detections, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_CLASS_AGNOSTIC,
      g_param_spec_boolean(
          "class-agnostic", "Class-agnostic NMS",
          "yolo, yolov8, ssd: NMS across classes (a box overlapping a better one of any class "
          "goes), instead of within each class",
          defaults.boxes.class_agnostic, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_ANGLE_THRESHOLD,
      g_param_spec_double("angle-threshold", "Angle threshold",
                          "angle: a region counts as turned only from this score on (else 0 degrees)", 0.0,
                          1.0, defaults.angle_threshold, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_JSON,
      g_param_spec_string("json", "JSON output",
                          "Write one JSON line per frame with all its regions to \"stdout\" or to this file "
                          "(truncated at start); NULL = off",
                          nullptr, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_TRACK_RESULTS,
      g_param_spec_enum("track-results", "Track results",
                        "What a per-region mode reports for a region that belongs to a track (weavetrack "
                        "upstream): its own read, or the track's best or voted read so far (also on frames "
                        "where the region was not read)",
                        GST_TYPE_WEAVE_META_TRACK_RESULTS, GST_WEAVE_META_TRACK_RESULTS_VOTE, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_MERGE,
      g_param_spec_enum("merge", "Merge",
                        "JSON text entries: one per box (none), or the boxes of one text line joined into "
                        "one entry whose \"text\" is the line, words separated by a space, in reading order, "
                        "its boxes listed under \"words\" (line). Metas stay one per box",
                        GST_TYPE_WEAVE_META_MERGE, GST_WEAVE_META_MERGE_NONE, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_LINE_GAP,
      g_param_spec_double(
          "line-gap", "Line gap",
          "merge=line: widest gap between two boxes of one line, in heights of the taller box", 0.0, 100.0,
          wv::LineMergeOptions{}.max_gap, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_FRAMES,
      g_param_spec_uint64("frames", "Frames", "Frames sent since start", 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_REGIONS,
      g_param_spec_uint64("regions", "Regions", "Regions added since start (detection modes)", 0, G_MAXUINT64,
                          0, ro));
  g_object_class_install_property(
      gobject_class, PROP_RESULTS,
      g_param_spec_uint64("results", "Results", "Results attached to regions since start (per-region modes)",
                          0, G_MAXUINT64, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_DROPPED,
      g_param_spec_uint64("dropped", "Dropped", "Tensors dropped because their frame had already gone", 0,
                          G_MAXUINT64, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_MEAN_MS,
      g_param_spec_double("mean-ms", "Mean time",
                          "Mean time per frame spent decoding and attaching results, in milliseconds", 0,
                          G_MAXDOUBLE, 0, ro));
  g_object_class_install_property(
      gobject_class, PROP_DECODE_MS,
      g_param_spec_double("decode-ms", "Mean decode time",
                          "Mean time per frame the decoder spends turning the tensors into results (for the "
                          "detector modes: scores, mapping to the frame and NMS), in milliseconds",
                          0, G_MAXDOUBLE, 0, ro));

  gst_element_class_add_static_pad_template_with_gtype(element_class, &video_template,
                                                       GST_TYPE_AGGREGATOR_PAD);
  gst_element_class_add_static_pad_template_with_gtype(element_class, &tensor_template,
                                                       GST_TYPE_AGGREGATOR_PAD);
  gst_element_class_add_static_pad_template_with_gtype(element_class, &src_template, GST_TYPE_AGGREGATOR_PAD);
  gst_element_class_set_static_metadata(
      element_class, "Weave results to frames", "Filter/Analyzer/Video",
      "Puts a model's results onto the video frames they belong to as region-of-interest metas: detections "
      "as "
      "new regions, classes, angles and texts on the regions they were cropped from",
      "Weave developers");

  agg_class->start = GST_DEBUG_FUNCPTR(gst_weave_meta_start);
  agg_class->stop = GST_DEBUG_FUNCPTR(gst_weave_meta_stop);
  agg_class->flush = GST_DEBUG_FUNCPTR(gst_weave_meta_flush);
  agg_class->sink_event = GST_DEBUG_FUNCPTR(gst_weave_meta_sink_event);
  agg_class->update_src_caps = GST_DEBUG_FUNCPTR(gst_weave_meta_update_src_caps);
  agg_class->aggregate = GST_DEBUG_FUNCPTR(gst_weave_meta_aggregate);

  gst_type_mark_as_plugin_api(GST_TYPE_WEAVE_META_MODE, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_WEAVE_META_SCORE_MODE, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_WEAVE_META_MERGE, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_WEAVE_META_TRACK_RESULTS, static_cast<GstPluginAPIFlags>(0));
  GST_DEBUG_CATEGORY_INIT(weave_meta_debug, "weavemeta", 0, "Weave results to frames");
}

GST_ELEMENT_REGISTER_DEFINE(weavemeta, "weavemeta", GST_RANK_NONE, GST_TYPE_WEAVE_META);
