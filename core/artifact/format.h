// Constants of the .weave file format (docs/artifact.md describes it byte by byte). Shared by the
// writer, the reader and the tests; changing any value here changes the format and needs a new
// kFormatVersion.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace weave::artifact_format {

// "WEAVE" + CR LF + SUB: the CR LF / SUB bytes catch text-mode transfers that mangle line ends.
inline constexpr std::array<unsigned char, 8> kMagic{'W', 'E', 'A', 'V', 'E', '\r', '\n', 0x1a};
inline constexpr uint32_t kFormatVersion = 1;

// Header: magic[8] version:u32 flags:u32 file_size:u64 section_count:u32 table_crc:u32
//         header_crc:u32 reserved:u32
inline constexpr std::size_t kHeaderSize = 40;
inline constexpr std::size_t kHeaderCrcOffset = 32;  // CRC32 of bytes [0, 32)
// Section table entry: kind:u32 flags:u32 offset:u64 size:u64 crc:u32 reserved:u32
inline constexpr std::size_t kSectionEntrySize = 32;
// A reader refuses tables larger than this (v1 writes at most 5 sections).
inline constexpr uint32_t kMaxSections = 64;
// Param blobs start at multiples of this in the file, so mmap'd blobs are SIMD aligned.
inline constexpr std::size_t kBlobAlignment = 64;
// Attributes per node (Attributes is a linear list; the cap keeps hostile files from making
// reading quadratic).
inline constexpr uint32_t kMaxAttributes = 1024;
// Params smaller than this are always stored uncompressed.
inline constexpr std::size_t kMinCompressBytes = 1024;

enum class SectionKind : uint32_t {
  metadata = 1,
  graph = 2,
  params = 3,
  names = 4,
  blobs = 5,
};
// Kinds with this bit set are optional: a reader that does not know them skips them. Unknown
// kinds without it are an error (the file needs a newer reader).
inline constexpr uint32_t kOptionalSectionBit = 0x80000000u;

// Attribute value tags in the graph section (the AttrValue variant index).
enum class AttrTag : uint8_t {
  int64 = 0,
  float32 = 1,
  string = 2,
  ints = 3,
  floats = 4,
  strings = 5,
  tensor = 6,
};

[[nodiscard]] inline std::string_view section_name(uint32_t kind) {
  switch (static_cast<SectionKind>(kind)) {
    case SectionKind::metadata:
      return "metadata";
    case SectionKind::graph:
      return "graph";
    case SectionKind::params:
      return "params";
    case SectionKind::names:
      return "names";
    case SectionKind::blobs:
      return "blobs";
  }
  return "unknown";
}

}  // namespace weave::artifact_format
