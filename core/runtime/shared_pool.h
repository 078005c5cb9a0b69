// Process-wide thread pools (R12). Every element or application asking for N threads gets the
// same pool for that N while someone holds it, so N instances of a model do not start N pools:
// executors sharing a pool serialize their parallel sections instead of oversubscribing cores.
#pragma once

#include <memory>

#include "core/common/parallel.h"

namespace weave {

// Threads used for `requested` = 0 ("auto"): the machine's hardware concurrency (at least 1).
[[nodiscard]] int auto_thread_count();

// The shared pool for `threads` (0 = auto). Returns nullptr for one thread: run on the caller.
[[nodiscard]] std::shared_ptr<const Parallel> shared_thread_pool(int threads);

}  // namespace weave
