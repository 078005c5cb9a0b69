#include "core/common/buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace weave {

namespace {

// An anonymous private mapping of `bytes` rounded up to pages; `mapped` gets its length.
// MAP_POPULATE hands every page over now instead of at its first touch. nullptr on failure.
std::byte* map_pages(std::size_t bytes, bool populate, std::size_t& mapped) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  mapped = align_up(bytes, page);
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

}  // namespace

void AlignedBuffer::Free::operator()(std::byte* p) const {
  if (mapped > 0)
    munmap(p, mapped);
  else
    std::free(p);
}

AlignedBuffer::AlignedBuffer(std::size_t bytes, bool zero) : size_(bytes) {
  if (bytes == 0) return;
  if (zero && bytes >= kPopulateBytes) {
    std::size_t mapped = 0;
    std::byte* p = map_pages(bytes, true, mapped);
    if (p == nullptr) throw std::bad_alloc();
    ptr_ = std::unique_ptr<std::byte[], Free>(p, Free{mapped});
    return;
  }
  void* p = std::aligned_alloc(kAlignment, align_up(bytes));
  if (!p) throw std::bad_alloc();
  if (zero) std::memset(p, 0, align_up(bytes));
  ptr_.reset(static_cast<std::byte*>(p));
}

PageBuffer PageBuffer::map(std::size_t bytes) {
  PageBuffer b;
  if (bytes == 0) return b;
  std::size_t mapped = 0;
  std::byte* p = map_pages(bytes, false, mapped);
  if (p == nullptr) return b;
  b.data_ = p;
  b.size_ = bytes;
  b.mapped_ = mapped;
  return b;
}

PageBuffer::PageBuffer(PageBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      mapped_(std::exchange(o.mapped_, 0)) {}

PageBuffer& PageBuffer::operator=(PageBuffer&& o) noexcept {
  if (this != &o) {
    unmap();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, 0);
  }
  return *this;
}

PageBuffer::~PageBuffer() {
  unmap();
}

void PageBuffer::unmap() noexcept {
  if (data_ != nullptr) munmap(data_, mapped_);
  data_ = nullptr;
  size_ = mapped_ = 0;
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
