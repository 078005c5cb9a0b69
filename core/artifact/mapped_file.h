// A read-only memory map of a whole file (RAII). Params stored with the "none" codec are handed
// to the graph as SharedBytes pointing into the mapping, with the MappedFile as their owner, so
// the mapping lives exactly as long as some param still uses it.
//
// The mapping is private and read-only. As with any mmap, truncating the file while it is mapped
// makes later accesses fault; replace artifacts by writing a new file and renaming it.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "core/common/buffer.h"
#include "core/common/status.h"

namespace weave {

class MappedFile {
 public:
  // Maps `path`; an empty file yields an empty span without a mapping.
  [[nodiscard]] static Expected<std::shared_ptr<const MappedFile>> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  [[nodiscard]] std::span<const std::byte> bytes() const {
    return {static_cast<const std::byte*>(addr_), size_};
  }
  // The whole mapping as SharedBytes that keep it alive.
  [[nodiscard]] static SharedBytes share(std::shared_ptr<const MappedFile> file);

 private:
  MappedFile() = default;
  void* addr_ = nullptr;
  std::size_t size_ = 0;
};

// Reads a whole file into a 64-byte aligned heap block (the non-mmap path).
[[nodiscard]] Expected<SharedBytes> read_whole_file(const std::string& path);

}  // namespace weave
