// Tensors as the API and the kernels see them.
//  - TensorInfo: name, dtype and static (possibly dynamic) shape; metadata, caps, the CLI.
//  - TensorView / ConstTensorView: non-owning pointer + dtype + concrete Dims; the run path.
//  - Tensor: an owning, 64-byte aligned tensor value (stateless API, tests, the CLI).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/common/buffer.h"
#include "core/common/dims.h"
#include "core/common/dtype.h"

namespace weave {

struct TensorInfo {
  std::string name;
  DType dtype = DType::undefined;
  Shape shape;                         // kDynamic marks a dim fixed only when inputs are bound
  std::vector<std::string> dim_names;  // symbolic names of dynamic dims ("batch", "height"), may be empty
  // Bytes of the tensor; -1 if the shape is dynamic.
  [[nodiscard]] int64_t bytes() const;
  // "float32[1x3x?x?]"
  [[nodiscard]] std::string str() const;
};

struct ConstTensorView {
  const void* data = nullptr;
  DType dtype = DType::undefined;
  Dims dims;
  template <class T>
  [[nodiscard]] const T* as() const {
    return static_cast<const T*>(data);
  }
  [[nodiscard]] int64_t numel() const { return dims.numel(); }
  [[nodiscard]] std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
  [[nodiscard]] bool present() const { return dtype != DType::undefined; }
};

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::undefined;
  Dims dims;
  template <class T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(data);
  }
  [[nodiscard]] int64_t numel() const { return dims.numel(); }
  [[nodiscard]] std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
  [[nodiscard]] bool present() const { return dtype != DType::undefined; }
  operator ConstTensorView() const { return {data, dtype, dims}; }  // NOLINT: views convert freely
};

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Dims dims);  // zero-filled
  template <class T>
  static Tensor from(Dims dims, std::span<const T> values);
  [[nodiscard]] DType dtype() const { return dtype_; }
  [[nodiscard]] const Dims& dims() const { return dims_; }
  [[nodiscard]] int64_t numel() const { return dims_.numel(); }
  [[nodiscard]] std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }
  [[nodiscard]] void* data() { return buf_.data(); }
  [[nodiscard]] const void* data() const { return buf_.data(); }
  template <class T>
  [[nodiscard]] T* as() {
    return reinterpret_cast<T*>(buf_.data());
  }
  template <class T>
  [[nodiscard]] const T* as() const {
    return reinterpret_cast<const T*>(buf_.data());
  }
  [[nodiscard]] TensorView view() { return {buf_.data(), dtype_, dims_}; }
  [[nodiscard]] ConstTensorView view() const { return {buf_.data(), dtype_, dims_}; }
  [[nodiscard]] std::span<const std::byte> raw() const { return {buf_.data(), bytes()}; }
  // Deep copy of a view.
  static Tensor copy_of(ConstTensorView v);

 private:
  DType dtype_ = DType::undefined;
  Dims dims_;
  AlignedBuffer buf_;
};

template <class T>
Tensor Tensor::from(Dims dims, std::span<const T> values) {
  Tensor t(dtype_of_v<T>, dims);
  T* p = t.as<T>();
  for (std::size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i) p[i] = values[i];
  return t;
}

}  // namespace weave
