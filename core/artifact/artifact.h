// The .weave artifact: a compiled weave::Graph in one versioned, sectioned, checksummed binary
// file (format: docs/artifact.md).
//
// Reading is the hostile direction. Every read is bounds-checked against the file length, every
// count and size is checked against the bytes that remain before anything is allocated, and each
// section and each param blob carries a CRC-32. Any failure is an Error naming the file and the
// section (and the param / node / value id where one applies); a bad file never crashes the
// reader. A successfully read graph has passed Graph::validate().
//
// Params stored uncompressed ("none") are used in place from the mmap of the file: their
// SharedBytes point into the mapping (64-byte aligned) and keep it alive. Compressed params are
// decoded once, at load, into 64-byte aligned heap blocks.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/buffer.h"
#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

// The params codec used when none is asked for (CLI, weaveinfer's cache, WriteOptions): the
// float byte planes, each compressed on its own. zstd-planes (builds with zstd) stores trained
// weights at ~0.86x of the ONNX file and loads in under 2x the time of an uncompressed artifact;
// without zstd, zlib-planes is as small and loads 2-3x slower (docs/performance.md).
#ifdef WEAVE_HAVE_ZSTD
inline constexpr std::string_view kDefaultCodec = "zstd-planes";
#else
inline constexpr std::string_view kDefaultCodec = "zlib-planes";
#endif

struct WriteOptions {
  // Codec for params of at least 1 KiB; a param that does not shrink is stored with "none".
  // Any name in CodecRegistry::global(): "none", "zlib", "zlib-shuffle", "zlib-planes", "lz4",
  // "zstd", "zstd-planes", or yours. Default: kDefaultCodec.
  std::string codec = std::string(kDefaultCodec);
  int level = -1;            // -1: the codec's default
  bool strip_names = false;  // omit the NameMap section
};

// Writes atomically (a temporary file in the same directory, then rename).
[[nodiscard]] Status write_artifact(const Graph& g, const std::string& path, const WriteOptions& opt);
// The exact bytes write_artifact stores; deterministic for a given graph and options.
[[nodiscard]] Expected<std::vector<std::byte>> serialize_artifact(const Graph& g, const WriteOptions& opt);

struct ReadOptions {
  bool use_mmap = true;  // false: read the file into one heap block ("none" params point into it)
};

[[nodiscard]] Expected<Graph> read_artifact(const std::string& path, const ReadOptions& opt = {});
// Reads from memory; `label` names the source in errors. "none" params alias `bytes` when it is
// 64-byte aligned (they share its owner), otherwise they are copied into aligned blocks.
[[nodiscard]] Expected<Graph> read_artifact_bytes(SharedBytes bytes, std::string label);

struct SectionSummary {
  uint32_t kind = 0;
  std::string name;  // "metadata", "graph", "params", "names", "blobs" or "unknown"
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t crc32 = 0;
};

struct CodecUsage {
  uint64_t params = 0;
  uint64_t stored_bytes = 0;
  uint64_t raw_bytes = 0;
};

struct ArtifactInfo {
  uint32_t version = 0;
  uint64_t file_size = 0;
  std::vector<SectionSummary> sections;      // in table order
  std::map<std::string, CodecUsage> codecs;  // by codec name (registered or not)
  bool has_names = false;
  std::size_t value_count = 0;
  std::size_t node_count = 0;
  std::size_t param_count = 0;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  std::map<std::string, std::string> metadata;
};

// Checks the header, the section table and every section checksum and decodes the tables, but
// neither decodes nor verifies param blobs, so it works for files whose codecs are not
// registered in this process.
[[nodiscard]] Expected<ArtifactInfo> inspect_artifact(const std::string& path);
// The same for an image in memory; `label` names it in errors.
[[nodiscard]] Expected<ArtifactInfo> inspect_artifact_bytes(std::span<const std::byte> bytes,
                                                            const std::string& label);

}  // namespace weave
