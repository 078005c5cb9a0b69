#include "core/common/dims.h"

#include <charconv>

namespace weave {

int64_t shape_numel(std::span<const int64_t> shape) {
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    empty = empty || d == 0;
  }
  if (empty) return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

bool dims_within_plan(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return false;
    if (d > 0 && (__builtin_mul_overflow(n, d, &n) || n > kMaxPlannedBytes)) return false;
  }
  return true;
}

int64_t checked_bytes(std::span<const int64_t> dims, std::size_t elem_size) {
  // A zero dim makes the size 0 whatever the others are (a 2^62 x 0 tensor is empty, not an
  // overflow), so zeros are looked for before multiplying.
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    empty = empty || d == 0;
  }
  if (empty) return 0;
  // The element count must fit too, also for an element size of 0 (an untyped value), whose
  // byte count would otherwise hide an element count that overflows every later numel().
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n)) return -1;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(elem_size), &n)) return -1;
  return n;
}

bool shape_is_static(std::span<const int64_t> shape) {
  for (int64_t d : shape)
    if (d < 0) return false;
  return true;
}

std::string shape_str(std::span<const int64_t> shape, std::span<const std::string> dim_names) {
  if (shape.empty()) return "scalar";
  // Symbolic names may contain 'x' or digits, so a named shape is written with commas.
  bool named = false;
  for (std::size_t i = 0; i < shape.size() && i < dim_names.size(); ++i)
    named = named || (shape[i] < 0 && !dim_names[i].empty());
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += named ? ',' : 'x';
    if (shape[i] >= 0)
      s += std::to_string(shape[i]);
    else if (i < dim_names.size() && !dim_names[i].empty())
      s += dim_names[i];
    else
      s += '?';
  }
  return s;
}

bool parse_shape(const std::string& text, Shape& out) {
  out.clear();
  if (text.empty()) return false;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    int64_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || v < 0) return false;
    out.push_back(v);
    p = next;
    if (p == end) break;
    if (*p != 'x' && *p != ',' && *p != 'X') return false;
    ++p;
    if (p == end) return false;
  }
  return out.size() <= static_cast<std::size_t>(kMaxRank);
}

Dims strides_of(const Dims& d) {
  Dims s;
  s.resize(d.rank());
  // An empty tensor has no element to address, and its other dims may multiply past int64:
  // its strides are all 0.
  if (d.numel() == 0) {
    for (int i = 0; i < d.rank(); ++i) s[i] = 0;
    return s;
  }
  int64_t acc = 1;
  for (int i = d.rank() - 1; i >= 0; --i) {
    s[i] = acc;
    if (i > 0) acc *= d[i];  // the whole product (numel) is not needed
  }
  return s;
}

}  // namespace weave
