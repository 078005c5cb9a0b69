/**
 * SECTION:element-weavetrack
 * @title: weavetrack
 *
 * Follows regions of interest (GstVideoRegionOfInterestMeta, as weavemeta attaches them: text,
 * objects, faces -- any type) from frame to frame and gives each region the id of its track, as
 * a `track` param (id, age in frames, predicted). weavemeta's JSON then carries `"track":<id>`
 * for each text or object, and weaveoverlay draws `#<id>` before the label.
 *
 * The tracker uses no pixels: each track's box moves by a constant-velocity Kalman filter;
 * each frame's regions are matched to the predicted boxes by IoU with an optimal assignment, in
 * two stages -- regions scored at least #GstWeaveTrack:high-score first, then weaker ones (at
 * least #GstWeaveTrack:low-score) only to tracks seen on the frame before. A track gets its id
 * after #GstWeaveTrack:birth-hits frames in a row and ends after #GstWeaveTrack:max-misses
 * frames without a region. Regions that belong to no track (yet) pass unchanged. A flush or a
 * new stream forgets every track; ids never repeat while the element lives.
 *
 * With #GstWeaveTrack:add-predicted, a track missed on a frame is reported there anyway: a
 * region at its predicted box, marked `predicted`, so an object stays labelled through a
 * missed detection or an occlusion.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 filesrc location=street.mp4 ! decodebin ! videoconvert ! tee name=t \
 *     t. ! queue ! weaveconvert ! weaveinfer model=detector.onnx ! m.tensor \
 *     t. ! queue ! m.video weavemeta name=m mode=yolo labels=coco.txt ! weavetrack \
 *     ! weaveoverlay ! videoconvert ! autovideosink
 * ]|
 */
#include "gst-plugin/gstweavetrack.h"

#include <gst/video/video.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "caps/roi_meta.h"
#include "core/stream/work_time.h"
#include "core/track/region_tracker.h"
#include "gst-plugin/elements.h"
#include "gst-plugin/instance_state.h"
#include "gst-plugin/work_properties.h"

GST_DEBUG_CATEGORY_STATIC(weave_track_debug);
#define GST_CAT_DEFAULT weave_track_debug

namespace wt = weave::track;
namespace wv = weave::vision;

namespace {

enum {
  PROP_0,
  PROP_ROI_TYPE,
  PROP_HIGH_SCORE,
  PROP_LOW_SCORE,
  PROP_MIN_IOU,
  PROP_LOW_MIN_IOU,
  PROP_BIRTH_HITS,
  PROP_MAX_MISSES,
  PROP_MATCH_BUFFER,
  PROP_CLASS_AWARE,
  PROP_ADD_PREDICTED,
  PROP_TRACKS,
  PROP_TRACKS_STARTED,
  PROP_FRAMES,
  PROP_MEAN_MS,
};

struct TrackState {
  std::mutex lock;  // guards everything below but `work`
  std::string roi_type;
  wt::TrackerSettings settings;
  bool add_predicted = false;
  int width = 0, height = 0;      // the frame's size, when the caps are video; 0: unknown
  bool settings_changed = false;  // the tracker takes new settings at the next frame
  wt::RegionTracker tracker;
  weave::stream::WorkTime work;
};

}  // namespace

struct _GstWeaveTrack {
  GstBaseTransform parent;
  weave::gst::InstanceState<TrackState> state;
};

G_DEFINE_TYPE(GstWeaveTrack, gst_weave_track, GST_TYPE_BASE_TRANSFORM)

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

// Adds the regions RegionTracker::predicted() gives for this frame.
static void add_predicted(TrackState& s, GstBuffer* buffer, bool skipped) {
  for (const wv::Region& r : s.tracker.predicted(s.add_predicted, skipped, s.width, s.height))
    weave::caps::add_region(buffer, r);
}

static GstFlowReturn gst_weave_track_transform_ip(GstBaseTransform* trans, GstBuffer* buffer) {
  TrackState& s = *GST_WEAVE_TRACK(trans)->state;
  const auto t0 = weave::stream::WorkTime::Clock::now();
  std::lock_guard lock(s.lock);
  if (s.settings_changed) {
    // New matching settings take effect with a new tracker: the tracks so far end here; ids go on.
    s.tracker.configure(s.settings);
    s.settings_changed = false;
  }
  if (weave::caps::is_skipped(buffer)) {
    // The detector did not run on this frame: the tracks move on by prediction and are reported
    // there, as predicted regions (add_predicted says which).
    s.tracker.coast();
    add_predicted(s, buffer, /*skipped=*/true);
    GST_LOG_OBJECT(trans, "skipped frame: %zu predicted tracks", s.tracker.confirmed());
    s.work.count_frame();
    s.work.add_since(t0);
    return GST_FLOW_OK;
  }
  const std::vector<wv::Region> regions = weave::caps::read_regions(buffer, s.roi_type);
  const auto tags = s.tracker.update(regions);
  for (std::size_t i = 0; i < regions.size(); ++i)
    if (tags[i] && !weave::caps::attach_track(buffer, regions[i].id, *tags[i]))
      GST_WARNING_OBJECT(trans, "region %d vanished from the buffer", regions[i].id);
  add_predicted(s, buffer, /*skipped=*/false);
  GST_LOG_OBJECT(trans, "%zu regions, %zu confirmed tracks", regions.size(), s.tracker.confirmed());
  s.work.count_frame();
  s.work.add_since(t0);
  return GST_FLOW_OK;
}

static gboolean gst_weave_track_set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* /*outcaps*/) {
  TrackState& s = *GST_WEAVE_TRACK(trans)->state;
  GstVideoInfo info;
  std::lock_guard lock(s.lock);
  const bool video = gst_video_info_from_caps(&info, incaps);
  s.width = video ? GST_VIDEO_INFO_WIDTH(&info) : 0;
  s.height = video ? GST_VIDEO_INFO_HEIGHT(&info) : 0;
  return TRUE;
}

static gboolean gst_weave_track_sink_event(GstBaseTransform* trans, GstEvent* event) {
  switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_FLUSH_STOP:
    case GST_EVENT_STREAM_START: {
      // Boxes after a seek or in a new stream have nothing to do with the tracks so far.
      TrackState& s = *GST_WEAVE_TRACK(trans)->state;
      std::lock_guard lock(s.lock);
      GST_DEBUG_OBJECT(trans, "%s: tracks reset", GST_EVENT_TYPE_NAME(event));
      s.tracker.reset();
      break;
    }
    default:
      break;
  }
  return GST_BASE_TRANSFORM_CLASS(gst_weave_track_parent_class)->sink_event(trans, event);
}

static void gst_weave_track_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec) {
  TrackState& s = *GST_WEAVE_TRACK(object)->state;
  std::lock_guard lock(s.lock);
  switch (prop_id) {
    case PROP_ROI_TYPE: {
      const char* v = g_value_get_string(value);
      s.roi_type = v != nullptr ? v : "";
      break;
    }
    case PROP_HIGH_SCORE:
      s.settings.high_score = static_cast<float>(g_value_get_double(value));
      break;
    case PROP_LOW_SCORE:
      s.settings.low_score = static_cast<float>(g_value_get_double(value));
      break;
    case PROP_MIN_IOU:
      s.settings.min_iou = g_value_get_double(value);
      break;
    case PROP_LOW_MIN_IOU:
      s.settings.low_min_iou = g_value_get_double(value);
      break;
    case PROP_BIRTH_HITS:
      s.settings.birth_hits = g_value_get_int(value);
      break;
    case PROP_MAX_MISSES:
      s.settings.max_misses = g_value_get_int(value);
      break;
    case PROP_MATCH_BUFFER:
      s.settings.buffer = g_value_get_double(value);
      break;
    case PROP_CLASS_AWARE:
      s.settings.class_aware = g_value_get_boolean(value);
      break;
    case PROP_ADD_PREDICTED:
      s.add_predicted = g_value_get_boolean(value);
      return;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      return;
  }
  if (prop_id != PROP_ROI_TYPE) s.settings_changed = true;
}

static void gst_weave_track_get_property(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec) {
  TrackState& s = *GST_WEAVE_TRACK(object)->state;
  if (weave::gst::get_work_property(s.work, prop_id, PROP_FRAMES, PROP_MEAN_MS, value)) return;
  std::lock_guard lock(s.lock);
  switch (prop_id) {
    case PROP_ROI_TYPE:
      g_value_set_string(value, s.roi_type.empty() ? nullptr : s.roi_type.c_str());
      break;
    case PROP_HIGH_SCORE:
      g_value_set_double(value, s.settings.high_score);
      break;
    case PROP_LOW_SCORE:
      g_value_set_double(value, s.settings.low_score);
      break;
    case PROP_MIN_IOU:
      g_value_set_double(value, s.settings.min_iou);
      break;
    case PROP_LOW_MIN_IOU:
      g_value_set_double(value, s.settings.low_min_iou);
      break;
    case PROP_BIRTH_HITS:
      g_value_set_int(value, s.settings.birth_hits);
      break;
    case PROP_MAX_MISSES:
      g_value_set_int(value, s.settings.max_misses);
      break;
    case PROP_MATCH_BUFFER:
      g_value_set_double(value, s.settings.buffer);
      break;
    case PROP_CLASS_AWARE:
      g_value_set_boolean(value, s.settings.class_aware);
      break;
    case PROP_ADD_PREDICTED:
      g_value_set_boolean(value, s.add_predicted);
      break;
    case PROP_TRACKS:
      g_value_set_uint(value, static_cast<guint>(s.tracker.confirmed()));
      break;
    case PROP_TRACKS_STARTED:
      g_value_set_uint64(value, s.tracker.ids_issued());
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_track_finalize(GObject* object) {
  GST_WEAVE_TRACK(object)->state.destroy();
  G_OBJECT_CLASS(gst_weave_track_parent_class)->finalize(object);
}

static void gst_weave_track_init(GstWeaveTrack* self) {
  self->state.construct();
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
}

static void gst_weave_track_class_init(GstWeaveTrackClass* klass) {
  auto* gobject_class = G_OBJECT_CLASS(klass);
  auto* element_class = GST_ELEMENT_CLASS(klass);
  auto* trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  gobject_class->set_property = gst_weave_track_set_property;
  gobject_class->get_property = gst_weave_track_get_property;
  gobject_class->finalize = gst_weave_track_finalize;

  const auto rw =
      static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  const auto ro = static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  const wt::TrackerSettings d;
  g_object_class_install_property(
      gobject_class, PROP_ROI_TYPE,
      g_param_spec_string("roi-type", "ROI type",
                          "Track only regions of this type (\"text\", a class label); NULL = every region",
                          nullptr, rw));
  g_object_class_install_property(
      gobject_class, PROP_HIGH_SCORE,
      g_param_spec_double("high-score", "High score",
                          "Regions scored at least this are matched first and may start tracks", 0.0, 1.0,
                          d.high_score, rw));
  g_object_class_install_property(
      gobject_class, PROP_LOW_SCORE,
      g_param_spec_double("low-score", "Low score",
                          "Regions scored from this up to high-score only continue tracks seen on the frame "
                          "before; weaker ones are not tracked",
                          0.0, 1.0, d.low_score, rw));
  g_object_class_install_property(
      gobject_class, PROP_MIN_IOU,
      g_param_spec_double(
          "min-iou", "Minimum IoU",
          "Least overlap (intersection over union) of a region with a track's predicted box for "
          "a match in the first stage",
          0.01, 1.0, d.min_iou, rw));
  g_object_class_install_property(
      gobject_class, PROP_LOW_MIN_IOU,
      g_param_spec_double("low-min-iou", "Minimum IoU of weak regions",
                          "Least overlap for a match of a region scored below high-score", 0.01, 1.0,
                          d.low_min_iou, rw));
  g_object_class_install_property(
      gobject_class, PROP_BIRTH_HITS,
      g_param_spec_int("birth-hits", "Birth hits",
                       "Frames in a row a new track must be matched before it gets an id (1: at once)", 1,
                       1000, d.birth_hits, rw));
  g_object_class_install_property(
      gobject_class, PROP_MAX_MISSES,
      g_param_spec_int("max-misses", "Maximum misses",
                       "Frames in a row a track may go without a region (detector runs, with an "
                       "inference-interval); one more and it ends",
                       0, 100000, d.max_misses, rw));
  g_object_class_install_property(
      gobject_class, PROP_MATCH_BUFFER,
      g_param_spec_double("match-buffer", "Match buffer",
                          "Last matching stage: regions and tracks still unmatched are compared with their "
                          "boxes grown by this share of their size on each side per frame since the track's "
                          "last match (at most 1); joins objects that moved more than their size between "
                          "detector runs (inference-interval). 0 = no such stage",
                          0.0, 1.0, d.buffer, rw));
  g_object_class_install_property(
      gobject_class, PROP_CLASS_AWARE,
      g_param_spec_boolean("class-aware", "Class aware",
                           "Match a region only to tracks of its type and class", d.class_aware, rw));
  g_object_class_install_property(
      gobject_class, PROP_ADD_PREDICTED,
      g_param_spec_boolean("add-predicted", "Add predicted",
                           "On a frame where a track has no region, add one at its predicted box (marked "
                           "predicted), until the track ends",
                           FALSE, rw));
  g_object_class_install_property(
      gobject_class, PROP_TRACKS,
      g_param_spec_uint("tracks", "Tracks", "Tracks with an id alive after the last frame", 0, G_MAXUINT, 0,
                        ro));
  g_object_class_install_property(
      gobject_class, PROP_TRACKS_STARTED,
      g_param_spec_uint64("tracks-started", "Tracks started",
                          "Track ids handed out since the element was made", 0, G_MAXUINT64, 0, ro));
  weave::gst::install_work_properties(gobject_class, PROP_FRAMES, PROP_MEAN_MS, "Frames tracked since start",
                                      "Mean time per frame spent tracking, in milliseconds");

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(element_class, "Weave region tracker", "Filter/Analyzer/Video",
                                        "Follows regions of interest from frame to frame and gives each the "
                                        "id of its track",
                                        "Weave developers");
  trans_class->transform_ip = GST_DEBUG_FUNCPTR(gst_weave_track_transform_ip);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_weave_track_sink_event);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_weave_track_set_caps);
  GST_DEBUG_CATEGORY_INIT(weave_track_debug, "weavetrack", 0, "Weave region tracker");
}

GST_ELEMENT_REGISTER_DEFINE(weavetrack, "weavetrack", GST_RANK_NONE, GST_TYPE_WEAVE_TRACK);
