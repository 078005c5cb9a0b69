// weavemeta's enums: its modes (named as weave::vision::DecoderRegistry knows them) and what a
// per-region mode reports for a region of a track, db's score mode and the JSON's line joining.
#include "gst-plugin/gstweavemeta.h"

GType gst_weave_meta_mode_get_type(void) {
  static GType type = 0;
  // Nicks are the names of the modes in weave::vision::DecoderRegistry.
  static const GEnumValue values[] = {
      {GST_WEAVE_META_MODE_DB,
       "Text boxes of a DB text detector (PP-OCR det) <1,1,H,W>: new regions \"text\"", "db"},
      {GST_WEAVE_META_MODE_YOLO, "YOLOv5/v7 boxes <1,N,5+C> with NMS: new regions named by label", "yolo"},
      {GST_WEAVE_META_MODE_YOLOV8, "YOLOv8 boxes <1,4+C,N> with NMS: new regions named by label", "yolov8"},
      {GST_WEAVE_META_MODE_SSD, "SSD DetectionOutput <1,1,N,7> with NMS: new regions named by label", "ssd"},
      {GST_WEAVE_META_MODE_CLASSIFICATION, "Class of each cropped region <N,C>: param named param-name",
       "classification"},
      {GST_WEAVE_META_MODE_ANGLE,
       "Direction of each cropped region <N,C> (labels are degrees): param \"angle\"", "angle"},
      {GST_WEAVE_META_MODE_CTC, "Text of each cropped region <N,T,C>, CTC with a keys file: param \"text\"",
       "ctc"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstWeaveMetaMode", values));
  return type;
}

GType gst_weave_meta_track_results_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_WEAVE_META_TRACK_RESULTS_FRAME, "Each frame reports its own read of the region", "frame"},
      {GST_WEAVE_META_TRACK_RESULTS_BEST, "The track's read with the highest score so far", "best"},
      {GST_WEAVE_META_TRACK_RESULTS_VOTE,
       "The track's read whose scores sum highest so far (each frame votes with its score)", "vote"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstWeaveMetaTrackResults", values));
  return type;
}

GType gst_weave_meta_score_mode_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_WEAVE_META_SCORE_MODE_FAST, "Mean probability inside the box's rotated rectangle", "fast"},
      {GST_WEAVE_META_SCORE_MODE_SLOW, "Mean probability inside the text region's own outline", "slow"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstWeaveMetaScoreMode", values));
  return type;
}

GType gst_weave_meta_merge_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_WEAVE_META_MERGE_NONE, "One JSON text entry per box", "none"},
      {GST_WEAVE_META_MERGE_LINE,
       "Boxes on one text line joined into one entry, its boxes listed under \"words\"", "line"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstWeaveMetaMerge", values));
  return type;
}
