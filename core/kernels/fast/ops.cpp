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

}  // namespace weave::fast
