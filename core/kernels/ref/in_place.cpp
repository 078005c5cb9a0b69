// in_place_inputs (core/kernels/in_place.h): which reference kernels may write their output over
// one of their inputs. The elementwise kernels know it of themselves (elementwise.h).
#include "core/kernels/in_place.h"

#include <cstdint>

#include "core/kernels/ref/elementwise.h"

namespace weave {
namespace {

using kern::Bin;
using kern::BinaryKernel;
using kern::is_clip_kernel;
using kern::is_pow_kernel;
using kern::UnaryKernel;

}  // namespace

// Unary maps and Clip read x[i] and write y[i] in one pass; a two-input binary op reads a[j]
// and b[j] (or a broadcast scalar) for o[j]. Variadic Sum/Mean with more than two inputs
// accumulate into the output, so an input after the first two would be overwritten before it
// is read: the planner only aliases two-input nodes. Comparisons change the dtype (never equal).
uint32_t in_place_inputs(const Kernel& kernel) {
  if (const uint32_t own = kernel.in_place(); own != 0) return own;
  const Kernel* k = &kernel;
  if (dynamic_cast<const UnaryKernel*>(k) || is_clip_kernel(kernel)) return 1u;
  if (dynamic_cast<const BinaryKernel<Bin::add>*>(k) || dynamic_cast<const BinaryKernel<Bin::sub>*>(k) ||
      dynamic_cast<const BinaryKernel<Bin::mul>*>(k) || dynamic_cast<const BinaryKernel<Bin::div>*>(k) ||
      dynamic_cast<const BinaryKernel<Bin::max>*>(k) || dynamic_cast<const BinaryKernel<Bin::min>*>(k) ||
      is_pow_kernel(kernel))
    return 3u;
  return 0u;
}

}  // namespace weave
