// NumPy .npy files: the exchange format of the `weave run` CLI, the tests' reference tensors and
// the apps. Only what NumPy writes for plain C-order arrays is accepted:
//  - format versions 1.0, 2.0 and 3.0 (3.0 only differs by allowing UTF-8 in the header);
//  - descr '<f4' '<f8' '<f2' '<i8' '<i4' '<i2' '|i1' '|u1' '<u2' '<u4' '<u8' '|b1' (little-endian;
//    big-endian arrays are rejected with a message saying so rather than silently byte-swapped);
//  - fortran_order False; rank <= kMaxRank; shape () is a scalar with one element.
// Files are treated as hostile: every offset is bounds-checked, the header is capped at
// kNpyMaxHeaderBytes, the element count is computed without overflow, and the payload must be
// exactly numel * itemsize bytes, checked before anything is allocated, so a tiny file can never
// make the reader allocate a huge tensor.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/tensor.h"

namespace weave {

// NumPy's own reader refuses headers above 10000 bytes by default; we allow a little more.
inline constexpr std::size_t kNpyMaxHeaderBytes = 65536;

// Reads a whole .npy file. Errors start with `path`.
[[nodiscard]] Expected<Tensor> read_npy(const std::string& path);

// Parses an in-memory .npy image. `label` names the source in error messages (a path, a tensor
// name). Boolean elements are normalised to 0/1 so that kernels may read them as C++ bool.
[[nodiscard]] Expected<Tensor> parse_npy(std::span<const std::byte> bytes, const std::string& label);

// Writes `t` as a .npy file (version 1.0). Errors name `path`.
[[nodiscard]] Status write_npy(const std::string& path, ConstTensorView t);

// The bytes of a .npy file holding `t`; the header is padded so the data starts at a multiple
// of 64 bytes, as NumPy does. Returns an empty vector if `t` has an undefined dtype, more than
// kMaxRank dims, a negative dim, or no data pointer while having elements (write_npy reports
// these as errors).
[[nodiscard]] std::vector<std::byte> encode_npy(ConstTensorView t);

}  // namespace weave
