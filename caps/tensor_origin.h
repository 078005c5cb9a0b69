// Where a tensor buffer came from, carried as a meta on it so that results find their frame and
// regions again (weaveconvert writes it, weaveinfer copies it onto its outputs, weavemeta reads
// it):
//   - the video frame's size, the model input's size and the resize geometry between them
//     (input = frame * scale + offset), to map boxes back to frame pixels;
//   - for crops of regions: the ids of the ROI metas the batch rows were cut from, and which of
//     the frame's batches this is (a frame with more regions than a batch holds gives several).
// The meta has no tags: by GStreamer's convention elements that change the content (like
// weaveinfer) copy untagged metas, and copy_untagged_metas() does that.
#pragma once

#include <gst/gst.h>

#include <optional>
#include <vector>

#include "core/vision/preprocess.h"

namespace weave::caps {

struct TensorOrigin {
  int frame_width = 0;
  int frame_height = 0;
  int input_width = 0;
  int input_height = 0;
  vision::Letterbox geometry;
  std::vector<int> roi_ids;  // crops: the ROI behind each batch row
  int batch = 0;             // crops: this tensor is batch `batch` of `batches` for the frame
  int batches = 1;
};

// The meta's API type ("WeaveTensorOriginMetaAPI", no tags).
GType tensor_origin_meta_api_get_type();

// Sets (or replaces) the origin of a writable buffer.
void set_tensor_origin(GstBuffer* buffer, const TensorOrigin& origin);
[[nodiscard]] std::optional<TensorOrigin> tensor_origin(GstBuffer* buffer);

// Copies the metas of `src` whose API has no tags onto `dst` (writable), the way
// GstBaseTransform does by default: they describe the stream, not the bytes.
void copy_untagged_metas(GstBuffer* dst, GstBuffer* src);

}  // namespace weave::caps
