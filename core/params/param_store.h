// ParamStore: params with identical content are stored once per process (R6).
//
// Factory::create (unless FactoryOptions::dedup_params is false) passes every param of its
// graph through ParamStore::global().intern(). A param is identified by its dtype, its shape and
// its bytes: a 64-bit content hash finds candidates and a byte comparison confirms them, so a
// hash collision can never make two different params share memory. On a hit the graph's
// Param::data is replaced by the stored bytes, so the duplicate's own block (a heap copy from an
// import or a decompressed artifact blob) is freed as soon as nothing else holds it; on a miss
// the param's own bytes become the stored ones (no copy is ever made).
//
// Entries are weak: the store keeps no bytes alive by itself. Every interned param holds a
// "use" of its entry; an entry, and the bytes it keeps alive, goes away with its last use, i.e.
// when the last factory (or graph copy) using it is freed. This keeps memory at ~1x params for
// N factories of one model, or for several models cut from one network, whether or not they
// come through the FactoryCache.
//
// What dedup cannot share: copies a kernel makes in create() (packed or folded weights) belong
// to that kernel. Today only BatchNormalization folds its four per-channel params into two
// small vectors; Conv, Gemm/MatMul, LSTM and Gather read params in place.
//
// Thread-safe. Hashing runs outside the lock; lookups, byte comparisons and use counting run
// under it (they only happen while factories are created or freed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/common/buffer.h"
#include "core/common/dims.h"
#include "core/common/dtype.h"
#include "core/graph/graph.h"

namespace weave {

// A snapshot of what the store holds now (live) and has done since it was made (cumulative).
struct ParamStoreStats {
  std::size_t unique_params = 0;  // live entries: distinct contents held once
  // Bytes of those entries (what is actually in memory), each counted as its own: an entry that
  // is a view into a larger buffer (split_conv_outputs' rows of a weight) counts its rows, while
  // the whole buffer stays in memory as long as any view of it does.
  std::size_t unique_bytes = 0;
  std::size_t uses = 0;        // live interned params across all graphs/factories
  std::size_t used_bytes = 0;  // bytes those params would take without dedup
  // used_bytes - unique_bytes: memory saved right now.
  [[nodiscard]] std::size_t bytes_saved() const { return used_bytes - unique_bytes; }
  uint64_t lookups = 0;  // intern() calls so far
  uint64_t hits = 0;     // ... that found equal content already stored
};

// The content hash the store uses: 64-bit, seeded with the length, reads 8-byte words in four
// independent lanes (so the multiplies pipeline) and mixes the tail byte by byte. Not
// cryptographic: equal hashes are always confirmed by comparing bytes.
// Blocks above 256 KiB are hashed from their length and 1024 windows of 32 bytes spread over
// them (one per 1/1024 of the block, plus the last 32 bytes), not from every byte: the hash only
// picks candidates, and the byte comparison still decides. Hashing every byte of the packed
// weights was a sixth of a fast factory's load (resnet18: 72 MB, ~10 ms of 140 on a 2-core
// Xeon); distinct weights of one size differ in some window in practice, and content that
// differs only between windows costs a comparison, never a wrong share.
[[nodiscard]] uint64_t content_hash(std::span<const std::byte> bytes);

class ParamStore {
 public:
  // The process-wide store Factory::create uses.
  static ParamStore& global();

  // An independent store (tests use their own to get exact numbers).
  ParamStore();
  ~ParamStore();
  ParamStore(const ParamStore&) = delete;
  ParamStore& operator=(const ParamStore&) = delete;

  // Bytes equal in content to `data` (same dtype, shape and bytes): the stored ones if an equal
  // param is already held, otherwise `data` itself, which becomes the stored copy. The result
  // keeps the entry alive and must replace the caller's bytes for the sharing to free anything.
  [[nodiscard]] SharedBytes intern(DType dtype, std::span<const int64_t> shape, const SharedBytes& data);
  // Interns every param of the graph in place (a param with an out-of-range value id, which
  // Graph::validate() would reject, is left alone).
  void intern(Graph& g);

  [[nodiscard]] ParamStoreStats stats() const;

 private:
  struct State;
  struct Entry;
  struct Use;
  // Shared with every entry and use, so a factory outliving the store (e.g. freed after the
  // process-wide store at exit) still finds the state it reports to.
  std::shared_ptr<State> state_;
};

}  // namespace weave
