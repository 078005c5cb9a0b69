// Byte storage: AlignedBuffer (64-byte aligned, zeroed on request) and PageBuffer (a mapping of
// its own: whole pages, zero-filled, unmapped when destroyed, movable).
#define BOOST_TEST_MODULE buffer
#include <sys/mman.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/common/buffer.h"

using namespace weave;

namespace {
// Whether the page at p is mapped: msync fails with ENOMEM on unmapped memory.
bool mapped(const std::byte* p) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  void* start = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(p) / page * page);
  return msync(start, 1, MS_ASYNC) == 0;
}

bool all_zero(const std::byte* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != std::byte{0}) return false;
  return true;
}
}  // namespace

BOOST_AUTO_TEST_CASE(aligned_buffer_is_aligned_and_zeroed) {
  AlignedBuffer b(1000);
  BOOST_TEST(b.size() == 1000u);
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(b.data()) % kAlignment == 0u);
  BOOST_TEST(all_zero(b.data(), b.size()));
  BOOST_TEST(AlignedBuffer().data() == nullptr);
}

BOOST_AUTO_TEST_CASE(page_buffer_is_whole_zeroed_pages) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  PageBuffer b = PageBuffer::map(page + 1);
  BOOST_TEST_REQUIRE(b.data() != nullptr);
  BOOST_TEST(b.size() == page + 1);
  BOOST_TEST(b.mapped_size() == 2 * page);
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(b.data()) % page == 0u);
  BOOST_TEST(all_zero(b.data(), b.mapped_size()));
  std::memset(b.data(), 0x5a, b.mapped_size());  // writable to the last mapped byte
  BOOST_TEST(std::to_integer<int>(b.data()[b.mapped_size() - 1]) == 0x5a);
}

BOOST_AUTO_TEST_CASE(page_buffer_moves_its_mapping) {
  PageBuffer a = PageBuffer::map(100);
  std::byte* data = a.data();
  BOOST_TEST_REQUIRE(data != nullptr);
  a.data()[0] = std::byte{7};
  PageBuffer b = std::move(a);
  BOOST_TEST(a.data() == nullptr);
  BOOST_TEST(a.size() == 0u);
  BOOST_TEST(b.data() == data);
  BOOST_TEST(std::to_integer<int>(b.data()[0]) == 7);
  PageBuffer c = PageBuffer::map(200);
  std::byte* c_own = c.data();
  c = std::move(b);  // c's own mapping is unmapped, b's taken over
  BOOST_TEST(c.data() == data);
  BOOST_TEST(c.size() == 100u);
  BOOST_TEST(b.data() == nullptr);
  BOOST_TEST(!mapped(c_own));
  BOOST_TEST(mapped(data));
}

BOOST_AUTO_TEST_CASE(page_buffer_goes_back_to_the_system_when_destroyed) {
  std::byte* data = nullptr;
  {
    PageBuffer b = PageBuffer::map(1 << 20);
    data = b.data();
    BOOST_TEST_REQUIRE(mapped(data));
    std::memset(b.data(), 1, b.size());
  }
  BOOST_TEST(!mapped(data));  // unmapped, not kept by an allocator
}

BOOST_AUTO_TEST_CASE(empty_page_buffer_maps_nothing) {
  PageBuffer b = PageBuffer::map(0);
  BOOST_TEST(b.data() == nullptr);
  BOOST_TEST(b.mapped_size() == 0u);
}
