// weavedecode: a passthrough transform on tensor buffers that turns model outputs into results
// (bus messages, JSON lines). The decoding is weave::vision::Decoder (core/vision/decoder.h).
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_WEAVE_DECODE (gst_weave_decode_get_type())
G_DECLARE_FINAL_TYPE(GstWeaveDecode, gst_weave_decode, GST, WEAVE_DECODE, GstBaseTransform)

// Decode modes; each value's nick is the core/vision DecoderRegistry name.
typedef enum { GST_WEAVE_DECODE_MODE_CLASSIFICATION = 0 } GstWeaveDecodeMode;
GType gst_weave_decode_mode_get_type(void);

G_END_DECLS
