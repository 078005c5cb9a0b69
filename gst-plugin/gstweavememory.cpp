#include "gst-plugin/gstweavememory.h"

#include <memory>

#include "core/common/buffer.h"

namespace weave::gst {
namespace {

void free_frame(gpointer frame) {
  delete static_cast<weave::PageBuffer*>(frame);
}

GstBuffer* paged_buffer_new(std::size_t bytes) {
  auto frame = std::make_unique<weave::PageBuffer>(weave::PageBuffer::map(bytes));
  if (frame->data() == nullptr) return nullptr;
  std::byte* data = frame->data();
  const std::size_t mapped = frame->mapped_size();
  // The GstMemory owns the mapping from here on and unmaps it in free_frame.
  return gst_buffer_new_wrapped_full(static_cast<GstMemoryFlags>(0), data, mapped, 0, bytes, frame.release(),
                                     free_frame);
}

}  // namespace

GstBuffer* output_buffer_new(std::size_t bytes) {
  if (bytes >= kPagedFrameBytes) return paged_buffer_new(bytes);
  GstAllocationParams params;
  gst_allocation_params_init(&params);
  params.align = weave::kAlignment - 1;
  return gst_buffer_new_allocate(nullptr, bytes, &params);
}

}  // namespace weave::gst
