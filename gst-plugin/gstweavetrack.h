// weavetrack: follows the regions of interest of a stream from frame to frame and gives each
// the id of its track (core/track/tracker.h: Kalman-predicted boxes, IoU, optimal assignment,
// two score stages). Meta reading and writing is caps/roi_meta.h.
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_WEAVE_TRACK (gst_weave_track_get_type())
G_DECLARE_FINAL_TYPE(GstWeaveTrack, gst_weave_track, GST, WEAVE_TRACK, GstBaseTransform)

G_END_DECLS
