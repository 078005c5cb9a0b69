#include "core/common/tensor.h"

#include <cstring>

namespace weave {

int64_t TensorInfo::bytes() const {
  int64_t n = shape_numel(shape);
  return n < 0 ? -1 : n * static_cast<int64_t>(dtype_size(dtype));
}

std::string TensorInfo::str() const {
  return std::string(dtype_name(dtype)) + "[" + shape_str(shape, dim_names) + "]";
}

Tensor::Tensor(DType dtype, Dims dims)
    : dtype_(dtype), dims_(dims), buf_(static_cast<std::size_t>(dims.numel()) * dtype_size(dtype)) {}

Tensor Tensor::copy_of(ConstTensorView v) {
  Tensor t(v.dtype, v.dims);
  if (t.bytes()) std::memcpy(t.data(), v.data, t.bytes());
  return t;
}

}  // namespace weave
