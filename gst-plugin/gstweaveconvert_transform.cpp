// weaveconvert's buffers: the whole frame into one tensor (transform), or, with mode=rois, the
// frame's regions of interest into batches of crops, one generate_output call per batch. Every
// tensor carries where it came from (frame size, geometry, regions) as a meta for weavemeta.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "caps/roi_meta.h"
#include "caps/tensor_caps.h"
#include "caps/tensor_origin.h"
#include "caps/video_frame.h"
#include "gst-plugin/gstweaveconvert_private.h"
#include "gst-plugin/gstweavememory.h"

namespace weave::gst::convert {

GstFlowReturn gst_weave_convert_transform(GstBaseTransform* bt, GstBuffer* inbuf, GstBuffer* outbuf) {
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
  if (const int every = s.reclassify_interval.load(); every != s.reclassify.interval())
    s.reclassify = weave::track::ReclassifySchedule(every);
  // Regions of tracks whose read is not due yet are left out (their track's result is reported).
  s.regions = s.reclassify.select(weave::caps::read_regions(in, s.roi_type));
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

GstFlowReturn gst_weave_convert_generate_output(GstBaseTransform* bt, GstBuffer** outbuf) {
  ConvertState& s = st(bt);
  *outbuf = nullptr;
  wv::CropSpec spec;
  GstVideoInfo info;
  {
    std::unique_lock lock(s.lock);
    if (!s.rois) {
      lock.unlock();  // the frame path (transform) takes the lock itself
      return parent_class()->generate_output(bt, outbuf);
    }
    spec.height = s.out_height;
    spec.width = s.width_fixed ? s.out_width : 0;
    spec.min_width = std::min(s.min_width, s.max_width);
    spec.max_width = s.max_width;
    spec.multiple = s.multiple;
    spec.max_batch = s.max_batch;
    spec.width_tolerance = s.width_tolerance;
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

gboolean gst_weave_convert_stop(GstBaseTransform* bt) {
  drop_crops(st(bt));
  return TRUE;
}

}  // namespace weave::gst::convert
