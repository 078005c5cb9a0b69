/**
 * SECTION:element-weaveconvert
 * @title: weaveconvert
 *
 * Converts raw video frames into a float32 tensor for a model: colour conversion, resize
 * (stretch or letterbox), scaling, per-channel mean/std and NCHW or NHWC layout. Every tensor
 * carries where it came from (frame size and resize geometry) as a meta, so that results map
 * back to frame pixels (weavemeta).
 *
 * With `mode=rois` the tensor is a batch of crops of the frame's regions of interest
 * (GstVideoRegionOfInterestMeta, e.g. text boxes found by `weavemeta mode=db`): each region is cut
 * out upright (rotated boxes through a perspective warp, turned over when its `angle` param says
 * 180), resized to the tensor height keeping its aspect ratio and padded on the right. The batch
 * is `<N,3,H,W>` with N the number of regions (at most `max-batch` per tensor; more make several
 * tensors) and W the widest crop's width, within `min-width`..`max-width`, unless the width is
 * fixed (property or downstream caps). The caps change with N and W; the upper bounds are in the
 * caps, so a following weaveinfer plans memory once for them. A frame without regions gives a
 * GAP event in place of a tensor, so that nothing downstream waits for it.
 *
 * The output shape comes from what downstream accepts. A `weaveinfer` whose model wants
 * `<1,3,224,224>` gets 224x224; a model with open height and width gets the video's own size
 * (rounded up to #GstWeaveConvert:multiple). The tensor's `name` is taken from downstream caps,
 * or is "input".
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=10 ! weaveconvert mean=0.485,0.456,0.406 \
 *     std=0.229,0.224,0.225 ! weaveinfer model=resnet18.onnx ! weavedecode labels=imagenet.txt json=stdout \
 *     ! fakesink
 * ]|
 * Crops of text regions for PP-OCR's recognizer (height 48 from the model, width per batch):
 * |[
 * ... ! weavemeta name=boxes mode=db ! tee name=t t. ! queue ! rec.video
 *     t. ! queue ! weaveconvert mode=rois roi-type=text mean=0.5 std=0.5 channel-order=bgr pad-value=127.5
 *        ! weaveinfer model=ch_PP-OCRv4_rec_infer.onnx ! rec.tensor
 *     weavemeta name=rec mode=ctc labels=ppocr_keys_v1.txt ! ...
 * ]|
 */
#include "gst-plugin/gstweaveconvert.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <string>

#include "gst-plugin/elements.h"
#include "gst-plugin/gstweaveconvert_private.h"

GST_DEBUG_CATEGORY(weave_convert_debug);

namespace convert = weave::gst::convert;
namespace wv = weave::vision;
using convert::ConvertState;
using convert::st;

enum {
  PROP_0,
  PROP_LAYOUT,
  PROP_CHANNEL_ORDER,
  PROP_MEAN,
  PROP_STD,
  PROP_SCALE,
  PROP_RESIZE,
  PROP_PAD_VALUE,
  PROP_WIDTH,
  PROP_HEIGHT,
  PROP_MULTIPLE,
  PROP_LETTERBOX,
  PROP_MODE,
  PROP_ROI_TYPE,
  PROP_MAX_BATCH,
  PROP_WIDTH_TOLERANCE,
  PROP_MIN_WIDTH,
  PROP_MAX_WIDTH,
  PROP_MAX_SIDE,
  PROP_RECLASSIFY_INTERVAL,
  PROP_FRAMES,
  PROP_CROPS,
  PROP_MEAN_MS,
};

G_DEFINE_TYPE(GstWeaveConvert, gst_weave_convert, GST_TYPE_BASE_TRANSFORM)

GType gst_weave_layout_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_WEAVE_LAYOUT_NCHW, "Channels first: <1,3,H,W>", "nchw"},
      {GST_WEAVE_LAYOUT_NHWC, "Channels last: <1,H,W,3>", "nhwc"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstWeaveLayout", values));
  return type;
}

GType gst_weave_channel_order_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_WEAVE_CHANNEL_ORDER_RGB, "Red, green, blue", "rgb"},
      {GST_WEAVE_CHANNEL_ORDER_BGR, "Blue, green, red (OpenCV/Caffe models)", "bgr"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstWeaveChannelOrder", values));
  return type;
}

GType gst_weave_resize_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_WEAVE_RESIZE_STRETCH, "Scale to the tensor size, ignoring aspect ratio", "stretch"},
      {GST_WEAVE_RESIZE_LETTERBOX, "Keep aspect ratio, centre, pad with pad-value", "letterbox"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstWeaveResize", values));
  return type;
}

GType gst_weave_convert_mode_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_WEAVE_CONVERT_MODE_FRAME, "The whole frame: one tensor <1,3,H,W> per frame", "frame"},
      {GST_WEAVE_CONVERT_MODE_ROIS,
       "Crops of the frame's regions of interest: a batch <N,3,H,W> per frame (a GAP when there are none)",
       "rois"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstWeaveConvertMode", values));
  return type;
}

GstBaseTransformClass* convert::parent_class() {
  return GST_BASE_TRANSFORM_CLASS(gst_weave_convert_parent_class);
}

static void gst_weave_convert_set_property(GObject* object, guint prop_id, const GValue* value,
                                           GParamSpec* pspec) {
  auto* self = GST_WEAVE_CONVERT(object);
  ConvertState& s = st(self);
  bool renegotiate = false;
  {
    std::lock_guard lock(s.lock);
    switch (prop_id) {
      case PROP_LAYOUT:
        s.props.layout =
            g_value_get_enum(value) == GST_WEAVE_LAYOUT_NHWC ? wv::Layout::nhwc : wv::Layout::nchw;
        renegotiate = true;
        break;
      case PROP_CHANNEL_ORDER:
        s.props.order = g_value_get_enum(value) == GST_WEAVE_CHANNEL_ORDER_BGR ? wv::ChannelOrder::bgr
                                                                               : wv::ChannelOrder::rgb;
        break;
      case PROP_MEAN:
      case PROP_STD: {
        const char* text = g_value_get_string(value);
        const bool is_mean = prop_id == PROP_MEAN;
        if (text == nullptr) {
          (is_mean ? s.props.mean : s.props.std) =
              is_mean ? std::array<float, 3>{0, 0, 0} : std::array<float, 3>{1, 1, 1};
          break;
        }
        auto parsed = wv::parse_float_triple(text);
        if (parsed && !is_mean && std::find(parsed->begin(), parsed->end(), 0.0f) != parsed->end())
          parsed = weave::make_error("'", text, "': std values must be non-zero");
        if (!parsed) {
          g_warning("weaveconvert %s: %s; keeping %s", is_mean ? "mean" : "std", parsed.message().c_str(),
                    wv::format_float_triple(is_mean ? s.props.mean : s.props.std).c_str());
          break;
        }
        (is_mean ? s.props.mean : s.props.std) = *parsed;
        break;
      }
      case PROP_SCALE:
        s.props.scale = g_value_get_float(value);
        break;
      case PROP_RESIZE:
        s.props.resize = g_value_get_enum(value) == GST_WEAVE_RESIZE_LETTERBOX ? wv::ResizeMode::letterbox
                                                                               : wv::ResizeMode::stretch;
        break;
      case PROP_PAD_VALUE:
        s.props.pad_value = g_value_get_double(value);
        break;
      case PROP_WIDTH:
        s.props.width = g_value_get_int(value);
        renegotiate = true;
        break;
      case PROP_HEIGHT:
        s.props.height = g_value_get_int(value);
        renegotiate = true;
        break;
      case PROP_MULTIPLE:
        s.multiple = g_value_get_int(value);
        renegotiate = true;
        break;
      case PROP_MODE:
        s.rois = g_value_get_enum(value) == GST_WEAVE_CONVERT_MODE_ROIS;
        renegotiate = true;
        break;
      case PROP_ROI_TYPE: {
        const char* t = g_value_get_string(value);
        s.roi_type = t != nullptr ? t : "";
        break;
      }
      case PROP_MAX_BATCH:
        s.max_batch = g_value_get_int(value);
        renegotiate = true;
        break;
      case PROP_MIN_WIDTH:
        s.min_width = g_value_get_int(value);
        break;
      case PROP_WIDTH_TOLERANCE:
        s.width_tolerance = g_value_get_double(value);
        break;
      case PROP_MAX_WIDTH:
        s.max_width = g_value_get_int(value);
        renegotiate = true;
        break;
      case PROP_MAX_SIDE:
        s.max_side = g_value_get_int(value);
        renegotiate = true;
        break;
      case PROP_RECLASSIFY_INTERVAL:
        s.reclassify_interval = g_value_get_int(value);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
  }
  if (renegotiate) gst_base_transform_reconfigure_src(GST_BASE_TRANSFORM(object));
}

static void gst_weave_convert_get_property(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec) {
  ConvertState& s = st(GST_WEAVE_CONVERT(object));
  std::lock_guard lock(s.lock);
  switch (prop_id) {
    case PROP_LAYOUT:
      g_value_set_enum(value,
                       s.props.layout == wv::Layout::nhwc ? GST_WEAVE_LAYOUT_NHWC : GST_WEAVE_LAYOUT_NCHW);
      break;
    case PROP_CHANNEL_ORDER:
      g_value_set_enum(value, s.props.order == wv::ChannelOrder::bgr ? GST_WEAVE_CHANNEL_ORDER_BGR
                                                                     : GST_WEAVE_CHANNEL_ORDER_RGB);
      break;
    case PROP_MEAN:
      g_value_set_string(value, wv::format_float_triple(s.props.mean).c_str());
      break;
    case PROP_STD:
      g_value_set_string(value, wv::format_float_triple(s.props.std).c_str());
      break;
    case PROP_SCALE:
      g_value_set_float(value, s.props.scale);
      break;
    case PROP_RESIZE:
      g_value_set_enum(value, s.props.resize == wv::ResizeMode::letterbox ? GST_WEAVE_RESIZE_LETTERBOX
                                                                          : GST_WEAVE_RESIZE_STRETCH);
      break;
    case PROP_PAD_VALUE:
      g_value_set_double(value, s.props.pad_value);
      break;
    case PROP_WIDTH:
      g_value_set_int(value, s.props.width);
      break;
    case PROP_HEIGHT:
      g_value_set_int(value, s.props.height);
      break;
    case PROP_MULTIPLE:
      g_value_set_int(value, s.multiple);
      break;
    case PROP_LETTERBOX:
      g_value_set_string(value, s.letterbox.empty() ? nullptr : s.letterbox.c_str());
      break;
    case PROP_MODE:
      g_value_set_enum(value, s.rois ? GST_WEAVE_CONVERT_MODE_ROIS : GST_WEAVE_CONVERT_MODE_FRAME);
      break;
    case PROP_ROI_TYPE:
      g_value_set_string(value, s.roi_type.empty() ? nullptr : s.roi_type.c_str());
      break;
    case PROP_MAX_BATCH:
      g_value_set_int(value, s.max_batch);
      break;
    case PROP_MIN_WIDTH:
      g_value_set_int(value, s.min_width);
      break;
    case PROP_WIDTH_TOLERANCE:
      g_value_set_double(value, s.width_tolerance);
      break;
    case PROP_MAX_WIDTH:
      g_value_set_int(value, s.max_width);
      break;
    case PROP_MAX_SIDE:
      g_value_set_int(value, s.max_side);
      break;
    case PROP_RECLASSIFY_INTERVAL:
      g_value_set_int(value, s.reclassify_interval.load());
      break;
    case PROP_FRAMES:
      g_value_set_uint64(value, s.work.frames());
      break;
    case PROP_CROPS:
      g_value_set_uint64(value, s.crops.load());
      break;
    case PROP_MEAN_MS:
      g_value_set_double(value, s.work.mean_ms());
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_weave_convert_finalize(GObject* object) {
  auto* self = GST_WEAVE_CONVERT(object);
  self->state.destroy();
  G_OBJECT_CLASS(gst_weave_convert_parent_class)->finalize(object);
}

static void gst_weave_convert_init(GstWeaveConvert* self) {
  self->state.construct();
  gst_video_info_init(&self->state->in_info);
}

static void gst_weave_convert_class_init(GstWeaveConvertClass* klass) {
  auto* gobject_class = G_OBJECT_CLASS(klass);
  auto* element_class = GST_ELEMENT_CLASS(klass);
  auto* bt_class = GST_BASE_TRANSFORM_CLASS(klass);

  gobject_class->set_property = gst_weave_convert_set_property;
  gobject_class->get_property = gst_weave_convert_get_property;
  gobject_class->finalize = gst_weave_convert_finalize;

  const auto rw = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  const auto rw_ready = static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_READY);
  const auto rw_playing = static_cast<GParamFlags>(rw | GST_PARAM_MUTABLE_PLAYING);

  g_object_class_install_property(
      gobject_class, PROP_LAYOUT,
      g_param_spec_enum("layout", "Layout", "Tensor layout: nchw <1,3,H,W> or nhwc <1,H,W,3>",
                        gst_weave_layout_get_type(), GST_WEAVE_LAYOUT_NCHW, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_CHANNEL_ORDER,
      g_param_spec_enum("channel-order", "Channel order", "Order of the colour channels in the tensor",
                        gst_weave_channel_order_get_type(), GST_WEAVE_CHANNEL_ORDER_RGB, rw_playing));
  g_object_class_install_property(
      gobject_class, PROP_MEAN,
      g_param_spec_string("mean", "Mean",
                          "Per-channel mean subtracted after scaling, in the tensor's channel order: "
                          "\"0.485,0.456,0.406\", \"<0.485,0.456,0.406>\" or one value for all channels "
                          "(a GstValueArray of 3 floats converts too)",
                          "0,0,0", rw_playing));
  g_object_class_install_property(
      gobject_class, PROP_STD,
      g_param_spec_string("std", "Standard deviation",
                          "Per-channel divisor applied after the mean, same syntax as mean; values must be "
                          "non-zero",
                          "1,1,1", rw_playing));
  g_object_class_install_property(
      gobject_class, PROP_SCALE,
      g_param_spec_float("scale", "Scale",
                         "Pixel values (0..255) are multiplied by this first; 1/255 maps them to [0,1]. "
                         "Tensor value = (pixel * scale - mean) / std",
                         -G_MAXFLOAT, G_MAXFLOAT, 1.0f / 255.0f, rw_playing));
  g_object_class_install_property(
      gobject_class, PROP_RESIZE,
      g_param_spec_enum("resize", "Resize", "How a frame is fitted to the tensor size",
                        gst_weave_resize_get_type(), GST_WEAVE_RESIZE_STRETCH, rw_playing));
  g_object_class_install_property(
      gobject_class, PROP_PAD_VALUE,
      g_param_spec_double("pad-value", "Pad value",
                          "Letterbox border colour in pixel units (0..255, before scale/mean/std), e.g. 114",
                          0.0, 255.0, 0.0, rw_playing));
  g_object_class_install_property(
      gobject_class, PROP_WIDTH,
      g_param_spec_int("width", "Width",
                       "Tensor width; 0 = from downstream caps, or the video width if downstream leaves it "
                       "open",
                       0, wv::kMaxImageSide, 0, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_HEIGHT,
      g_param_spec_int("height", "Height",
                       "Tensor height; 0 = from downstream caps, or the video height if downstream leaves "
                       "it open",
                       0, wv::kMaxImageSide, 0, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_MULTIPLE,
      g_param_spec_int("multiple", "Multiple",
                       "When the tensor takes the video's own size, round it up to a multiple of this "
                       "(e.g. 32 for detectors)",
                       1, 4096, convert::kDefaultMultiple, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_LETTERBOX,
      g_param_spec_string("letterbox", "Letterbox geometry",
                          "Where the last frame landed in the tensor, as a GstStructure: scale-x, scale-y, "
                          "offset-x, offset-y, width, height (tensor = frame * scale + offset); NULL before "
                          "the first frame",
                          nullptr, static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));

  g_object_class_install_property(
      gobject_class, PROP_MODE,
      g_param_spec_enum(
          "mode", "Mode",
          "What becomes the tensor: the whole frame, or crops of its regions of interest (a batch "
          "<N,3,H,W> per frame, a GAP event for a frame without regions)",
          gst_weave_convert_mode_get_type(), GST_WEAVE_CONVERT_MODE_FRAME, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_ROI_TYPE,
      g_param_spec_string("roi-type", "ROI type",
                          "mode=rois: crop only regions of this type (e.g. \"text\"); NULL = every region",
                          nullptr, rw_playing));
  g_object_class_install_property(
      gobject_class, PROP_MAX_BATCH,
      g_param_spec_int(
          "max-batch", "Max batch",
          "mode=rois: crops per tensor at most (the planned bound of the batch dim); a frame with "
          "more regions gives several tensors",
          1, 1024, convert::kDefaultMaxBatch, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_WIDTH_TOLERANCE,
      g_param_spec_double(
          "width-tolerance", "Width tolerance",
          "mode=rois with a width chosen per batch: crops share a batch only while each is at least (1 - "
          "this) "
          "of the batch's width, widest first (less padding: a text recognizer reads better without a long "
          "pad, and does less work); 1 = any widths together, in region order",
          0.0, 1.0, 1.0, rw_playing));
  g_object_class_install_property(
      gobject_class, PROP_MIN_WIDTH,
      g_param_spec_int("min-width", "Min width",
                       "mode=rois with a width chosen per batch: the least tensor width", 1,
                       wv::kMaxImageSide, convert::kDefaultMinWidth, rw_playing));
  g_object_class_install_property(
      gobject_class, PROP_MAX_WIDTH,
      g_param_spec_int(
          "max-width", "Max width",
          "mode=rois with a width chosen per batch: the greatest tensor width (the planned bound; "
          "wider crops are squeezed)",
          1, wv::kMaxImageSide, convert::kDefaultMaxWidth, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_MAX_SIDE,
      g_param_spec_int(
          "max-side", "Max side",
          "mode=frame, when the tensor takes the video's own size: scale it down keeping the aspect "
          "ratio so that its longer side is at most this, before rounding to multiple (0 = no limit; "
          "PP-OCR's detector uses 960)",
          0, wv::kMaxImageSide, 0, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_RECLASSIFY_INTERVAL,
      g_param_spec_int(
          "reclassify-interval", "Reclassify interval",
          "mode=rois: crop a region of a track (weavetrack upstream) on the track's first frame "
          "and then every N-th frame only; weavemeta reports the track's result in between. "
          "Regions without a track are cropped on every frame. 0 = every region every frame",
          0, G_MAXINT, 0,
          static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
  g_object_class_install_property(
      gobject_class, PROP_FRAMES,
      g_param_spec_uint64("frames", "Frames", "Frames converted since start", 0, G_MAXUINT64, 0,
                          static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
  g_object_class_install_property(
      gobject_class, PROP_CROPS,
      g_param_spec_uint64("crops", "Crops", "mode=rois: regions cropped since start", 0, G_MAXUINT64, 0,
                          static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
  g_object_class_install_property(
      gobject_class, PROP_MEAN_MS,
      g_param_spec_double("mean-ms", "Mean time", "Mean time spent converting one frame, in milliseconds", 0,
                          G_MAXDOUBLE, 0,
                          static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));

  gst_element_class_set_static_metadata(element_class, "Weave video to tensor converter",
                                        "Filter/Converter/Video",
                                        "Converts raw video to a float32 tensor (resize, colour order, "
                                        "mean/std, NCHW/NHWC) sized to what downstream accepts",
                                        "Weave developers");
  gst_element_class_add_static_pad_template(element_class, &convert::sink_template);
  gst_element_class_add_static_pad_template(element_class, &convert::src_template);

  bt_class->transform_caps = GST_DEBUG_FUNCPTR(convert::gst_weave_convert_transform_caps);
  bt_class->fixate_caps = GST_DEBUG_FUNCPTR(convert::gst_weave_convert_fixate_caps);
  bt_class->set_caps = GST_DEBUG_FUNCPTR(convert::gst_weave_convert_set_caps);
  bt_class->transform_size = GST_DEBUG_FUNCPTR(convert::gst_weave_convert_transform_size);
  bt_class->transform = GST_DEBUG_FUNCPTR(convert::gst_weave_convert_transform);
  bt_class->generate_output = GST_DEBUG_FUNCPTR(convert::gst_weave_convert_generate_output);
  bt_class->stop = GST_DEBUG_FUNCPTR(convert::gst_weave_convert_stop);
  bt_class->passthrough_on_same_caps = FALSE;

  gst_type_mark_as_plugin_api(gst_weave_layout_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_weave_channel_order_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_weave_resize_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_weave_convert_mode_get_type(), static_cast<GstPluginAPIFlags>(0));
  GST_DEBUG_CATEGORY_INIT(weave_convert_debug, "weaveconvert", 0, "Weave video to tensor converter");
}

GST_ELEMENT_REGISTER_DEFINE(weaveconvert, "weaveconvert", GST_RANK_NONE, GST_TYPE_WEAVE_CONVERT);
