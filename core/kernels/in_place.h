// Which kernels may write their output over one of their inputs. The memory planner gives an
// output the arena memory of an input that dies at that step (core/runtime/plan.cpp) only when
// the kernel says it is safe here: output element j is computed from element j of that input
// alone (plus other inputs that do not share its memory), read before element j is written,
// with no scratch copy of the input and no reads of neighbours. Kernels that do not know this
// of themselves (every kernel but the reference elementwise ones that core/kernels/ref/in_place.cpp
// names and those whose Kernel::in_place() says so) are never run in place.
#pragma once

#include <cstdint>

#include "core/kernels/kernel.h"

namespace weave {

// Bit k set: input k may share memory with output 0, provided it has exactly output 0's dtype
// and dims (no broadcasting of that input) and the node has one output. For binary ops the
// node must also have exactly two inputs (the planner checks). 0: never in place.
[[nodiscard]] uint32_t in_place_inputs(const Kernel& kernel);

}  // namespace weave
