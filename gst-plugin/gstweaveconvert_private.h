// What the files of weaveconvert share: the element's C++ state and its base-class vfuncs.
// gstweaveconvert.cpp is the element (properties, registration), gstweaveconvert_caps.cpp the
// negotiation (which tensor shape, from what downstream accepts), gstweaveconvert_transform.cpp
// the buffers (the whole frame, or batches of crops of its regions).
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "core/common/dims.h"
#include "core/stream/work_time.h"
#include "core/track/reclassify.h"
#include "core/vision/crops.h"
#include "core/vision/preprocess.h"
#include "gst-plugin/gstweaveconvert.h"
#include "gst-plugin/instance_state.h"

GST_DEBUG_CATEGORY_EXTERN(weave_convert_debug);
#define GST_CAT_DEFAULT weave_convert_debug

namespace weave::gst::convert {

namespace wv = weave::vision;

inline constexpr int kDefaultMultiple = 1;
inline constexpr int kDefaultMaxBatch = 16;
inline constexpr int kDefaultMinWidth = 8;
inline constexpr int kDefaultMaxWidth = 960;

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
  double width_tolerance = 1.0;  // crops of widths within this fraction share a batch (1: any)
  int max_side = 0;          // mode=frame: the video size as tensor size, scaled down to this (0 = no limit)
  bool width_fixed = false;  // negotiated: the crop width is fixed (out_width), else per batch
  // Crops of the frame being converted (streaming thread only): its batches go out one per
  // generate_output call.
  GstBuffer* crop_input = nullptr;
  std::vector<wv::Region> regions;
  std::vector<wv::CropBatch> batches;
  std::size_t next_batch = 0;
  weave::Dims out_dims;  // of the caps last sent
  // reclassify-interval (property) and the schedule it makes (streaming thread only).
  std::atomic<int> reclassify_interval{0};
  weave::track::ReclassifySchedule reclassify;

  // Statistics
  weave::stream::WorkTime work;
  std::atomic<guint64> crops{0};
};

// Index of the height, width and channel dims in the 4-D shape for a layout.
struct DimIndex {
  int h, w, c;
};
inline DimIndex dim_index(wv::Layout layout) {
  return layout == wv::Layout::nchw ? DimIndex{2, 3, 1} : DimIndex{1, 2, 3};
}

// gstweaveconvert_caps.cpp: the pad templates and negotiation.
extern GstStaticPadTemplate sink_template;
extern GstStaticPadTemplate src_template;
GstCaps* gst_weave_convert_transform_caps(GstBaseTransform* bt, GstPadDirection direction, GstCaps* caps,
                                          GstCaps* filter);
GstCaps* gst_weave_convert_fixate_caps(GstBaseTransform* bt, GstPadDirection direction, GstCaps* caps,
                                       GstCaps* othercaps);
gboolean gst_weave_convert_set_caps(GstBaseTransform* bt, GstCaps* incaps, GstCaps* outcaps);
gboolean gst_weave_convert_transform_size(GstBaseTransform* bt, GstPadDirection direction, GstCaps* caps,
                                          gsize size, GstCaps* othercaps, gsize* othersize);

// gstweaveconvert_transform.cpp: frames and crops.
GstFlowReturn gst_weave_convert_transform(GstBaseTransform* bt, GstBuffer* inbuf, GstBuffer* outbuf);
GstFlowReturn gst_weave_convert_generate_output(GstBaseTransform* bt, GstBuffer** outbuf);
gboolean gst_weave_convert_stop(GstBaseTransform* bt);

// gstweaveconvert.cpp: GstBaseTransform's own vfuncs (the frame path of generate_output).
GstBaseTransformClass* parent_class();

}  // namespace weave::gst::convert

struct _GstWeaveConvert {
  GstBaseTransform parent;
  weave::gst::InstanceState<weave::gst::convert::ConvertState> state;
};

namespace weave::gst::convert {

inline ConvertState& st(GstWeaveConvert* self) {
  return *self->state;
}
inline ConvertState& st(GstBaseTransform* bt) {
  return *GST_WEAVE_CONVERT(bt)->state;
}

}  // namespace weave::gst::convert
