#include "core/kernels/pixels.h"

#if WEAVE_HAVE_FAST
#include "core/kernels/fast/fast_ops.h"
#endif

namespace weave {

PixelsToPlanes fast_pixels_to_planes() {
#if WEAVE_HAVE_FAST
  if (const fast::Ops* ops = fast::ops()) return ops->pixels_to_planes;
#endif
  return nullptr;
}

}  // namespace weave
