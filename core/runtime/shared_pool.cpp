#include "core/runtime/shared_pool.h"

#include <map>
#include <mutex>
#include <thread>

#include "core/runtime/thread_pool.h"

namespace weave {

int auto_thread_count() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

std::shared_ptr<const Parallel> shared_thread_pool(int threads) {
  if (threads <= 0) threads = auto_thread_count();
  // More threads than cores only adds contention; cap generously anyway against absurd values.
  if (threads > 256) threads = 256;
  if (threads == 1) return nullptr;
  static std::mutex mutex;
  static auto* pools = new std::map<int, std::weak_ptr<const Parallel>>();  // outlives users
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = (*pools)[threads];
  if (auto p = slot.lock()) return p;
  std::shared_ptr<const Parallel> p = std::make_shared<ThreadPool>(threads);
  slot = p;
  return p;
}

}  // namespace weave
