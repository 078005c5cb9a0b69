// Output frames of weaveinfer: GstBuffers the model writes into directly, 64-byte aligned.
// Frames of kPagedFrameBytes and more are a weave::PageBuffer each (core/common/buffer.h),
// unmapped when the buffer's last reference goes, so elements on their own streaming threads
// do not each keep freed frames in their malloc arenas (measured: 8 PP-OCR rec elements with
// 1.06 MB frames, ~1 MB more per element; docs/performance.md). The page faults of a fresh
// mapping are noise next to a model that produces a quarter megabyte or more.
#pragma once

#include <gst/gst.h>

#include <cstddef>

namespace weave::gst {

inline constexpr std::size_t kPagedFrameBytes = 256 * 1024;

// A buffer of `bytes` (> 0), 64-byte aligned (page-aligned when paged); nullptr when the
// memory cannot be had.
GstBuffer* output_buffer_new(std::size_t bytes);

}  // namespace weave::gst
