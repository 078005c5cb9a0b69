#include "core/import/onnx_tensor.h"

#include <cstring>
#include <limits>

#include "onnx/onnx_pb.h"

namespace weave::onnx_import {

namespace {

// Copies `src` (already of the right element count) into `out`, converting each element with
// `conv` into the destination type D.
template <class D, class Src, class Conv>
void copy_converted(const Src& src, std::vector<uint8_t>& out, Conv conv) {
  out.resize(static_cast<std::size_t>(src.size()) * sizeof(D));
  auto* dst = reinterpret_cast<uint8_t*>(out.data());
  for (int i = 0; i < src.size(); ++i) {
    D v = conv(src.Get(i));
    std::memcpy(dst + static_cast<std::size_t>(i) * sizeof(D), &v, sizeof(D));
  }
}

}  // namespace

Expected<DecodedTensor> decode_tensor(const onnx::TensorProto& t, const std::string& what) {
  DecodedTensor out;
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0)
    return make_error(what,
                      ": uses external data, which is not supported (save the model with "
                      "all tensors embedded, e.g. onnx.save(..., save_as_external_data=False))");
  if (t.has_segment()) return make_error(what, ": segmented tensors are not supported");
  if (t.data_type() == onnx::TensorProto::STRING)
    return make_error(what, ": string tensors are not supported");
  if (!dtype_valid(t.data_type()) || dtype_size(static_cast<DType>(t.data_type())) == 0)
    return make_error(what, ": unsupported element type ", t.data_type());
  out.dtype = static_cast<DType>(t.data_type());
  if (t.dims_size() > kMaxRank)
    return make_error(what, ": rank ", t.dims_size(), " exceeds the maximum of ", kMaxRank);
  uint64_t numel = 1;
  const uint64_t esize = dtype_size(out.dtype);
  for (int64_t d : t.dims()) {
    if (d < 0) return make_error(what, ": negative dimension ", d);
    out.shape.push_back(d);
    if (d != 0 && numel > kMaxTensorBytes / static_cast<uint64_t>(d))
      return make_error(what, ": shape ", shape_str(out.shape), " is too large");
    numel *= static_cast<uint64_t>(d);
  }
  if (numel * esize > kMaxTensorBytes)
    return make_error(what, ": tensor of ", numel * esize, " bytes is too large");
  const uint64_t nbytes = numel * esize;

  if (t.has_raw_data()) {
    if (t.raw_data().size() != nbytes)
      return make_error(what, ": raw_data holds ", t.raw_data().size(), " bytes, ", dtype_name(out.dtype),
                        "[", shape_str(out.shape), "] needs ", nbytes);
    out.bytes.assign(t.raw_data().begin(), t.raw_data().end());
    return out;
  }

  auto count_mismatch = [&](int have) {
    return make_error(what, ": holds ", have, " elements, ", dtype_name(out.dtype), "[", shape_str(out.shape),
                      "] needs ", numel);
  };
  switch (out.dtype) {
    case DType::float32:
      if (static_cast<uint64_t>(t.float_data_size()) != numel) return count_mismatch(t.float_data_size());
      copy_converted<float>(t.float_data(), out.bytes, [](float v) { return v; });
      break;
    case DType::float64:
      if (static_cast<uint64_t>(t.double_data_size()) != numel) return count_mismatch(t.double_data_size());
      copy_converted<double>(t.double_data(), out.bytes, [](double v) { return v; });
      break;
    case DType::int64:
      if (static_cast<uint64_t>(t.int64_data_size()) != numel) return count_mismatch(t.int64_data_size());
      copy_converted<int64_t>(t.int64_data(), out.bytes, [](int64_t v) { return v; });
      break;
    case DType::uint32:
    case DType::uint64:
      if (static_cast<uint64_t>(t.uint64_data_size()) != numel) return count_mismatch(t.uint64_data_size());
      if (out.dtype == DType::uint32)
        copy_converted<uint32_t>(t.uint64_data(), out.bytes,
                                 [](uint64_t v) { return static_cast<uint32_t>(v); });
      else
        copy_converted<uint64_t>(t.uint64_data(), out.bytes, [](uint64_t v) { return v; });
      break;
    case DType::int32:
    case DType::int16:
    case DType::int8:
    case DType::uint16:
    case DType::uint8:
    case DType::boolean:
    case DType::float16:
    case DType::bfloat16:
      // ONNX stores all of these widened into int32_data (float16 and bfloat16 as bit patterns).
      if (static_cast<uint64_t>(t.int32_data_size()) != numel) return count_mismatch(t.int32_data_size());
      switch (out.dtype) {
        case DType::int32:
          copy_converted<int32_t>(t.int32_data(), out.bytes, [](int32_t v) { return v; });
          break;
        case DType::int16:
          copy_converted<int16_t>(t.int32_data(), out.bytes,
                                  [](int32_t v) { return static_cast<int16_t>(v); });
          break;
        case DType::int8:
          copy_converted<int8_t>(t.int32_data(), out.bytes, [](int32_t v) { return static_cast<int8_t>(v); });
          break;
        case DType::uint16:
        case DType::float16:
        case DType::bfloat16:
          copy_converted<uint16_t>(t.int32_data(), out.bytes,
                                   [](int32_t v) { return static_cast<uint16_t>(v); });
          break;
        case DType::uint8:
          copy_converted<uint8_t>(t.int32_data(), out.bytes,
                                  [](int32_t v) { return static_cast<uint8_t>(v); });
          break;
        default:  // boolean
          copy_converted<uint8_t>(t.int32_data(), out.bytes,
                                  [](int32_t v) { return static_cast<uint8_t>(v != 0); });
          break;
      }
      break;
    default:
      return make_error(what, ": unsupported element type ", dtype_name(out.dtype));
  }
  return out;
}

}  // namespace weave::onnx_import
