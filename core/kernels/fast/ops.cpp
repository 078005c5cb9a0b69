#include <algorithm>
#include <thread>

#include "core/kernels/fast/fast_ops.h"

namespace weave::fast {

const Ops* ops() {
  switch (active_isa()) {
    case Isa::avx512:
      return &ops_avx512();
    case Isa::avx2:
      return &ops_avx2();
    case Isa::none:
      break;
  }
  return nullptr;
}

int64_t scratch_lanes(int64_t most) {
  // Read once: each call reads /sys (about 3 us), and every Conv kernel asks at create.
  static const int64_t hw = std::thread::hardware_concurrency();  // 0 when unknown
  return std::clamp<int64_t>(hw, 1, std::max<int64_t>(1, most));
}

}  // namespace weave::fast
