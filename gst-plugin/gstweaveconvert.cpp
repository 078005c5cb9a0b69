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

#include <gst/video/video.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "caps/roi_meta.h"
#include "caps/tensor_caps.h"
#include "caps/tensor_origin.h"
#include "caps/video_frame.h"
#include "core/stream/work_time.h"
#include "core/vision/crops.h"
#include "core/vision/preprocess.h"
#include "gst-plugin/elements.h"
#include "gst-plugin/gstweavememory.h"
#include "gst-plugin/instance_state.h"

GST_DEBUG_CATEGORY_STATIC(weave_convert_debug);
#define GST_CAT_DEFAULT weave_convert_debug

namespace wv = weave::vision;

namespace {

constexpr int kDefaultMultiple = 1;

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
  PROP_MIN_WIDTH,
  PROP_MAX_WIDTH,
  PROP_MAX_SIDE,
  PROP_FRAMES,
  PROP_CROPS,
  PROP_MEAN_MS,
};

constexpr int kDefaultMaxBatch = 16;
constexpr int kDefaultMinWidth = 8;
constexpr int kDefaultMaxWidth = 960;

// C++ state of the element, constructed in instance_init and destroyed in finalize.
struct ConvertState {
  std::mutex lock;           // guards everything below; properties change from the application thread
  wv::PreprocessSpec props;  // width/height here are the properties (0 = from downstream)
  int multiple = kDefaultMultiple;
  // Negotiated
  GstVideoInfo in_info{};
  int out_width = 0;
  int out_height = 0;
  std::string letterbox;  // last geometry, serialized as a GstStructure

  // mode=rois
  bool rois = false;
  std::string roi_type;  // "" = every region
  int max_batch = kDefaultMaxBatch;
  int min_width = kDefaultMinWidth;
  int max_width = kDefaultMaxWidth;
  int max_side = 0;          // mode=frame: the video size as tensor size, scaled down to this (0 = no limit)
  bool width_fixed = false;  // negotiated: the crop width is fixed (out_width), else per batch
  // Crops of the frame being converted (streaming thread only): its batches go out one per
  // generate_output call.
  GstBuffer* crop_input = nullptr;
  std::vector<wv::Region> regions;
  std::vector<wv::CropBatch> batches;
  std::size_t next_batch = 0;
  weave::Dims out_dims;  // of the caps last sent

  // Statistics
  weave::stream::WorkTime work;
  std::atomic<guint64> crops{0};
};

}  // namespace

struct _GstWeaveConvert {
  GstBaseTransform parent;
  weave::gst::InstanceState<ConvertState> state;
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

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-raw, format=(string){ RGB, BGR, RGBA, BGRA, RGBx, BGRx, GRAY8, I420, NV12 }, "
                    "width=(int)[1, 16384], height=(int)[1, 16384], framerate=(fraction)[0/1, MAX]"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("tensor/x-raw, dtype=(string)float32"));

namespace {

ConvertState& st(GstWeaveConvert* self) {
  return *self->state;
}
ConvertState& st(GstBaseTransform* bt) {
  return *GST_WEAVE_CONVERT(bt)->state;
}

// Index of the height, width and channel dims in the 4-D shape for a layout.
struct DimIndex {
  int h, w, c;
};
DimIndex dim_index(wv::Layout layout) {
  return layout == wv::Layout::nchw ? DimIndex{2, 3, 1} : DimIndex{1, 2, 3};
}

void append_int(GValue* array, int v) {
  GValue item = G_VALUE_INIT;
  g_value_init(&item, G_TYPE_INT);
  g_value_set_int(&item, v);
  gst_value_array_append_and_take_value(array, &item);
}

void append_range(GValue* array, int lo, int hi) {
  GValue item = G_VALUE_INIT;
  g_value_init(&item, GST_TYPE_INT_RANGE);
  gst_value_set_int_range(&item, lo, hi);
  gst_value_array_append_and_take_value(array, &item);
}

// The one tensor structure this element can produce: <B,3,H,W> or <B,H,W,3>, with H and W fixed
// by the properties or left as ranges (up to max_side) for downstream and fixate_caps to settle;
// B is 1 for frames and 1..max_batch for crops.
GstStructure* output_structure(wv::Layout layout, int width, int height, int max_batch, int max_width) {
  GValue shape = G_VALUE_INIT;
  gst_value_array_init(&shape, 4);
  auto add_side = [&](int v, int max) {
    if (v > 0)
      append_int(&shape, v);
    else
      append_range(&shape, 1, max);
  };
  if (max_batch > 1)
    append_range(&shape, 1, max_batch);
  else
    append_int(&shape, 1);
  if (layout == wv::Layout::nchw) append_int(&shape, 3);
  add_side(height, wv::kMaxImageSide);
  add_side(width, max_width);
  if (layout == wv::Layout::nhwc) append_int(&shape, 3);
  GstStructure* s = gst_structure_new("tensor/x-raw", "dtype", G_TYPE_STRING, "float32", nullptr);
  gst_structure_take_value(s, "shape", &shape);
  return s;
}

// Closest value to `want` that `v` (an int, int range or list of ints) allows.
int fit_dim(const GValue* v, int want) {
  if (G_VALUE_HOLDS_INT(v)) return g_value_get_int(v);
  if (GST_VALUE_HOLDS_INT_RANGE(v)) {
    const int lo = gst_value_get_int_range_min(v), hi = gst_value_get_int_range_max(v);
    const int step = std::max(1, gst_value_get_int_range_step(v));
    int x = std::clamp(want, lo, hi);
    x = lo + (x - lo) / step * step;
    return x;
  }
  if (GST_VALUE_HOLDS_LIST(v)) {
    int best = want;
    long best_dist = -1;
    for (guint i = 0; i < gst_value_list_get_size(v); ++i) {
      const GValue* item = gst_value_list_get_value(v, i);
      if (!G_VALUE_HOLDS_INT(item)) continue;
      const long d = std::labs(static_cast<long>(g_value_get_int(item)) - want);
      if (best_dist < 0 || d < best_dist) {
        best = g_value_get_int(item);
        best_dist = d;
      }
    }
    return best;
  }
  return want;
}

int round_up(int v, int multiple) {
  if (multiple <= 1) return v;
  return std::min(wv::kMaxImageSide, (v + multiple - 1) / multiple * multiple);
}

// A fixed 4-D int shape from fixed caps, or false.
bool fixed_shape(const GstStructure* s, std::array<int, 4>& out) {
  const GValue* shape = gst_structure_get_value(s, "shape");
  if (shape == nullptr || !GST_VALUE_HOLDS_ARRAY(shape) || gst_value_array_get_size(shape) != 4) return false;
  for (guint i = 0; i < 4; ++i) {
    const GValue* d = gst_value_array_get_value(shape, i);
    if (!G_VALUE_HOLDS_INT(d)) return false;
    out[i] = g_value_get_int(d);
  }
  return true;
}

}  // namespace

static GstCaps* gst_weave_convert_transform_caps(GstBaseTransform* bt, GstPadDirection direction,
                                                 GstCaps* caps, GstCaps* filter) {
  GstCaps* result = nullptr;
  if (direction == GST_PAD_SINK) {
    if (gst_caps_is_empty(caps)) {
      result = gst_caps_new_empty();
    } else {
      ConvertState& s = st(bt);
      std::lock_guard lock(s.lock);
      result = gst_caps_new_full(
          output_structure(s.props.layout, s.props.width, s.props.height, s.rois ? s.max_batch : 1,
                           s.rois ? s.max_width : wv::kMaxImageSide),
          nullptr);
    }
  } else {
    // Any frame size converts to any tensor size, so upstream may offer whatever it has.
    result = gst_static_pad_template_get_caps(&sink_template);
  }
  if (filter != nullptr) {
    GstCaps* tmp = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(result);
    result = tmp;
  }
  GST_DEBUG_OBJECT(bt, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
                   direction == GST_PAD_SINK ? "sink" : "src", caps, result);
  return result;
}

static GstCaps* gst_weave_convert_fixate_caps(GstBaseTransform* bt, GstPadDirection direction, GstCaps* caps,
                                              GstCaps* othercaps) {
  if (direction != GST_PAD_SINK) return gst_caps_fixate(othercaps);
  othercaps = gst_caps_truncate(othercaps);
  if (gst_caps_is_empty(othercaps)) return othercaps;
  othercaps = gst_caps_make_writable(othercaps);
  GstStructure* out = gst_caps_get_structure(othercaps, 0);

  GstVideoInfo info;
  int want_w = 0, want_h = 0;
  if (gst_video_info_from_caps(&info, caps)) {
    want_w = GST_VIDEO_INFO_WIDTH(&info);
    want_h = GST_VIDEO_INFO_HEIGHT(&info);
  }
  ConvertState& s = st(bt);
  wv::Layout layout;
  bool rois = false;
  {
    std::lock_guard lock(s.lock);
    layout = s.props.layout;
    rois = s.rois;
    if (s.max_side > 0 && std::max(want_w, want_h) > s.max_side) {
      // Keep the aspect ratio (PaddleOCR's limit_side_len), then round to the multiple.
      const double f = static_cast<double>(s.max_side) / std::max(want_w, want_h);
      want_w = std::max(1, static_cast<int>(want_w * f));
      want_h = std::max(1, static_cast<int>(want_h * f));
    }
    want_w = round_up(want_w, s.multiple);
    want_h = round_up(want_h, s.multiple);
    if (rois) {
      // Crops: as tall as the model or the property says (PP-OCR's 48 otherwise); a width left
      // open by downstream is chosen per batch, up to max-width.
      want_h = s.props.height > 0 ? s.props.height : 48;
      want_w = s.max_width;
    }
  }
  const DimIndex idx = dim_index(layout);
  const GValue* shape = gst_structure_get_value(out, "shape");
  if (shape != nullptr && GST_VALUE_HOLDS_ARRAY(shape) && gst_value_array_get_size(shape) == 4) {
    if (rois) {
      const bool fixed_width = G_VALUE_HOLDS_INT(gst_value_array_get_value(shape, idx.w));
      std::lock_guard lock(s.lock);
      s.width_fixed = fixed_width;
    }
    if (!gst_value_is_fixed(shape)) {
      GValue fixed = G_VALUE_INIT;
      gst_value_array_init(&fixed, 4);
      for (int i = 0; i < 4; ++i) {
        const GValue* d = gst_value_array_get_value(shape, i);
        const int want = i == idx.h ? want_h : i == idx.w ? want_w : i == idx.c ? 3 : 1;
        append_int(&fixed, fit_dim(d, want));
      }
      gst_structure_take_value(out, "shape", &fixed);
    }
  }
  if (!gst_structure_has_field(out, "name")) {
    gst_structure_set(out, "name", G_TYPE_STRING, "input", nullptr);
  } else if (!gst_value_is_fixed(gst_structure_get_value(out, "name"))) {
    gst_structure_fixate_field_string(out, "name", "input");
  }
  othercaps = gst_caps_fixate(othercaps);
  GST_DEBUG_OBJECT(bt, "fixated to %" GST_PTR_FORMAT, othercaps);
  return othercaps;
}

static gboolean gst_weave_convert_set_caps(GstBaseTransform* bt, GstCaps* incaps, GstCaps* outcaps) {
  ConvertState& s = st(bt);
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, incaps)) {
    GST_ERROR_OBJECT(bt, "cannot parse input caps %" GST_PTR_FORMAT, incaps);
    return FALSE;
  }
  if (!wv::pixel_format_from_name(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)))) {
    GST_ERROR_OBJECT(bt, "unsupported video format in %" GST_PTR_FORMAT, incaps);
    return FALSE;
  }
  const GstStructure* out = gst_caps_get_structure(outcaps, 0);
  std::array<int, 4> shape{};
  const char* dtype = gst_structure_get_string(out, "dtype");
  if (!fixed_shape(out, shape) || dtype == nullptr || std::string(dtype) != "float32") {
    GST_ERROR_OBJECT(bt, "output caps need dtype float32 and a fixed 4-D shape: %" GST_PTR_FORMAT, outcaps);
    return FALSE;
  }
  std::lock_guard lock(s.lock);
  const DimIndex idx = dim_index(s.props.layout);
  if ((shape[0] != 1 && !s.rois) || shape[0] < 1 || shape[idx.c] != 3 || shape[idx.h] <= 0 ||
      shape[idx.w] <= 0 || shape[idx.h] > wv::kMaxImageSide || shape[idx.w] > wv::kMaxImageSide) {
    GST_ERROR_OBJECT(bt, "output shape <%d,%d,%d,%d> does not fit layout %s (batch 1, 3 channels)", shape[0],
                     shape[1], shape[2], shape[3], s.props.layout == wv::Layout::nchw ? "nchw" : "nhwc");
    return FALSE;
  }
  s.in_info = info;
  s.out_width = shape[idx.w];
  s.out_height = shape[idx.h];
  s.out_dims = weave::Dims{shape[0], shape[1], shape[2], shape[3]};
  GST_INFO_OBJECT(bt, "%s %dx%d -> tensor %dx%d", gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)),
                  GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info), s.out_width, s.out_height);
  return TRUE;
}

static gboolean gst_weave_convert_transform_size(GstBaseTransform* bt, GstPadDirection direction,
                                                 GstCaps* caps, gsize size, GstCaps* othercaps,
                                                 gsize* othersize) {
  (void)caps;
  (void)size;
  if (direction == GST_PAD_SINK) {
    std::array<int, 4> shape{};
    if (!fixed_shape(gst_caps_get_structure(othercaps, 0), shape)) return FALSE;
    gsize n = sizeof(float);
    for (int d : shape) {
      if (d <= 0) return FALSE;
      n *= static_cast<gsize>(d);
    }
    *othersize = n;
    return TRUE;
  }
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, othercaps)) return FALSE;
  *othersize = GST_VIDEO_INFO_SIZE(&info);
  GST_LOG_OBJECT(bt, "src size %" G_GSIZE_FORMAT, *othersize);
  return TRUE;
}

static GstFlowReturn gst_weave_convert_transform(GstBaseTransform* bt, GstBuffer* inbuf, GstBuffer* outbuf) {
  ConvertState& s = st(bt);
  const auto t0 = weave::stream::WorkTime::Clock::now();
  wv::PreprocessSpec spec;
  GstVideoInfo info;
  {
    std::lock_guard lock(s.lock);
    spec = s.props;
    spec.width = s.out_width;
    spec.height = s.out_height;
    info = s.in_info;
  }
  const auto format = wv::pixel_format_from_name(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)));
  if (!format || spec.width <= 0) {
    GST_ELEMENT_ERROR(bt, CORE, NEGOTIATION, ("weaveconvert: caps were not negotiated"), (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }

  GstVideoFrame frame;
  if (!gst_video_frame_map(&frame, &info, inbuf, GST_MAP_READ)) {
    GST_ELEMENT_ERROR(bt, STREAM, FORMAT,
                      ("weaveconvert: input buffer does not hold a %s %dx%d frame",
                       gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)), GST_VIDEO_INFO_WIDTH(&info),
                       GST_VIDEO_INFO_HEIGHT(&info)),
                      (nullptr));
    return GST_FLOW_ERROR;
  }
  auto img = weave::caps::image_view(frame);
  GstMapInfo out;
  if (!gst_buffer_map(outbuf, &out, GST_MAP_WRITE)) {
    gst_video_frame_unmap(&frame);
    GST_ELEMENT_ERROR(bt, RESOURCE, WRITE, ("weaveconvert: cannot map the output buffer"), (nullptr));
    return GST_FLOW_ERROR;
  }
  const std::size_t n = wv::output_elements(spec);
  weave::Expected<wv::Letterbox> lb = weave::make_error("no image");
  if (!img) {
    lb = img.error();
  } else {
    if (out.size < n * sizeof(float)) {
      lb = weave::make_error("output buffer of ", out.size, " bytes is smaller than the tensor (",
                             n * sizeof(float), ")");
    } else if (reinterpret_cast<std::uintptr_t>(out.data) % alignof(float) != 0) {
      // Buffer pools align far more than this; a misaligned buffer goes through a copy.
      std::vector<float> tmp(n);
      lb = wv::preprocess(*img, spec, tmp);
      if (lb) std::memcpy(out.data, tmp.data(), n * sizeof(float));
    } else {
      lb = wv::preprocess(*img, spec, std::span<float>(reinterpret_cast<float*>(out.data), n));
    }
  }
  gst_buffer_unmap(outbuf, &out);
  gst_video_frame_unmap(&frame);
  if (!lb) {
    GST_ELEMENT_ERROR(bt, STREAM, FAILED, ("weaveconvert: %s", lb.message().c_str()), (nullptr));
    return GST_FLOW_ERROR;
  }

  weave::caps::TensorOrigin origin;
  origin.frame_width = GST_VIDEO_INFO_WIDTH(&info);
  origin.frame_height = GST_VIDEO_INFO_HEIGHT(&info);
  origin.input_width = spec.width;
  origin.input_height = spec.height;
  origin.geometry = *lb;
  weave::caps::set_tensor_origin(outbuf, origin);
  s.work.count_frame();
  s.work.add_since(t0);

  GstStructure* geo = gst_structure_new("letterbox", "scale-x", G_TYPE_DOUBLE, lb->scale_x, "scale-y",
                                        G_TYPE_DOUBLE, lb->scale_y, "offset-x", G_TYPE_INT, lb->offset_x,
                                        "offset-y", G_TYPE_INT, lb->offset_y, "width", G_TYPE_INT,
                                        lb->content_width, "height", G_TYPE_INT, lb->content_height, nullptr);
  gchar* text = gst_structure_to_string(geo);
  gst_structure_free(geo);
  {
    std::lock_guard lock(s.lock);
    if (s.letterbox != text) {
      GST_INFO_OBJECT(bt, "geometry: %s", text);
      s.letterbox = text;
    }
  }
  g_free(text);
  return GST_FLOW_OK;
}

// ---------------------------------------------------------------------------------------------
// mode=rois: batches of crops, one generate_output call per batch

static void drop_crops(ConvertState& s) {
  if (s.crop_input != nullptr) gst_buffer_unref(s.crop_input);
  s.crop_input = nullptr;
  s.regions.clear();
  s.batches.clear();
  s.next_batch = 0;
}

// Plans the crops of the queued frame. False (and the frame handed on as a GAP) when it has none.
static GstFlowReturn plan_frame(GstBaseTransform* bt, ConvertState& s, const wv::CropSpec& spec,
                                const GstVideoInfo& info, bool& any) {
  GstBuffer* in = bt->queued_buf;
  bt->queued_buf = nullptr;
  any = false;
  if (in == nullptr) return GST_FLOW_OK;
  s.regions = weave::caps::read_regions(in, s.roi_type);
  auto batches = wv::plan_crops(s.regions, GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info), spec);
  if (!batches) {
    gst_buffer_unref(in);
    GST_ELEMENT_ERROR(bt, STREAM, FAILED, ("weaveconvert: %s", batches.message().c_str()), (nullptr));
    return GST_FLOW_ERROR;
  }
  s.work.count_frame();
  if (batches->empty()) {
    // Nothing to crop: downstream learns that this frame's time has no tensor.
    GST_LOG_OBJECT(bt, "no region on the frame at %" GST_TIME_FORMAT ": gap",
                   GST_TIME_ARGS(GST_BUFFER_PTS(in)));
    if (GST_BUFFER_PTS_IS_VALID(in))
      gst_pad_push_event(GST_BASE_TRANSFORM_SRC_PAD(bt),
                         gst_event_new_gap(GST_BUFFER_PTS(in), GST_BUFFER_DURATION(in)));
    gst_buffer_unref(in);
    s.regions.clear();
    return GST_FLOW_OK;
  }
  s.crop_input = in;
  s.batches = std::move(*batches);
  s.next_batch = 0;
  any = true;
  return GST_FLOW_OK;
}

static GstFlowReturn gst_weave_convert_generate_output(GstBaseTransform* bt, GstBuffer** outbuf) {
  ConvertState& s = st(bt);
  *outbuf = nullptr;
  wv::CropSpec spec;
  GstVideoInfo info;
  {
    std::unique_lock lock(s.lock);
    if (!s.rois) {
      lock.unlock();  // the frame path (transform) takes the lock itself
      return GST_BASE_TRANSFORM_CLASS(gst_weave_convert_parent_class)->generate_output(bt, outbuf);
    }
    spec.height = s.out_height;
    spec.width = s.width_fixed ? s.out_width : 0;
    spec.min_width = std::min(s.min_width, s.max_width);
    spec.max_width = s.max_width;
    spec.multiple = s.multiple;
    spec.max_batch = s.max_batch;
    spec.norm = s.props;
    info = s.in_info;
  }
  if (spec.height <= 0) {
    GST_ELEMENT_ERROR(bt, CORE, NEGOTIATION, ("weaveconvert: caps were not negotiated"), (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const auto t0 = weave::stream::WorkTime::Clock::now();
  if (s.next_batch >= s.batches.size()) {
    drop_crops(s);
    bool any = false;
    if (GstFlowReturn r = plan_frame(bt, s, spec, info, any); r != GST_FLOW_OK || !any) return r;
  }
  const std::size_t k = s.next_batch++;
  const wv::CropBatch& batch = s.batches[k];
  const DimIndex idx = dim_index(spec.norm.layout);
  weave::Dims dims{batch.size(), 3, spec.height, batch.width};
  if (idx.c == 3) dims = weave::Dims{batch.size(), spec.height, batch.width, 3};
  if (!(dims == s.out_dims)) {
    GstCaps* current = gst_pad_get_current_caps(GST_BASE_TRANSFORM_SRC_PAD(bt));
    const GstStructure* cs = current != nullptr ? gst_caps_get_structure(current, 0) : nullptr;
    const char* name = cs != nullptr ? gst_structure_get_string(cs, "name") : nullptr;
    auto caps = weave::caps::caps_from_dims(name != nullptr ? name : "input", weave::DType::float32, dims);
    if (current != nullptr) gst_caps_unref(current);
    if (!gst_base_transform_update_src_caps(bt, caps.get())) {
      drop_crops(s);
      GST_ELEMENT_ERROR(
          bt, CORE, NEGOTIATION,
          ("weaveconvert: downstream refused crops of shape %s", weave::caps::shape_text(dims).c_str()),
          (nullptr));
      return GST_FLOW_NOT_NEGOTIATED;
    }
    s.out_dims = dims;
  }
  const std::size_t n = wv::crop_elements(batch, spec);
  GstBuffer* out = weave::gst::output_buffer_new(n * sizeof(float));
  GstVideoFrame frame;
  if (out == nullptr || !gst_video_frame_map(&frame, &info, s.crop_input, GST_MAP_READ)) {
    if (out != nullptr) gst_buffer_unref(out);
    drop_crops(s);
    GST_ELEMENT_ERROR(bt, STREAM, FORMAT, ("weaveconvert: cannot map the frame or allocate %zu crops", n),
                      (nullptr));
    return GST_FLOW_ERROR;
  }
  weave::Status st = weave::Status();
  GstMapInfo map;
  auto img = weave::caps::image_view(frame);
  if (!img) {
    st = img.error();
  } else if (!gst_buffer_map(out, &map, GST_MAP_WRITE)) {
    st = weave::make_error("cannot map the output buffer");
  } else {
    st =
        wv::crop_batch(*img, s.regions, batch, spec, std::span<float>(reinterpret_cast<float*>(map.data), n));
    gst_buffer_unmap(out, &map);
  }
  gst_video_frame_unmap(&frame);
  if (!st) {
    gst_buffer_unref(out);
    drop_crops(s);
    GST_ELEMENT_ERROR(bt, STREAM, FAILED, ("weaveconvert: %s", st.message().c_str()), (nullptr));
    return GST_FLOW_ERROR;
  }
  gst_buffer_copy_into(out, s.crop_input, GST_BUFFER_COPY_TIMESTAMPS, 0, static_cast<gsize>(-1));
  weave::caps::TensorOrigin origin;
  origin.frame_width = GST_VIDEO_INFO_WIDTH(&info);
  origin.frame_height = GST_VIDEO_INFO_HEIGHT(&info);
  origin.input_width = batch.width;
  origin.input_height = spec.height;
  for (int r : batch.regions) origin.roi_ids.push_back(s.regions[static_cast<std::size_t>(r)].id);
  origin.batch = static_cast<int>(k);
  origin.batches = static_cast<int>(s.batches.size());
  weave::caps::set_tensor_origin(out, origin);
  s.crops += static_cast<guint64>(batch.size());
  s.work.add_since(t0);
  if (s.next_batch >= s.batches.size()) drop_crops(s);
  *outbuf = out;
  return GST_FLOW_OK;
}

static gboolean gst_weave_convert_stop(GstBaseTransform* bt) {
  drop_crops(st(bt));
  return TRUE;
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
      case PROP_MAX_WIDTH:
        s.max_width = g_value_get_int(value);
        renegotiate = true;
        break;
      case PROP_MAX_SIDE:
        s.max_side = g_value_get_int(value);
        renegotiate = true;
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
    case PROP_MAX_WIDTH:
      g_value_set_int(value, s.max_width);
      break;
    case PROP_MAX_SIDE:
      g_value_set_int(value, s.max_side);
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
                       1, 4096, kDefaultMultiple, rw_ready));
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
          1, 1024, kDefaultMaxBatch, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_MIN_WIDTH,
      g_param_spec_int("min-width", "Min width",
                       "mode=rois with a width chosen per batch: the least tensor width", 1,
                       wv::kMaxImageSide, kDefaultMinWidth, rw_playing));
  g_object_class_install_property(
      gobject_class, PROP_MAX_WIDTH,
      g_param_spec_int(
          "max-width", "Max width",
          "mode=rois with a width chosen per batch: the greatest tensor width (the planned bound; "
          "wider crops are squeezed)",
          1, wv::kMaxImageSide, kDefaultMaxWidth, rw_ready));
  g_object_class_install_property(
      gobject_class, PROP_MAX_SIDE,
      g_param_spec_int(
          "max-side", "Max side",
          "mode=frame, when the tensor takes the video's own size: scale it down keeping the aspect "
          "ratio so that its longer side is at most this, before rounding to multiple (0 = no limit; "
          "PP-OCR's detector uses 960)",
          0, wv::kMaxImageSide, 0, rw_ready));
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
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);

  bt_class->transform_caps = GST_DEBUG_FUNCPTR(gst_weave_convert_transform_caps);
  bt_class->fixate_caps = GST_DEBUG_FUNCPTR(gst_weave_convert_fixate_caps);
  bt_class->set_caps = GST_DEBUG_FUNCPTR(gst_weave_convert_set_caps);
  bt_class->transform_size = GST_DEBUG_FUNCPTR(gst_weave_convert_transform_size);
  bt_class->transform = GST_DEBUG_FUNCPTR(gst_weave_convert_transform);
  bt_class->generate_output = GST_DEBUG_FUNCPTR(gst_weave_convert_generate_output);
  bt_class->stop = GST_DEBUG_FUNCPTR(gst_weave_convert_stop);
  bt_class->passthrough_on_same_caps = FALSE;

  gst_type_mark_as_plugin_api(gst_weave_layout_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_weave_channel_order_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_weave_resize_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_weave_convert_mode_get_type(), static_cast<GstPluginAPIFlags>(0));
  GST_DEBUG_CATEGORY_INIT(weave_convert_debug, "weaveconvert", 0, "Weave video to tensor converter");
}

GST_ELEMENT_REGISTER_DEFINE(weaveconvert, "weaveconvert", GST_RANK_NONE, GST_TYPE_WEAVE_CONVERT);
