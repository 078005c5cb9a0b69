// Byte storage. `SharedBytes` is an immutable view plus whatever keeps it alive (a heap block,
// an mmap of a .weave file, another factory's params), so params can be shared across
// executors and models without copies. `AlignedBuffer` is an owned, 64-byte aligned block;
// `PageBuffer` an owned block of whole pages that goes back to the system when destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace weave {

inline constexpr std::size_t kAlignment = 64;

[[nodiscard]] inline std::size_t align_up(std::size_t n, std::size_t a = kAlignment) {
  return (n + a - 1) / a * a;
}

// Zeroed blocks of this many bytes or more are mapped with MAP_POPULATE: the kernel hands over
// all their (zeroed) pages in one call instead of one page fault per 4 KiB at the first touch.
// In a virtual machine a fault costs microseconds; packing resnet18's 72 MB of weights took
// about as long in faults as in packing.
inline constexpr std::size_t kPopulateBytes = std::size_t{1} << 20;

// While a PageRecycling lives (anywhere in the process), mapped blocks that are freed are kept
// instead of unmapped, and the next zeroed blocks of kPopulateBytes or more are cut from them
// (zeroed by memset, grown with mremap when short). A Factory holds one while it packs
// weights: the params it drops as their last reader packs them hand their pages on to the
// packed blocks, which otherwise come as fresh pages, each zeroed, charged and mapped by the
// kernel (resnet18: 72 MB packed from 45 MB of params, the population taking about half of
// the packing). The last scope to end unmaps whatever is left; at most kRecycleBytes are kept.
class PageRecycling {
 public:
  PageRecycling();
  ~PageRecycling();
  PageRecycling(const PageRecycling&) = delete;
  PageRecycling& operator=(const PageRecycling&) = delete;
};
inline constexpr std::size_t kRecycleBytes = std::size_t{1} << 30;

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Zero-filled unless zero == false (arenas are written before they are read; their pages are
  // left to be faulted in as they are used).
  explicit AlignedBuffer(std::size_t bytes, bool zero = true);
  [[nodiscard]] std::byte* data() { return ptr_.get(); }
  [[nodiscard]] const std::byte* data() const { return ptr_.get(); }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::span<std::byte> span() { return {ptr_.get(), size_}; }
  [[nodiscard]] std::span<const std::byte> span() const { return {ptr_.get(), size_}; }

 private:
  struct Free {
    Free() noexcept : mapped(0) {}
    explicit Free(std::size_t m) noexcept : mapped(m) {}
    std::size_t mapped;  // bytes of an mmap'd block; 0 = from aligned_alloc
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> ptr_;
  std::size_t size_ = 0;
};

// An anonymous mapping of its own, unmapped on destruction. For large blocks that come and go
// on many threads (weaveinfer's output frames): a freed malloc block of megabytes stays in the
// freeing thread's malloc arena (glibc raises its mmap threshold after the first such free),
// so each streaming thread would keep a frame or two. Page-aligned, zero-filled by the system.
class PageBuffer {
 public:
  PageBuffer() = default;
  // `bytes` (> 0) rounded up to whole pages; empty (data() == nullptr) when the mapping fails.
  [[nodiscard]] static PageBuffer map(std::size_t bytes);
  PageBuffer(PageBuffer&& o) noexcept;
  PageBuffer& operator=(PageBuffer&& o) noexcept;
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  ~PageBuffer();
  [[nodiscard]] std::byte* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return size_; }           // as asked
  [[nodiscard]] std::size_t mapped_size() const { return mapped_; }  // whole pages

 private:
  void unmap() noexcept;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0, mapped_ = 0;
};

class SharedBytes {
 public:
  SharedBytes() = default;
  SharedBytes(std::span<const std::byte> bytes, std::shared_ptr<const void> owner)
      : bytes_(bytes), owner_(std::move(owner)) {}
  // Takes ownership of an aligned block.
  static SharedBytes from(AlignedBuffer buf);
  // Copies bytes into a new aligned block.
  static SharedBytes copy_of(std::span<const std::byte> bytes);
  [[nodiscard]] std::span<const std::byte> span() const { return bytes_; }
  [[nodiscard]] const std::byte* data() const { return bytes_.data(); }
  [[nodiscard]] std::size_t size() const { return bytes_.size(); }
  [[nodiscard]] const std::shared_ptr<const void>& owner() const { return owner_; }

 private:
  std::span<const std::byte> bytes_;
  std::shared_ptr<const void> owner_;
};

}  // namespace weave
