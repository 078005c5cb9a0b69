#include "core/kernels/registry.h"

namespace weave {

void register_softmax_kernels(KernelRegistry&) {}

}  // namespace weave
