#include "gst-plugin/gstweavememory.h"

#include <sys/mman.h>
#include <unistd.h>

#include "core/common/buffer.h"

namespace weave::gst {
namespace {

struct Mapping {
  void* data;
  std::size_t length;
};

void unmap_frame(gpointer user_data) {
  auto* m = static_cast<Mapping*>(user_data);
  munmap(m->data, m->length);
  g_free(m);
}

GstBuffer* paged_buffer_new(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t length = (bytes + page - 1) / page * page;
  void* data = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) return nullptr;
  auto* m = g_new(Mapping, 1);
  *m = Mapping{data, length};
  return gst_buffer_new_wrapped_full(static_cast<GstMemoryFlags>(0), data, length, 0, bytes, m, unmap_frame);
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
