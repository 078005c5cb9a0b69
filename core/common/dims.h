// Shapes. `Shape` is the static, possibly dynamic shape of the graph IR (a dim of kDynamic is
// unknown until inputs are bound). `Dims` is the concrete shape used on the run path: a fixed
// capacity value type, so building or copying one never allocates.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace weave {

inline constexpr int64_t kDynamic = -1;
inline constexpr int kMaxRank = 8;

using Shape = std::vector<int64_t>;

class Dims {
 public:
  Dims() = default;
  Dims(std::initializer_list<int64_t> d) { assign(std::span<const int64_t>(d.begin(), d.size())); }
  explicit Dims(std::span<const int64_t> d) { assign(d); }
  // Callers validate rank <= kMaxRank before constructing (import rejects larger ranks).
  void assign(std::span<const int64_t> d) {
    rank_ = static_cast<int>(d.size() < kMaxRank ? d.size() : kMaxRank);
    for (int i = 0; i < rank_; ++i) d_[i] = d[i];
  }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] std::size_t size() const { return static_cast<std::size_t>(rank_); }
  int64_t& operator[](int i) { return d_[i]; }
  int64_t operator[](int i) const { return d_[i]; }
  [[nodiscard]] std::span<const int64_t> span() const { return {d_.data(), size()}; }
  [[nodiscard]] const int64_t* begin() const { return d_.data(); }
  [[nodiscard]] const int64_t* end() const { return d_.data() + rank_; }
  void push_back(int64_t v) { d_[rank_++] = v; }
  void resize(int r) {
    for (int i = rank_; i < r; ++i) d_[i] = 1;
    rank_ = r;
  }
  // A zero dim anywhere makes the product 0 even when the other dims' product would overflow
  // (an empty tensor of a hostile shape must not be undefined behaviour).
  [[nodiscard]] int64_t numel() const {
    for (int i = 0; i < rank_; ++i)
      if (d_[i] == 0) return 0;
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= d_[i];
    return n;
  }
  [[nodiscard]] Shape to_shape() const { return Shape(begin(), end()); }
  friend bool operator==(const Dims& a, const Dims& b) {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i)
      if (a.d_[i] != b.d_[i]) return false;
    return true;
  }

 private:
  std::array<int64_t, kMaxRank> d_{};
  int rank_ = 0;
};

// The largest tensor a shape plan admits (model inputs, max-shape bounds and every value a kernel
// infers), in bytes. Keeps hostile dims from overflowing size arithmetic or asking for absurd
// arenas: a plan beyond it is an error naming the tensor, not an allocation attempt.
inline constexpr int64_t kMaxPlannedBytes = int64_t{1} << 40;

// True when every dim is >= 0 and the dims, a zero counted as one, multiply to at most
// kMaxPlannedBytes. An empty tensor's other dims then obey the bound a full tensor's do, so a
// kernel may multiply any of a tensor's dims (outer/inner splits, strides) without overflow:
// 0 x 2^62 x 2^62 holds no bytes but is refused (fuzz_onnx: Softmax of such a constant).
[[nodiscard]] bool dims_within_plan(std::span<const int64_t> dims);

// numel * elem_size when every dim is >= 0 and the product fits in int64; -1 otherwise.
[[nodiscard]] int64_t checked_bytes(std::span<const int64_t> dims, std::size_t elem_size);

// Product of dims; -1 if any dim is dynamic or the product does not fit in int64 (shapes from
// a model file are untrusted; a zero dim makes the product 0 whatever the others are).
[[nodiscard]] int64_t shape_numel(std::span<const int64_t> shape);
[[nodiscard]] bool shape_is_static(std::span<const int64_t> shape);
// "1x3x224x224"; dynamic dims print as "?", or as their symbolic names when given, in which
// case dims are separated by commas ("batch,3,224,224").
[[nodiscard]] std::string shape_str(std::span<const int64_t> shape,
                                    std::span<const std::string> dim_names = {});
// Parses "1x3x224x224" (also accepts ',' as separator). Returns false on malformed text.
[[nodiscard]] bool parse_shape(const std::string& text, Shape& out);
// Row-major strides of a concrete shape; all 0 for an empty one (its dims may not multiply).
[[nodiscard]] Dims strides_of(const Dims& d);

}  // namespace weave
