// Conversion of ONNX TensorProto values (initializers, Constant node attributes, tensor
// attributes) into Weave's byte-exact representation. Every count and size read from the file
// is checked before it is used, so a hostile model yields an Error rather than a huge
// allocation or an out-of-bounds read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/dims.h"
#include "core/common/dtype.h"
#include "core/common/status.h"

namespace onnx {
class TensorProto;
}

namespace weave::onnx_import {

struct DecodedTensor {
  DType dtype = DType::undefined;
  Shape shape;
  std::vector<uint8_t> bytes;  // numel * dtype_size, little-endian, C-contiguous
};

// What a TensorProto holds, once checked: its element type, dims and element count.
struct TensorLayout {
  DType dtype = DType::undefined;
  Shape shape;
  uint64_t numel = 1;
};

// Checks a TensorProto without copying it: a supported element type, sane dims, at most
// kMaxTensorBytes, and raw_data or the typed field holding exactly the elements the dims say.
[[nodiscard]] Expected<TensorLayout> check_tensor(const onnx::TensorProto& t, const std::string& what);

// Decodes raw_data or the typed fields (float_data, int32_data, int64_data, double_data,
// uint64_data). External data, string tensors and segmented tensors are rejected. `what` names
// the tensor in messages ("initializer 'conv1.weight'").
[[nodiscard]] Expected<DecodedTensor> decode_tensor(const onnx::TensorProto& t, const std::string& what);

// Largest tensor the importer accepts (bytes); guards against absurd dims in hostile files.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{4} << 30;

}  // namespace weave::onnx_import
