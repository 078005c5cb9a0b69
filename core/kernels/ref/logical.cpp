// The logical ops And, Or and Xor (the broadcasting binary kernel of elementwise.h) and Not (its
// unary kernel), on bool tensors.
#include <cstdint>

#include "core/kernels/ref/elementwise.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::Bin;
using kern::kB;
using kern::make_binary;
using kern::make_unary;
using kern::UParams;

struct Not {
  static uint8_t f(uint8_t x, const UParams&) { return x == 0 ? 1 : 0; }
};

}  // namespace

void register_logical(KernelRegistry& r) {
  r.add("And", &make_binary<Bin::land>);
  r.add("Or", &make_binary<Bin::lor>);
  r.add("Xor", &make_binary<Bin::lxor>);
  r.add("Not", &make_unary<Not, kB>);
}

}  // namespace weave
