// Param codecs of the .weave format and the registry that finds them by name.
//
// A codec turns a param's raw bytes into stored bytes and back. The file records each param's
// codec by *name* (a string table in the params section), so a codec an application registers
// round-trips like the built-in ones. Built-ins: "none" and "zlib" always, "zlib-shuffle"
// (4-byte byte-plane shuffle + deflate, good for float weights), "zlib-planes" (float32 sign
// rotation + one deflate stream per byte plane, best on trained float weights), "lz4" when built with
// WEAVE_HAVE_LZ4, "zstd" and "zstd-planes" (the same planes as zstd streams: as small, faster to
// decode) when built with WEAVE_HAVE_ZSTD.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace weave {

class Codec {
 public:
  virtual ~Codec() = default;
  // Stable name stored in files: 1..64 bytes of [A-Za-z0-9._-].
  [[nodiscard]] virtual std::string_view name() const = 0;
  // `level` -1 means the codec's default; other values are codec specific.
  [[nodiscard]] virtual Expected<std::vector<std::byte>> compress(std::span<const std::byte> in,
                                                                  int level) const = 0;
  // Decodes `in` into exactly out.size() bytes. Must fail (not crash) on any malformed input,
  // and fail when `in` decodes to more or fewer bytes than out.size().
  [[nodiscard]] virtual Status decompress(std::span<const std::byte> in, std::span<std::byte> out) const = 0;
  // Largest raw/stored size ratio the codec can produce. The reader rejects a param whose
  // claimed raw size exceeds stored size * max_expansion() before allocating anything, which is
  // what keeps a hostile file from requesting a huge buffer. The writer stores a param with
  // "none" if a codec ever exceeds its own bound.
  [[nodiscard]] virtual uint64_t max_expansion() const { return 1u << 16; }
};

class CodecRegistry {
 public:
  // The process-wide registry, with the built-in codecs already present.
  static CodecRegistry& global();

  // Fails if the name is malformed or already registered (built-ins cannot be replaced).
  [[nodiscard]] Status add(std::shared_ptr<const Codec> codec);
  // nullptr when no codec of that name is registered.
  [[nodiscard]] std::shared_ptr<const Codec> find(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names() const;

  CodecRegistry() = default;
  CodecRegistry(const CodecRegistry&) = delete;
  CodecRegistry& operator=(const CodecRegistry&) = delete;

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const Codec>> codecs_;
};

// True for names a file may carry: 1..64 bytes of [A-Za-z0-9._-].
[[nodiscard]] bool codec_name_valid(std::string_view name);

// CRC-32 (zlib's polynomial) of any length; used for section and blob checksums.
[[nodiscard]] uint32_t crc32_of(std::span<const std::byte> bytes);

}  // namespace weave
