#include "core/runtime/factory_cache.h"

#include <filesystem>
#include <system_error>

namespace weave {

FactoryCache& FactoryCache::global() {
  static FactoryCache* c = new FactoryCache();  // outlives static destructors of users
  return *c;
}

Expected<std::shared_ptr<const Factory>> FactoryCache::get(const std::string& key, const Loader& load) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& e = entries_[key];
    if (!e) e = std::make_shared<Entry>();
    entry = e;
    // Drop entries whose factories are gone, so the map does not grow with every model ever seen.
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second != entry && it->second->factory.expired() && it->second.use_count() == 1)
        it = entries_.erase(it);
      else
        ++it;
    }
  }
  std::lock_guard<std::mutex> loading(entry->loading);
  if (auto f = entry->factory.lock()) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++hits_;
    return f;
  }
  auto f = load();
  if (!f) return f.error();
  entry->factory = *f;
  std::lock_guard<std::mutex> lock(mutex_);
  ++misses_;
  return *f;
}

std::size_t FactoryCache::live() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t n = 0;
  for (const auto& [k, e] : entries_)
    if (!e->factory.expired()) ++n;
  return n;
}

uint64_t FactoryCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

uint64_t FactoryCache::misses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misses_;
}

Expected<std::string> model_cache_key(const std::string& path, const std::string& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path canon = fs::canonical(path, ec);
  if (ec) return make_error(path, ": ", ec.message());
  auto size = fs::file_size(canon, ec);
  if (ec) return make_error(path, ": ", ec.message());
  auto mtime = fs::last_write_time(canon, ec);
  if (ec) return make_error(path, ": ", ec.message());
  return canon.string() + "|" + std::to_string(size) + "|" +
         std::to_string(mtime.time_since_epoch().count()) + "|" + options;
}

}  // namespace weave
