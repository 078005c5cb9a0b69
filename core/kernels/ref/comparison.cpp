// The comparisons Equal, Less, Greater, LessOrEqual and GreaterOrEqual: the broadcasting binary
// kernel of elementwise.h (BinaryKernel) with a bool output.
#include "core/kernels/ref/elementwise.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::Bin;
using kern::make_binary;

}  // namespace

void register_comparison(KernelRegistry& r) {
  r.add("Equal", &make_binary<Bin::eq>);
  r.add("Less", &make_binary<Bin::lt>);
  r.add("Greater", &make_binary<Bin::gt>);
  r.add("LessOrEqual", &make_binary<Bin::le>);
  r.add("GreaterOrEqual", &make_binary<Bin::ge>);
}

}  // namespace weave
