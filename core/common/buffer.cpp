#include "core/common/buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace weave {

namespace {

// `bytes` rounded up to whole pages.
std::size_t whole_pages(std::size_t bytes) {
  return align_up(bytes, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
}

// An anonymous private mapping of `mapped` bytes (whole pages). MAP_POPULATE hands every page
// over now instead of at its first touch. nullptr on failure.
std::byte* map_pages(std::size_t mapped, bool populate) {
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

// Freed mappings kept for reuse while a PageRecycling lives (see buffer.h).
struct Recycler {
  std::mutex mutex;
  int scopes = 0;
  std::size_t kept = 0;
  std::vector<std::pair<std::byte*, std::size_t>> blocks;  // address, mapped bytes
};

// Never destroyed: blocks are freed from static destructors (the process-wide ParamStore).
Recycler& recycler() {
  static Recycler& r = *new Recycler;
  return r;
}

// A kept block made into `mapped` bytes (whole pages) of zeros, or nullptr when none is kept.
// Best fit: the smallest block that is large enough (its tail unmapped), else the largest,
// grown in place or moved by mremap, its new tail populated now.
std::byte* take_recycled(std::size_t mapped) {
  Recycler& r = recycler();
  std::pair<std::byte*, std::size_t> b{nullptr, 0};
  {
    std::lock_guard lock(r.mutex);
    if (r.blocks.empty()) return nullptr;
    std::size_t best = 0;
    for (std::size_t i = 1; i < r.blocks.size(); ++i) {
      const std::size_t have = r.blocks[i].second, now = r.blocks[best].second;
      const bool fits = have >= mapped, best_fits = now >= mapped;
      if (fits ? (!best_fits || have < now) : (!best_fits && have > now)) best = i;
    }
    b = r.blocks[best];
    r.blocks[best] = r.blocks.back();
    r.blocks.pop_back();
    r.kept -= b.second;
  }
  auto [p, have] = b;
  if (have > mapped) {
    munmap(p + mapped, have - mapped);
  } else if (have < mapped) {
    void* q = mremap(p, have, mapped, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) {
      munmap(p, have);
      return nullptr;
    }
    p = static_cast<std::byte*>(q);
#ifdef MADV_POPULATE_WRITE
    madvise(p + have, mapped - have, MADV_POPULATE_WRITE);  // fresh zero pages at once; best effort
#endif
  }
  std::memset(p, 0, std::min(have, mapped));
  return p;
}

}  // namespace

PageRecycling::PageRecycling() {
  Recycler& r = recycler();
  std::lock_guard lock(r.mutex);
  ++r.scopes;
}

PageRecycling::~PageRecycling() {
  Recycler& r = recycler();
  std::vector<std::pair<std::byte*, std::size_t>> left;
  {
    std::lock_guard lock(r.mutex);
    if (--r.scopes > 0) return;
    left.swap(r.blocks);
    r.kept = 0;
  }
  for (auto [p, mapped] : left) munmap(p, mapped);
}

void AlignedBuffer::Free::operator()(std::byte* p) const {
  if (mapped == 0) {
    std::free(p);
    return;
  }
  Recycler& r = recycler();
  {
    std::lock_guard lock(r.mutex);
    if (r.scopes > 0 && r.kept + mapped <= kRecycleBytes) {
      r.blocks.emplace_back(p, mapped);
      r.kept += mapped;
      return;
    }
  }
  munmap(p, mapped);
}

AlignedBuffer::AlignedBuffer(std::size_t bytes, bool zero) : size_(bytes) {
  if (bytes == 0) return;
  if (zero && bytes >= kPopulateBytes) {
    const std::size_t mapped = whole_pages(bytes);
    std::byte* p = take_recycled(mapped);
    if (p == nullptr) p = map_pages(mapped, true);
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
  const std::size_t mapped = whole_pages(bytes);
  std::byte* p = map_pages(mapped, false);
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
