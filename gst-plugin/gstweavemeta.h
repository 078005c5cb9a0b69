// weavemeta: video frames + a model's output tensors -> the same frames with the results as
// GstVideoRegionOfInterestMeta (new regions from a detector, or results on the regions a batch
// of crops came from). A GstAggregator with a `video` and a `tensor` sink pad; frames and
// tensors meet by timestamp. Decoding lives in core/vision (DecoderRegistry), the meta
// conventions in caps/roi_meta.h and caps/tensor_origin.h. See docs/elements.md.
#pragma once

#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_WEAVE_META (gst_weave_meta_get_type())
G_DECLARE_FINAL_TYPE(GstWeaveMeta, gst_weave_meta, GST, WEAVE_META, GstAggregator)

typedef enum {
  GST_WEAVE_META_MODE_DB = 0,
  GST_WEAVE_META_MODE_YOLO = 1,
  GST_WEAVE_META_MODE_YOLOV8 = 2,
  GST_WEAVE_META_MODE_SSD = 3,
  GST_WEAVE_META_MODE_CLASSIFICATION = 4,
  GST_WEAVE_META_MODE_ANGLE = 5,
  GST_WEAVE_META_MODE_CTC = 6,
} GstWeaveMetaMode;
#define GST_TYPE_WEAVE_META_MODE (gst_weave_meta_mode_get_type())
GType gst_weave_meta_mode_get_type(void);

// What a per-region mode reports for a region of a track (weavetrack): core/track/track_results.h.
typedef enum {
  GST_WEAVE_META_TRACK_RESULTS_FRAME = 0,
  GST_WEAVE_META_TRACK_RESULTS_BEST = 1,
  GST_WEAVE_META_TRACK_RESULTS_VOTE = 2,
} GstWeaveMetaTrackResults;
#define GST_TYPE_WEAVE_META_TRACK_RESULTS (gst_weave_meta_track_results_get_type())
GType gst_weave_meta_track_results_get_type(void);

// db: where a box's score is measured (core/vision/text_detection.h).
typedef enum {
  GST_WEAVE_META_SCORE_MODE_FAST = 0,
  GST_WEAVE_META_SCORE_MODE_SLOW = 1,
} GstWeaveMetaScoreMode;
#define GST_TYPE_WEAVE_META_SCORE_MODE (gst_weave_meta_score_mode_get_type())
GType gst_weave_meta_score_mode_get_type(void);

// Text entries of the JSON: each box, or boxes on one line joined (core/vision/text_lines.h).
typedef enum {
  GST_WEAVE_META_MERGE_NONE = 0,
  GST_WEAVE_META_MERGE_LINE = 1,
} GstWeaveMetaMerge;
#define GST_TYPE_WEAVE_META_MERGE (gst_weave_meta_merge_get_type())
GType gst_weave_meta_merge_get_type(void);

G_END_DECLS
