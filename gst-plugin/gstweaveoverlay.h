// weaveoverlay: draws the regions of interest of each video frame (boxes, rotated boxes, and the
// text, class or label found for them) onto the frame. Meta reading is caps/roi_meta.h, drawing
// weave::vision::draw_regions (core/vision/draw.h, OpenCV).
#pragma once

#include <gst/gst.h>
#include <gst/video/gstvideofilter.h>

G_BEGIN_DECLS

#define GST_TYPE_WEAVE_OVERLAY (gst_weave_overlay_get_type())
G_DECLARE_FINAL_TYPE(GstWeaveOverlay, gst_weave_overlay, GST, WEAVE_OVERLAY, GstVideoFilter)

G_END_DECLS
