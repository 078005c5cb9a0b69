#include "core/kernels/registry.h"

namespace weave {

void register_gemm_kernels(KernelRegistry&) {}

}  // namespace weave
