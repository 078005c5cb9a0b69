// Output frames of weaveinfer: GstBuffers the model writes into directly, 64-byte aligned.
//
// Frames of kPagedFrameBytes and more are an anonymous mapping of their own, unmapped when the
// buffer's last reference goes. Freed malloc blocks would otherwise stay with the process:
// glibc raises its mmap threshold after the first large free, so later frames come from the
// heap of the streaming thread's malloc arena, and every element (one thread each) ends up
// keeping a frame or two of freed memory (measured: 8 PP-OCR rec elements, 1.06 MB frames,
// ~1 MB more per element; docs/performance.md). A mapping costs a page fault per 4 KiB
// written, noise next to a model that produces megabytes.
#pragma once

#include <gst/gst.h>

#include <cstddef>

namespace weave::gst {

inline constexpr std::size_t kPagedFrameBytes = 256 * 1024;

// A buffer of `bytes` (> 0), 64-byte aligned (page-aligned when paged); nullptr when the
// memory cannot be had.
GstBuffer* output_buffer_new(std::size_t bytes);

}  // namespace weave::gst
