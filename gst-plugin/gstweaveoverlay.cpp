/**
 * SECTION:element-weaveoverlay
 * @title: weaveoverlay
 *
 * Draws the regions of interest on each frame (GstVideoRegionOfInterestMeta, as weavemeta
 * attaches them): the box -- rotated when the region's `detection` param has `corners` -- and a
 * label above it: the text read and its score, else the class, else the detected label. The
 * frame is drawn on in place (packed RGB/BGR formats with or without alpha); the metas stay.
 * OpenCV's fonts have ASCII only: other characters are drawn as '?'.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 ... ! weavemeta name=rec mode=ctc labels=ppocr_keys_v1.txt ! weaveoverlay \
 *     ! videoconvert ! pngenc ! multifilesink location=frame-%05d.png
 * ]|
 */
#include "gst-plugin/gstweaveoverlay.h"

#include <atomic>
#include <mutex>
#include <string>

#include "caps/roi_meta.h"
#include "caps/video_frame.h"
#include "core/stream/work_time.h"
#include "core/vision/draw.h"
#include "gst-plugin/elements.h"
#include "gst-plugin/instance_state.h"
#include "gst-plugin/work_properties.h"

GST_DEBUG_CATEGORY_STATIC(weave_overlay_debug);
#define GST_CAT_DEFAULT weave_overlay_debug

namespace wv = weave::vision;

namespace {

enum {
  PROP_0,
  PROP_ROI_TYPE,
  PROP_SHOW_LABELS,
  PROP_SHOW_SCORES,
  PROP_THICKNESS,
  PROP_BOX_COLOR,
  PROP_FRAMES,
  PROP_MEAN_MS,
};

constexpr guint kDefaultBoxColor = 0xff00c800;  // ARGB, like textoverlay's colors

struct OverlayState {
  std::mutex lock;  // guards the settings
  std::string roi_type;
  wv::DrawStyle style;
  guint box_color = kDefaultBoxColor;
  weave::stream::WorkTime work;
};

}  // namespace

struct _GstWeaveOverlay {
  GstVideoFilter parent;
  weave::gst::InstanceState<OverlayState> state;
};

G_DEFINE_TYPE(GstWeaveOverlay, gst_weave_overlay, GST_TYPE_VIDEO_FILTER)

#define OVERLAY_FORMATS "{ RGB, BGR, RGBA, BGRA, RGBx, BGRx }"
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(OVERLAY_FORMATS)));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(OVERLAY_FORMATS)));

static GstFlowReturn gst_weave_overlay_transform_frame_ip(GstVideoFilter* filter, GstVideoFrame* frame) {
  OverlayState& s = *GST_WEAVE_OVERLAY(filter)->state;
  const auto t0 = weave::stream::WorkTime::Clock::now();
  std::string type;
  wv::DrawStyle style;
  {
    std::lock_guard lock(s.lock);
    type = s.roi_type;
    style = s.style;
  }
  const auto regions = weave::caps::read_regions(frame->buffer, type);
  if (!regions.empty()) {
    auto view = weave::caps::mutable_image_view(*frame);
    weave::Status st = view ? wv::draw_regions(*view, regions, style) : weave::Status(view.error());
    if (!st) {
      GST_ELEMENT_ERROR(filter, STREAM, FAILED, ("weaveoverlay: %s", st.message().c_str()), (nullptr));
      return GST_FLOW_ERROR;
    }
  }
  s.work.count_frame();
  s.work.add_since(t0);
  return GST_FLOW_OK;
}

static void gst_weave_overlay_set_property(GObject* object, guint prop_id, const GValue* value,
                                           GParamSpec* pspec) {
  OverlayState& s = *GST_WEAVE_OVERLAY(object)->state;
  std::lock_guard lock(s.lock);
  switch (prop_id) {
    case PROP_ROI_TYPE: {
      const char* v = g_value_get_string(value);
      s.roi_type = v != nullptr ? v : "";
      break;
    }
    case PROP_SHOW_LABELS:
      s.style.labels = g_value_get_boolean(value);
      break;
    case PROP_SHOW_SCORES:
      s.style.scores = g_value_get_boolean(value);
      break;
    case PROP_THICKNESS:
      s.style.thickness = g_value_get_int(value);
      break;
    case PROP_BOX_COLOR: {
      s.box_color = g_value_get_uint(value);
      s.style.box_rgb = {static_cast<std::uint8_t>(s.box_color >> 16),
                         static_cast<std::uint8_t>(s.box_color >> 8), static_cast<std::uint8_t>(s.box_color)};
      // The label's background: the box colour, darker.
      for (int c = 0; c < 3; ++c)
        s.style.label_rgb[c] = static_cast<std::uint8_t>(s.style.box_rgb[c] * 3 / 5);
      break;
    }
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_overlay_get_property(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec) {
  OverlayState& s = *GST_WEAVE_OVERLAY(object)->state;
  if (weave::gst::get_work_property(s.work, prop_id, PROP_FRAMES, PROP_MEAN_MS, value)) return;
  std::lock_guard lock(s.lock);
  switch (prop_id) {
    case PROP_ROI_TYPE:
      g_value_set_string(value, s.roi_type.empty() ? nullptr : s.roi_type.c_str());
      break;
    case PROP_SHOW_LABELS:
      g_value_set_boolean(value, s.style.labels);
      break;
    case PROP_SHOW_SCORES:
      g_value_set_boolean(value, s.style.scores);
      break;
    case PROP_THICKNESS:
      g_value_set_int(value, s.style.thickness);
      break;
    case PROP_BOX_COLOR:
      g_value_set_uint(value, s.box_color);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_overlay_finalize(GObject* object) {
  auto* self = GST_WEAVE_OVERLAY(object);
  self->state.destroy();
  G_OBJECT_CLASS(gst_weave_overlay_parent_class)->finalize(object);
}

static void gst_weave_overlay_init(GstWeaveOverlay* self) {
  self->state.construct();
  GValue v = G_VALUE_INIT;
  g_value_init(&v, G_TYPE_UINT);
  g_value_set_uint(&v, kDefaultBoxColor);
  gst_weave_overlay_set_property(G_OBJECT(self), PROP_BOX_COLOR, &v, nullptr);
  g_value_unset(&v);
}

static void gst_weave_overlay_class_init(GstWeaveOverlayClass* klass) {
  auto* gobject_class = G_OBJECT_CLASS(klass);
  auto* element_class = GST_ELEMENT_CLASS(klass);
  auto* filter_class = GST_VIDEO_FILTER_CLASS(klass);
  gobject_class->set_property = gst_weave_overlay_set_property;
  gobject_class->get_property = gst_weave_overlay_get_property;
  gobject_class->finalize = gst_weave_overlay_finalize;

  const auto rw =
      static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  const wv::DrawStyle defaults;
  g_object_class_install_property(
      gobject_class, PROP_ROI_TYPE,
      g_param_spec_string("roi-type", "ROI type", "Draw only regions of this type; NULL = every region",
                          nullptr, rw));
  g_object_class_install_property(
      gobject_class, PROP_SHOW_LABELS,
      g_param_spec_boolean("show-labels", "Show labels", "Draw each region's text, class or label above it",
                           defaults.labels, rw));
  g_object_class_install_property(
      gobject_class, PROP_SHOW_SCORES,
      g_param_spec_boolean("show-scores", "Show scores", "Add the score to each label", defaults.scores, rw));
  g_object_class_install_property(
      gobject_class, PROP_THICKNESS,
      g_param_spec_int("thickness", "Thickness", "Line width of the boxes in pixels", 1, 64,
                       defaults.thickness, rw));
  g_object_class_install_property(
      gobject_class, PROP_BOX_COLOR,
      g_param_spec_uint("box-color", "Box color", "Colour of the boxes as 0xAARRGGBB (alpha ignored)", 0,
                        G_MAXUINT32, kDefaultBoxColor, rw));
  weave::gst::install_work_properties(gobject_class, PROP_FRAMES, PROP_MEAN_MS, "Frames drawn on since start",
                                      "Mean time per frame spent drawing, in milliseconds");

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "Weave region overlay", "Filter/Effect/Video",
      "Draws regions of interest (boxes, rotated boxes, texts and classes found "
      "for them) onto the video",
      "Weave developers");
  filter_class->transform_frame_ip = GST_DEBUG_FUNCPTR(gst_weave_overlay_transform_frame_ip);
  GST_DEBUG_CATEGORY_INIT(weave_overlay_debug, "weaveoverlay", 0, "Weave region overlay");
}

GST_ELEMENT_REGISTER_DEFINE(weaveoverlay, "weaveoverlay", GST_RANK_NONE, GST_TYPE_WEAVE_OVERLAY);
