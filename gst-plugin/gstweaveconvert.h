// weaveconvert: video/x-raw -> tensor/x-raw (float32, NCHW or NHWC), of the whole frame or of its
// regions of interest (a batch of crops). Negotiation and buffer mapping only; the image work is
// weave::vision::preprocess and weave::vision::crop_batch (core/vision/).
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_WEAVE_CONVERT (gst_weave_convert_get_type())
G_DECLARE_FINAL_TYPE(GstWeaveConvert, gst_weave_convert, GST, WEAVE_CONVERT, GstBaseTransform)

// Property enums, registered as GEnum types so gst-inspect-1.0 lists their values.
typedef enum { GST_WEAVE_LAYOUT_NCHW = 0, GST_WEAVE_LAYOUT_NHWC = 1 } GstWeaveLayout;
typedef enum { GST_WEAVE_CHANNEL_ORDER_RGB = 0, GST_WEAVE_CHANNEL_ORDER_BGR = 1 } GstWeaveChannelOrder;
typedef enum { GST_WEAVE_RESIZE_STRETCH = 0, GST_WEAVE_RESIZE_LETTERBOX = 1 } GstWeaveResize;
typedef enum { GST_WEAVE_CONVERT_MODE_FRAME = 0, GST_WEAVE_CONVERT_MODE_ROIS = 1 } GstWeaveConvertMode;

GType gst_weave_layout_get_type(void);
GType gst_weave_channel_order_get_type(void);
GType gst_weave_resize_get_type(void);
GType gst_weave_convert_mode_get_type(void);

G_END_DECLS
