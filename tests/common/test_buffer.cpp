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

// PageRecycling: inside a scope, a freed mapped block (zeroed and >= kPopulateBytes) is kept and
// the next such block is cut from it, zeroed again, whether it needs fewer pages (the tail goes
// back) or more (grown by mremap); when the last scope ends, kept blocks are unmapped.
BOOST_AUTO_TEST_CASE(recycled_pages_come_back_zeroed) {
  const std::size_t mib = std::size_t{1} << 20;
  std::byte* kept = nullptr;
  {
    const PageRecycling scope;
    std::byte* first = nullptr;
    {
      AlignedBuffer a(2 * mib);
      first = a.data();
      std::memset(a.data(), 0xab, a.size());
    }
    BOOST_TEST(mapped(first));  // kept, not unmapped
    {
      AlignedBuffer b(2 * mib - 100);  // same pages: the freed block itself
      BOOST_TEST(b.data() == first);
      BOOST_TEST(all_zero(b.data(), b.size()));
      std::memset(b.data(), 0xcd, b.size());
    }
    {
      AlignedBuffer c(mib + 4096);  // fewer pages: its tail is unmapped
      BOOST_TEST(c.data() == first);
      BOOST_TEST(all_zero(c.data(), c.size()));
      BOOST_TEST(!mapped(first + 2 * mib - 4096));
      std::memset(c.data(), 0xef, c.size());
    }
    {
      AlignedBuffer d(5 * mib);  // more pages: grown
      BOOST_TEST(all_zero(d.data(), d.size()));
      std::memset(d.data(), 0x11, d.size());
      kept = d.data();
    }
    {
      const PageRecycling nested;  // an inner scope's end keeps what the outer one holds
    }
    BOOST_TEST(mapped(kept));
  }
  BOOST_TEST(!mapped(kept));  // the last scope unmapped it
  // Outside any scope, a freed block goes straight back to the system.
  std::byte* lone = nullptr;
  {
    AlignedBuffer e(2 * mib);
    lone = e.data();
  }
  BOOST_TEST(!mapped(lone));
}

// Small blocks and unzeroed ones never come from (or go to) the recycled pages.
BOOST_AUTO_TEST_CASE(small_and_unzeroed_blocks_are_not_recycled) {
  const PageRecycling scope;
  std::byte* big = nullptr;
  {
    AlignedBuffer a(2 * (std::size_t{1} << 20));
    big = a.data();
    std::memset(a.data(), 0xab, a.size());
  }
  AlignedBuffer small(4096);
  BOOST_TEST(small.data() != big);
  BOOST_TEST(all_zero(small.data(), small.size()));
  AlignedBuffer unzeroed(2 * (std::size_t{1} << 20), /*zero=*/false);
  BOOST_TEST(unzeroed.data() != big);
  AlignedBuffer zeroed(2 * (std::size_t{1} << 20));
  BOOST_TEST(zeroed.data() == big);
  BOOST_TEST(all_zero(zeroed.data(), zeroed.size()));
}
