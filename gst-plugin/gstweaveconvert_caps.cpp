// weaveconvert's negotiation: the tensor caps it offers for a video (a fixed size from the
// properties, else ranges), the shape it fixes from what downstream accepts (the video's own
// size rounded to `multiple` and limited by `max-side`, or crops as tall as the model wants),
// and the buffer sizes that follow.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>

#include "gst-plugin/gstweaveconvert_private.h"

namespace weave::gst::convert {

GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-raw, format=(string){ RGB, BGR, RGBA, BGRA, RGBx, BGRx, GRAY8, I420, NV12 }, "
                    "width=(int)[1, 16384], height=(int)[1, 16384], framerate=(fraction)[0/1, MAX]"));
GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("tensor/x-raw, dtype=(string)float32"));

namespace {

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

GstCaps* gst_weave_convert_transform_caps(GstBaseTransform* bt, GstPadDirection direction, GstCaps* caps,
                                          GstCaps* filter) {
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

GstCaps* gst_weave_convert_fixate_caps(GstBaseTransform* bt, GstPadDirection direction, GstCaps* caps,
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

gboolean gst_weave_convert_set_caps(GstBaseTransform* bt, GstCaps* incaps, GstCaps* outcaps) {
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

gboolean gst_weave_convert_transform_size(GstBaseTransform* bt, GstPadDirection direction, GstCaps* caps,
                                          gsize size, GstCaps* othercaps, gsize* othersize) {
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

}  // namespace weave::gst::convert
