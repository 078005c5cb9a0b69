// weaveinfer: runs one model (.onnx or .weave) on tensor streams. The element is three files
// sharing gstweaveinfer_private.h: gstweaveinfer.cpp (properties, state changes, loading),
// gstweaveinfer_pads.cpp (pads, caps, events, queries) and gstweaveinfer_task.cpp (the
// streaming task). What to load and when is core/loader/model_slot.h, the queue and gathering
// core/stream/stream_runner.h, one run per frame core/stream/frame_runner.h, caps logic
// caps/tensor_caps.h. See docs/elements.md.
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_WEAVE_INFER (gst_weave_infer_get_type())
G_DECLARE_FINAL_TYPE(GstWeaveInfer, gst_weave_infer, GST, WEAVE_INFER, GstElement)

// Codec of the artifact weaveinfer writes into its cache when it compiles an ONNX model.
typedef enum {
  GST_WEAVE_COMPRESSION_NONE = 0,
  GST_WEAVE_COMPRESSION_ZLIB = 1,
  GST_WEAVE_COMPRESSION_LZ4 = 2,
  GST_WEAVE_COMPRESSION_ZSTD = 3,
  GST_WEAVE_COMPRESSION_ZLIB_PLANES = 4,
  GST_WEAVE_COMPRESSION_ZSTD_PLANES = 5,
} GstWeaveCompression;
#define GST_TYPE_WEAVE_COMPRESSION (gst_weave_compression_get_type())
GType gst_weave_compression_get_type(void);

// What to drop when the input queue is full.
typedef enum {
  GST_WEAVE_INFER_LEAKY_NONE = 0,        // block upstream (backpressure), drop nothing
  GST_WEAVE_INFER_LEAKY_UPSTREAM = 1,    // drop the incoming buffer
  GST_WEAVE_INFER_LEAKY_DOWNSTREAM = 2,  // drop the oldest queued buffer
} GstWeaveInferLeaky;
#define GST_TYPE_WEAVE_INFER_LEAKY (gst_weave_infer_leaky_get_type())
GType gst_weave_infer_leaky_get_type(void);

G_END_DECLS
