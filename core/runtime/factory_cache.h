// The process-wide factory cache (R3): every caller asking for the same model (same file,
// size, modification time and compile options) gets the same Factory; it is freed when its
// last user lets go (the cache holds only weak references). Concurrent first requests for one
// key load it once: the others wait for that load instead of loading again.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/common/status.h"
#include "core/runtime/factory.h"

namespace weave {

class FactoryCache {
 public:
  using Loader = std::function<Expected<std::shared_ptr<const Factory>>()>;

  static FactoryCache& global();

  [[nodiscard]] Expected<std::shared_ptr<const Factory>> get(const std::string& key, const Loader& load);
  // Factories alive in the cache now.
  [[nodiscard]] std::size_t live() const;
  [[nodiscard]] uint64_t hits() const;
  [[nodiscard]] uint64_t misses() const;

 private:
  struct Entry {
    std::mutex loading;
    std::weak_ptr<const Factory> factory;
  };
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
  uint64_t hits_ = 0, misses_ = 0;
};

// "path|size|mtime_ns|options" for an existing file, or an error naming the missing file.
[[nodiscard]] Expected<std::string> model_cache_key(const std::string& path, const std::string& options);

}  // namespace weave
