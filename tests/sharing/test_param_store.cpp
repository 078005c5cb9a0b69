// ParamStore (content dedup of params, R6) on hand-made bytes: the hash, hits and misses by
// dtype/shape/bytes, weak entries, exact statistics, concurrency, and Factory::create's use of
// the process-wide store.
#define BOOST_TEST_MODULE param_store
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "core/params/param_store.h"
#include "core/runtime/factory.h"

using namespace weave;

namespace {

SharedBytes floats(std::vector<float> v) {
  return SharedBytes::copy_of(std::as_bytes(std::span<const float>(v)));
}

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> b(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& c : b) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<std::byte>(x >> 24);
  }
  return b;
}

// A one-node graph y = x + w with param w of the given values.
Graph add_graph(const std::vector<float>& w) {
  Graph g;
  int32_t x = g.add_value(Value{ValueKind::input, DType::float32, Shape{static_cast<int64_t>(w.size())}});
  int32_t p = g.add_param(DType::float32, Shape{static_cast<int64_t>(w.size())}, floats(w));
  int32_t y =
      g.add_value(Value{ValueKind::intermediate, DType::float32, Shape{static_cast<int64_t>(w.size())}});
  g.nodes.push_back(Node{"Add", {x, p}, {y}, {}});
  g.inputs = {x};
  g.outputs = {y};
  g.input_infos = {TensorInfo{"x", DType::float32, Shape{static_cast<int64_t>(w.size())}, {}}};
  g.output_infos = {TensorInfo{"y", DType::float32, Shape{static_cast<int64_t>(w.size())}, {}}};
  return g;
}

}  // namespace

BOOST_AUTO_TEST_CASE(content_hash_depends_on_every_byte_and_the_length) {
  // Lengths cover the 32-byte lane loop, the 8-byte word loop and the byte tail.
  for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 31u, 32u, 33u, 100u, 4096u}) {
    auto a = pattern(n, 1);
    const uint64_t h = content_hash(a);
    BOOST_TEST(h == content_hash(pattern(n, 1)));  // deterministic
    std::set<uint64_t> seen{h};
    for (std::size_t i = 0; i < n; ++i) {
      auto b = a;
      b[i] ^= std::byte{1};  // one flipped bit anywhere changes the hash
      BOOST_TEST_REQUIRE(seen.insert(content_hash(b)).second, "n=" << n << " byte " << i);
    }
  }
  // Zero bytes of different lengths differ (the length is mixed in).
  std::vector<std::byte> z(64);
  std::set<uint64_t> zs;
  for (std::size_t n = 0; n <= 64; ++n) zs.insert(content_hash(std::span(z).first(n)));
  BOOST_TEST(zs.size() == 65u);
}

BOOST_AUTO_TEST_CASE(big_blocks_hash_from_samples_and_bytes_still_decide) {
  // Above 256 KiB the hash reads windows spread over the block: equal blocks hash equal,
  // different weights differ, the length counts, and a block that differs from another only
  // between windows gets the same hash but is still stored apart (the bytes are compared).
  const std::size_t n = std::size_t{1} << 20;
  auto a = pattern(n, 1);
  const uint64_t h = content_hash(a);
  BOOST_TEST(h == content_hash(pattern(n, 1)));
  BOOST_TEST(h != content_hash(pattern(n, 2)));
  BOOST_TEST(h != content_hash(std::span(a).first(n - 4)));
  auto last = a;
  last[n - 1] ^= std::byte{1};  // the last bytes are always read
  BOOST_TEST(h != content_hash(last));
  std::size_t unread = n;
  for (std::size_t i = 0; i < 4096 && unread == n; ++i) {
    auto b = a;
    b[i] ^= std::byte{1};
    if (content_hash(b) == h) unread = i;
  }
  BOOST_TEST_REQUIRE(unread < n, "every one of the first 4096 bytes is read");
  auto b = a;
  b[unread] ^= std::byte{1};
  ParamStore store;
  const Shape s{static_cast<int64_t>(n)};
  SharedBytes ia = store.intern(DType::uint8, s, SharedBytes::copy_of(a));
  SharedBytes ib = store.intern(DType::uint8, s, SharedBytes::copy_of(b));
  BOOST_TEST(ia.data() != ib.data());
  BOOST_TEST(std::memcmp(ib.data(), b.data(), n) == 0);
  BOOST_TEST(store.stats().unique_params == 2u);
  SharedBytes ic = store.intern(DType::uint8, s, SharedBytes::copy_of(a));
  BOOST_TEST(ic.data() == ia.data());
}

BOOST_AUTO_TEST_CASE(equal_content_is_stored_once) {
  ParamStore store;
  SharedBytes a = floats({1, 2, 3, 4}), b = floats({1, 2, 3, 4});
  BOOST_TEST_REQUIRE(a.data() != b.data());
  const Shape s{4};
  SharedBytes ia = store.intern(DType::float32, s, a);
  SharedBytes ib = store.intern(DType::float32, s, b);
  BOOST_TEST(ia.data() == a.data());  // a miss keeps the caller's bytes: no copy
  BOOST_TEST(ib.data() == a.data());  // a hit returns the stored ones
  BOOST_TEST(ib.size() == 16u);
  auto st = store.stats();
  BOOST_TEST(st.unique_params == 1u);
  BOOST_TEST(st.unique_bytes == 16u);
  BOOST_TEST(st.uses == 2u);
  BOOST_TEST(st.used_bytes == 32u);
  BOOST_TEST(st.bytes_saved() == 16u);
  BOOST_TEST(st.lookups == 2u);
  BOOST_TEST(st.hits == 1u);
}

BOOST_AUTO_TEST_CASE(dtype_shape_or_bytes_make_a_different_param) {
  ParamStore store;
  SharedBytes base = floats({1, 2, 3, 4, 5, 6});
  SharedBytes ref = store.intern(DType::float32, Shape{2, 3}, base);
  // Same bytes, other shape; same bytes, other dtype; one element different.
  SharedBytes other_shape = store.intern(DType::float32, Shape{3, 2}, floats({1, 2, 3, 4, 5, 6}));
  SharedBytes other_dtype = store.intern(DType::int32, Shape{2, 3}, floats({1, 2, 3, 4, 5, 6}));
  SharedBytes other_bytes = store.intern(DType::float32, Shape{2, 3}, floats({1, 2, 3, 4, 5, 7}));
  BOOST_TEST(other_shape.data() != ref.data());
  BOOST_TEST(other_dtype.data() != ref.data());
  BOOST_TEST(other_bytes.data() != ref.data());
  BOOST_TEST(store.stats().unique_params == 4u);
  BOOST_TEST(store.stats().hits == 0u);
  // Re-interning already interned bytes is a hit on the same entry.
  SharedBytes again = store.intern(DType::float32, Shape{2, 3}, ref);
  BOOST_TEST(again.data() == ref.data());
  BOOST_TEST(store.stats().hits == 1u);
  BOOST_TEST(store.stats().unique_params == 4u);
}

BOOST_AUTO_TEST_CASE(entries_are_weak_and_the_duplicate_is_freed) {
  ParamStore store;
  std::weak_ptr<const void> first_owner, dup_owner;
  {
    SharedBytes a = floats({7, 7, 7});
    SharedBytes ia = store.intern(DType::float32, Shape{3}, a);
    first_owner = a.owner();
    SharedBytes ib;
    {
      SharedBytes b = floats({7, 7, 7});
      dup_owner = b.owner();
      ib = store.intern(DType::float32, Shape{3}, b);
    }
    // The duplicate's block is gone as soon as its owner let go; the stored one lives on.
    BOOST_TEST(dup_owner.expired());
    a = SharedBytes();
    BOOST_TEST(!first_owner.expired());  // kept alive by the entry its uses hold
    BOOST_TEST(store.stats().uses == 2u);
    ia = SharedBytes();
    BOOST_TEST(store.stats().uses == 1u);
    BOOST_TEST(store.stats().unique_params == 1u);
    BOOST_TEST(!first_owner.expired());
    BOOST_TEST(ib.data() != nullptr);
  }
  // The last use is gone: so are the entry and the bytes.
  BOOST_TEST(first_owner.expired());
  auto st = store.stats();
  BOOST_TEST(st.unique_params == 0u);
  BOOST_TEST(st.unique_bytes == 0u);
  BOOST_TEST(st.uses == 0u);
  BOOST_TEST(st.used_bytes == 0u);
  // A later intern of the same content starts a new entry with the caller's bytes.
  SharedBytes c = floats({7, 7, 7});
  BOOST_TEST(store.intern(DType::float32, Shape{3}, c).data() == c.data());
}

BOOST_AUTO_TEST_CASE(empty_params_are_handled) {
  ParamStore store;
  SharedBytes e1, e2;  // no bytes at all
  SharedBytes a = store.intern(DType::float32, Shape{0}, e1);
  SharedBytes b = store.intern(DType::float32, Shape{0}, e2);
  BOOST_TEST(a.size() == 0u);
  BOOST_TEST(b.size() == 0u);
  BOOST_TEST(store.stats().unique_params == 1u);
  BOOST_TEST(store.stats().hits == 1u);
}

BOOST_AUTO_TEST_CASE(concurrent_interning_shares_one_copy) {
  ParamStore store;
  constexpr int kThreads = 4, kParams = 16, kRounds = 20;
  // Every thread interns its own copies of the same kParams contents, many times over, keeping
  // the last round's results; interleaved frees exercise entry destruction under contention.
  std::vector<std::vector<SharedBytes>> kept(kThreads, std::vector<SharedBytes>(kParams));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r)
        for (int p = 0; p < kParams; ++p) {
          auto bytes = pattern(1000 + p, p);
          kept[t][p] = store.intern(DType::uint8, Shape{static_cast<int64_t>(bytes.size())},
                                    SharedBytes::copy_of(bytes));
        }
    });
  }
  for (auto& th : threads) th.join();
  std::size_t total = 0;
  for (int p = 0; p < kParams; ++p) {
    total += 1000 + p;
    for (int t = 1; t < kThreads; ++t) BOOST_TEST(kept[t][p].data() == kept[0][p].data());
    BOOST_TEST(std::memcmp(kept[0][p].data(), pattern(1000 + p, p).data(), 1000 + p) == 0);
  }
  auto st = store.stats();
  BOOST_TEST(st.unique_params == static_cast<std::size_t>(kParams));
  BOOST_TEST(st.unique_bytes == total);
  BOOST_TEST(st.uses == static_cast<std::size_t>(kThreads * kParams));
  BOOST_TEST(st.bytes_saved() == (kThreads - 1) * total);
  BOOST_TEST(st.lookups == static_cast<uint64_t>(kThreads * kRounds * kParams));
  kept.clear();
  BOOST_TEST(store.stats().unique_params == 0u);
  BOOST_TEST(store.stats().uses == 0u);
}

BOOST_AUTO_TEST_CASE(factories_share_params_through_the_global_store) {
  const auto before = ParamStore::global().stats();
  auto f1 = Factory::create(add_graph({1, 2, 3, 4, 5}));
  auto f2 = Factory::create(add_graph({1, 2, 3, 4, 5}));
  auto f3 = Factory::create(add_graph({1, 2, 3, 4, 6}));
  FactoryOptions no_dedup;
  no_dedup.dedup_params = false;
  auto f4 = Factory::create(add_graph({1, 2, 3, 4, 5}), no_dedup);
  BOOST_TEST_REQUIRE(f1.ok());
  BOOST_TEST_REQUIRE(f2.ok());
  BOOST_TEST_REQUIRE(f3.ok());
  BOOST_TEST_REQUIRE(f4.ok());
  const std::byte* p1 = (*f1)->graph().params[0].data.data();
  BOOST_TEST((*f2)->graph().params[0].data.data() == p1);
  BOOST_TEST((*f3)->graph().params[0].data.data() != p1);
  BOOST_TEST((*f4)->graph().params[0].data.data() != p1);  // opted out
  auto st = ParamStore::global().stats();
  BOOST_TEST(st.unique_params - before.unique_params == 2u);
  BOOST_TEST(st.bytes_saved() - before.bytes_saved() == 20u);
  // Freed with the factories.
  f1 = Error("gone");
  f2 = Error("gone");
  f3 = Error("gone");
  BOOST_TEST(ParamStore::global().stats().unique_params == before.unique_params);
  BOOST_TEST(ParamStore::global().stats().uses == before.uses);
}
