#include "core/params/param_store.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace weave {
namespace {

// Odd 64-bit multipliers with well-spread bits (the first is 2^64 / golden ratio).
constexpr uint64_t kMulA = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kMulB = 0xd6e8feb86659fd93ULL;
constexpr uint64_t kMulC = 0xa0761d6478bd642fULL;
constexpr uint64_t kMulD = 0xe7037ed1a0b428dbULL;

uint64_t load64(const std::byte* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// One lane step: absorb a word, then spread its bits over the whole lane.
uint64_t absorb(uint64_t lane, uint64_t word, uint64_t mul) {
  lane = (lane ^ word) * mul;
  return lane ^ (lane >> 31);
}

// Final avalanche so that every input bit affects every output bit.
uint64_t finish(uint64_t h) {
  h ^= h >> 32;
  h *= kMulB;
  h ^= h >> 29;
  h *= kMulC;
  h ^= h >> 32;
  return h;
}

// The lookup key: content hash plus dtype and shape, so [2,3] and [3,2] of equal bytes differ.
uint64_t entry_key(uint64_t content, DType dtype, std::span<const int64_t> shape) {
  uint64_t h = absorb(content, static_cast<uint64_t>(dtype), kMulA);
  h = absorb(h, shape.size(), kMulB);
  for (int64_t d : shape) h = absorb(h, static_cast<uint64_t>(d), kMulC);
  return finish(h);
}

// Blocks up to this size are hashed whole; above it, from kSamples windows of kSampleBytes.
constexpr std::size_t kFullHashBytes = std::size_t{256} << 10;
constexpr std::size_t kSamples = 1024;
constexpr std::size_t kSampleBytes = 32;

uint64_t sampled_hash(std::span<const std::byte> bytes) {
  const std::byte* p = bytes.data();
  const std::size_t n = bytes.size();
  // Seeded apart from the whole-block hash (kMulB first), so the two never meet by design.
  uint64_t a = kMulB ^ n, b = kMulC + n, c = kMulD - n, d = kMulA ^ (n << 1);
  auto window = [&](const std::byte* w) {
    a = absorb(a, load64(w), kMulA);
    b = absorb(b, load64(w + 8), kMulB);
    c = absorb(c, load64(w + 16), kMulC);
    d = absorb(d, load64(w + 24), kMulD);
  };
  // One window in each of kSamples equal strides, at an offset within its stride that varies
  // from stride to stride (so a period in the data, e.g. the zero padding of packed panels,
  // cannot line up with every window), then the last bytes.
  const std::size_t stride = n / kSamples;
  const std::size_t room = stride - kSampleBytes + 1;
  for (std::size_t i = 0; i < kSamples; ++i) window(p + i * stride + finish(i + 1) % room);
  window(p + n - kSampleBytes);
  uint64_t h = absorb(a, b, kMulD);
  h = absorb(h, c, kMulA);
  h = absorb(h, d, kMulB);
  return finish(h);
}

}  // namespace

uint64_t content_hash(std::span<const std::byte> bytes) {
  if (bytes.size() > kFullHashBytes) return sampled_hash(bytes);
  const std::byte* p = bytes.data();
  std::size_t n = bytes.size();
  uint64_t a = kMulA ^ n, b = kMulB + n, c = kMulC - n, d = kMulD ^ (n << 1);
  for (; n >= 32; n -= 32, p += 32) {
    a = absorb(a, load64(p), kMulA);
    b = absorb(b, load64(p + 8), kMulB);
    c = absorb(c, load64(p + 16), kMulC);
    d = absorb(d, load64(p + 24), kMulD);
  }
  for (; n >= 8; n -= 8, p += 8) a = absorb(a, load64(p), kMulB);
  if (n > 0) {
    uint64_t tail = 0;
    std::memcpy(&tail, p, n);
    b = absorb(b, tail ^ (static_cast<uint64_t>(n) << 56), kMulC);
  }
  uint64_t h = absorb(a, b, kMulD);
  h = absorb(h, c, kMulA);
  h = absorb(h, d, kMulB);
  return finish(h);
}

struct ParamStore::State {
  struct Slot {
    const Entry* raw;  // identifies the slot when its entry erases itself (weak is expired then)
    std::weak_ptr<Entry> weak;
  };
  std::mutex mutex;
  std::unordered_multimap<uint64_t, Slot> entries;
  ParamStoreStats stats;
};

// One distinct content. Lives as long as some Use holds it; erases itself from the map.
struct ParamStore::Entry {
  Entry(std::shared_ptr<State> s, uint64_t k, DType t, std::span<const int64_t> sh, SharedBytes b)
      : state(std::move(s)), key(k), dtype(t), shape(sh.begin(), sh.end()), bytes(std::move(b)) {}
  ~Entry() {
    std::lock_guard<std::mutex> lock(state->mutex);
    auto [first, last] = state->entries.equal_range(key);
    for (auto it = first; it != last; ++it) {
      if (it->second.raw == this) {
        state->entries.erase(it);
        break;
      }
    }
    state->stats.unique_params -= 1;
    state->stats.unique_bytes -= bytes.size();
  }
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;

  std::shared_ptr<State> state;
  uint64_t key;
  DType dtype;
  Shape shape;
  SharedBytes bytes;  // the first interned copy; keeps its owner (heap block, mmap) alive
};

// One interned param: the owner of the SharedBytes intern() hands out.
struct ParamStore::Use {
  explicit Use(std::shared_ptr<Entry> e) : entry(std::move(e)) {}
  ~Use() {
    // The lock is released before `entry` is destroyed, so ~Entry can take it.
    std::lock_guard<std::mutex> lock(entry->state->mutex);
    entry->state->stats.uses -= 1;
    entry->state->stats.used_bytes -= entry->bytes.size();
  }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;
  std::shared_ptr<Entry> entry;
};

ParamStore& ParamStore::global() {
  static ParamStore store;
  return store;
}

ParamStore::ParamStore() : state_(std::make_shared<State>()) {}
ParamStore::~ParamStore() = default;

SharedBytes ParamStore::intern(DType dtype, std::span<const int64_t> shape, const SharedBytes& data) {
  const uint64_t key = entry_key(content_hash(data.span()), dtype, shape);
  // Strong references taken under the lock are released only after it: dropping the last one
  // runs ~Entry, which takes the lock itself.
  std::vector<std::shared_ptr<Entry>> held;
  std::shared_ptr<Entry> found;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    ParamStoreStats& st = state_->stats;
    st.lookups += 1;
    auto [first, last] = state_->entries.equal_range(key);
    for (auto it = first; it != last && !found; ++it) {
      auto e = it->second.weak.lock();
      if (!e) continue;  // being destroyed right now
      held.push_back(e);
      if (e->dtype != dtype || e->bytes.size() != data.size() ||
          !std::equal(e->shape.begin(), e->shape.end(), shape.begin(), shape.end()))
        continue;
      if (e->bytes.data() != data.data() && data.size() > 0 &&
          std::memcmp(e->bytes.data(), data.data(), data.size()) != 0)
        continue;  // a hash collision
      found = std::move(e);
    }
    if (found) {
      st.hits += 1;
    } else {
      found = std::make_shared<Entry>(state_, key, dtype, shape, data);
      state_->entries.emplace(key, State::Slot{found.get(), found});
      st.unique_params += 1;
      st.unique_bytes += data.size();
    }
    st.uses += 1;
    st.used_bytes += data.size();
  }
  std::span<const std::byte> bytes = found->bytes.span();
  return SharedBytes(bytes, std::make_shared<const Use>(std::move(found)));
}

void ParamStore::intern(Graph& g) {
  for (Param& p : g.params) {
    if (p.value < 0 || static_cast<std::size_t>(p.value) >= g.values.size()) continue;  // not validated
    const Value& v = g.values[p.value];
    p.data = intern(v.dtype, v.shape, p.data);
  }
}

ParamStoreStats ParamStore::stats() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->stats;
}

}  // namespace weave
