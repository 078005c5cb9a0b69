#include "core/threads/cpu_spread.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#ifdef __linux__
#include <sched.h>
#include <unistd.h>
#endif

namespace weave {

namespace {

std::atomic<int>& enabled_flag() {
  // -1: not read yet.
  static std::atomic<int> flag{-1};
  return flag;
}

#ifdef __linux__

std::mutex g_mutex;
int g_count[CPU_SETSIZE];  // pinned threads per CPU, under g_mutex

thread_local cpu_set_t t_saved;
thread_local int t_cpu = -1;

#endif

}  // namespace

bool CpuSpread::enabled() {
  int v = enabled_flag().load(std::memory_order_relaxed);
  if (v < 0) {
    const char* env = std::getenv("WEAVE_PIN_SLOTS");
    v = env != nullptr && std::strcmp(env, "0") == 0 ? 0 : 1;
    int expected = -1;
    if (!enabled_flag().compare_exchange_strong(expected, v, std::memory_order_relaxed)) v = expected;
  }
  return v == 1;
}

void CpuSpread::set_enabled(bool on) {
  enabled_flag().store(on ? 1 : 0, std::memory_order_relaxed);
}

#ifdef __linux__

bool CpuSpread::pin_current_thread() {
  if (t_cpu >= 0 || !enabled()) return false;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return false;
  const int current = sched_getcpu();
  int cpu = -1;
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (current >= 0 && current < CPU_SETSIZE && CPU_ISSET(current, &allowed) && g_count[current] == 0) {
      cpu = current;
    } else {
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &allowed) && (cpu < 0 || g_count[c] < g_count[cpu])) cpu = c;
    }
    ++g_count[cpu];
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    --g_count[cpu];
    return false;
  }
  t_saved = allowed;
  t_cpu = cpu;
  return true;
}

void CpuSpread::unpin_current_thread() {
  if (t_cpu < 0) return;
  (void)sched_setaffinity(0, sizeof t_saved, &t_saved);
  const std::lock_guard<std::mutex> lock(g_mutex);
  --g_count[t_cpu];
  t_cpu = -1;
}

long CpuSpread::thread_id() {
  return static_cast<long>(gettid());
}

void CpuSpread::keep_off_my_cpu(long tid, int& avoided) {
  if (tid <= 0 || avoided == t_cpu) return;
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return;
  if (t_cpu >= 0) {
    mask = t_saved;  // the caller's own mask before it pinned
    CPU_CLR(t_cpu, &mask);
    if (CPU_COUNT(&mask) == 0) return;
  }
  if (sched_setaffinity(static_cast<pid_t>(tid), sizeof mask, &mask) == 0) avoided = t_cpu;
}

int CpuSpread::pinned_on(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return 0;
  const std::lock_guard<std::mutex> lock(g_mutex);
  return g_count[cpu];
}

#else

bool CpuSpread::pin_current_thread() {
  return false;
}
long CpuSpread::thread_id() {
  return 0;
}
void CpuSpread::keep_off_my_cpu(long, int&) {}
void CpuSpread::unpin_current_thread() {}
int CpuSpread::pinned_on(int) {
  return 0;
}

#endif

}  // namespace weave
