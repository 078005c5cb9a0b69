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

Expected<TensorLayout> check_tensor(const onnx::TensorProto& t, const std::string& what) {
  TensorLayout out;
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
  const uint64_t esize = dtype_size(out.dtype);
  for (int64_t d : t.dims()) {
    if (d < 0) return make_error(what, ": negative dimension ", d);
    out.shape.push_back(d);
    if (d != 0 && out.numel > kMaxTensorBytes / static_cast<uint64_t>(d))
      return make_error(what, ": shape ", shape_str(out.shape), " is too large");
    out.numel *= static_cast<uint64_t>(d);
  }
  if (out.numel * esize > kMaxTensorBytes)
    return make_error(what, ": tensor of ", out.numel * esize, " bytes is too large");
  const uint64_t nbytes = out.numel * esize;
  if (t.has_raw_data()) {
    if (t.raw_data().size() != nbytes)
      return make_error(what, ": raw_data holds ", t.raw_data().size(), " bytes, ", dtype_name(out.dtype),
                        "[", shape_str(out.shape), "] needs ", nbytes);
    return out;
  }
  int have = 0;
  switch (out.dtype) {
    case DType::float32:
      have = t.float_data_size();
      break;
    case DType::float64:
      have = t.double_data_size();
      break;
    case DType::int64:
      have = t.int64_data_size();
      break;
    case DType::uint32:
    case DType::uint64:
      have = t.uint64_data_size();
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
      have = t.int32_data_size();
      break;
    default:
      return make_error(what, ": unsupported element type ", dtype_name(out.dtype));
  }
  if (static_cast<uint64_t>(have) != out.numel)
    return make_error(what, ": holds ", have, " elements, ", dtype_name(out.dtype), "[", shape_str(out.shape),
                      "] needs ", out.numel);
  return out;
}

Expected<DecodedTensor> decode_tensor(const onnx::TensorProto& t, const std::string& what) {
  auto layout = check_tensor(t, what);
  if (!layout) return layout.error();
  DecodedTensor out;
  out.dtype = layout->dtype;
  out.shape = std::move(layout->shape);
  if (t.has_raw_data()) {
    out.bytes.assign(t.raw_data().begin(), t.raw_data().end());
    return out;
  }
  switch (out.dtype) {
    case DType::float32:
      copy_converted<float>(t.float_data(), out.bytes, [](float v) { return v; });
      break;
    case DType::float64:
      copy_converted<double>(t.double_data(), out.bytes, [](double v) { return v; });
      break;
    case DType::int64:
      copy_converted<int64_t>(t.int64_data(), out.bytes, [](int64_t v) { return v; });
      break;
    case DType::uint32:
      copy_converted<uint32_t>(t.uint64_data(), out.bytes,
                               [](uint64_t v) { return static_cast<uint32_t>(v); });
      break;
    case DType::uint64:
      copy_converted<uint64_t>(t.uint64_data(), out.bytes, [](uint64_t v) { return v; });
      break;
    // ONNX stores the narrower types widened into int32_data (float16 and bfloat16 as bit patterns).
    case DType::int32:
      copy_converted<int32_t>(t.int32_data(), out.bytes, [](int32_t v) { return v; });
      break;
    case DType::int16:
      copy_converted<int16_t>(t.int32_data(), out.bytes, [](int32_t v) { return static_cast<int16_t>(v); });
      break;
    case DType::int8:
      copy_converted<int8_t>(t.int32_data(), out.bytes, [](int32_t v) { return static_cast<int8_t>(v); });
      break;
    case DType::uint16:
    case DType::float16:
    case DType::bfloat16:
      copy_converted<uint16_t>(t.int32_data(), out.bytes, [](int32_t v) { return static_cast<uint16_t>(v); });
      break;
    case DType::uint8:
      copy_converted<uint8_t>(t.int32_data(), out.bytes, [](int32_t v) { return static_cast<uint8_t>(v); });
      break;
    case DType::boolean:
      copy_converted<uint8_t>(t.int32_data(), out.bytes,
                              [](int32_t v) { return static_cast<uint8_t>(v != 0); });
      break;
    default:  // refused by check_tensor
      break;
  }
  return out;
}

}  // namespace weave::onnx_import
