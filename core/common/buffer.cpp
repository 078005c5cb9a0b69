#include "core/common/buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace weave {

void AlignedBuffer::Free::operator()(std::byte* p) const {
  std::free(p);
}

AlignedBuffer::AlignedBuffer(std::size_t bytes, bool zero) : size_(bytes) {
  if (bytes == 0) return;
  void* p = std::aligned_alloc(kAlignment, align_up(bytes));
  if (!p) throw std::bad_alloc();
  if (zero) std::memset(p, 0, align_up(bytes));
  ptr_.reset(static_cast<std::byte*>(p));
}

SharedBytes SharedBytes::from(AlignedBuffer buf) {
  auto owner = std::make_shared<AlignedBuffer>(std::move(buf));
  std::span<const std::byte> view = owner->span();
  return SharedBytes(view, std::shared_ptr<const void>(owner, owner.get()));
}

SharedBytes SharedBytes::copy_of(std::span<const std::byte> bytes) {
  AlignedBuffer buf(bytes.size());
  if (!bytes.empty()) std::memcpy(buf.data(), bytes.data(), bytes.size());
  return from(std::move(buf));
}

}  // namespace weave
