// Rewrites the checksums (and the declared file size) of a mutated .weave image so that a
// fuzzer's mutations reach the tables, codecs and blobs behind the CRCs instead of stopping at
// the first checksum. Mirrors the layout in core/artifact/format.h and docs/artifact.md; it
// only writes where the image has room and never reads out of bounds, whatever the bytes say.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "core/artifact/codec.h"
#include "core/artifact/format.h"

namespace weave::fuzz {

namespace detail {

inline uint64_t get_le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}
inline void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t crc(const uint8_t* p, std::size_t n) {
  return crc32_of(std::span(reinterpret_cast<const std::byte*>(p), n));
}

// A bounds-checked cursor over one section.
struct Cursor {
  uint8_t* p;
  std::size_t n, pos = 0;
  bool ok = true;
  bool need(std::size_t k) {
    if (!ok || n - pos < k) ok = false;
    return ok;
  }
  uint64_t take(int k) {
    if (!need(static_cast<std::size_t>(k))) return 0;
    const uint64_t v = get_le(p + pos, k);
    pos += static_cast<std::size_t>(k);
    return v;
  }
  std::string str() {
    const uint64_t len = take(4);
    if (!need(len)) return {};
    std::string s(reinterpret_cast<const char*>(p + pos), len);
    pos += len;
    return s;
  }
};

struct Section {
  uint32_t kind;
  uint64_t offset, size;
  std::size_t entry;  // offset of its table entry
};

// Blob checksums from the params table: stored_crc of every blob inside the blob area, and
// raw_crc too for blobs stored with "none" (where both are the same CRC).
inline void fix_blob_crcs(uint8_t* params, std::size_t params_size, const uint8_t* blobs,
                          std::size_t blobs_size) {
  Cursor c{params, params_size};
  const uint64_t ncodecs = c.take(4);
  std::vector<std::string> codecs;
  for (uint64_t i = 0; i < ncodecs && c.ok && i < 4096; ++i) codecs.push_back(c.str());
  const uint64_t nparams = c.take(4);
  for (uint64_t i = 0; i < nparams && c.ok; ++i) {
    c.take(4);  // value
    c.take(4);  // dtype
    const uint64_t codec = c.take(4);
    const uint64_t rank = c.take(4);
    if (rank > 64) return;
    for (uint64_t d = 0; d < rank; ++d) c.take(8);
    const uint64_t offset = c.take(8);
    const uint64_t stored = c.take(8);
    c.take(8);  // raw
    if (!c.need(8)) return;
    uint8_t* crcs = c.p + c.pos;
    c.pos += 8;
    if (offset > blobs_size || stored > blobs_size - offset) continue;
    const uint32_t v = crc(blobs + offset, stored);
    put_u32(crcs, v);
    if (codec < codecs.size() && codecs[codec] == "none") put_u32(crcs + 4, v);
  }
}

}  // namespace detail

inline void fix_artifact_checksums(uint8_t* data, std::size_t size) {
  using namespace artifact_format;
  using namespace detail;
  if (size < kHeaderSize || std::memcmp(data, kMagic.data(), kMagic.size()) != 0) return;
  put_u64(data + 16, size);  // file_size
  const uint64_t count = get_le(data + 24, 4);
  if (count > kMaxSections || kHeaderSize + count * kSectionEntrySize > size) {
    put_u32(data + kHeaderCrcOffset, crc(data, kHeaderCrcOffset));
    return;
  }
  std::vector<Section> sections;
  for (uint64_t i = 0; i < count; ++i) {
    const std::size_t e = kHeaderSize + i * kSectionEntrySize;
    Section s{static_cast<uint32_t>(get_le(data + e, 4)), get_le(data + e + 8, 8), get_le(data + e + 16, 8),
              e};
    if (s.offset <= size && s.size <= size - s.offset) sections.push_back(s);
  }
  const Section* params = nullptr;
  const Section* blobs = nullptr;
  for (const auto& s : sections) {
    if (s.kind == static_cast<uint32_t>(SectionKind::params)) params = &s;
    if (s.kind == static_cast<uint32_t>(SectionKind::blobs)) blobs = &s;
  }
  if (params && blobs) fix_blob_crcs(data + params->offset, params->size, data + blobs->offset, blobs->size);
  for (const auto& s : sections)
    if (s.kind != static_cast<uint32_t>(SectionKind::blobs))
      put_u32(data + s.entry + 24, crc(data + s.offset, s.size));
  put_u32(data + 28, crc(data + kHeaderSize, count * kSectionEntrySize));
  put_u32(data + kHeaderCrcOffset, crc(data, kHeaderCrcOffset));
}

}  // namespace weave::fuzz
