// Little-endian byte writer and a bounds-checked reader for the .weave format.
//
// The reader never reads past its span and never throws. The first failure is sticky: later
// reads return zero/empty values and ok() stays false, so a parser can read a whole record and
// check ok() once. Counts are checked against the bytes that remain *before* the caller
// allocates anything, which bounds every allocation by the file size.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace weave {

class ByteWriter {
 public:
  void u8(uint8_t v) { buf_.push_back(static_cast<std::byte>(v)); }
  void u16(uint16_t v) { put_le(v, 2); }
  void u32(uint32_t v) { put_le(v, 4); }
  void u64(uint64_t v) { put_le(v, 8); }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void f32(float v) { u32(std::bit_cast<uint32_t>(v)); }
  // u32 byte length, then the bytes (no terminator).
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    buf_.insert(buf_.end(), p, p + s.size());
  }
  void bytes(std::span<const std::byte> b) { buf_.insert(buf_.end(), b.begin(), b.end()); }
  void zeros(std::size_t n) { buf_.resize(buf_.size() + n, std::byte{0}); }
  void pad_to(std::size_t alignment) { zeros((alignment - buf_.size() % alignment) % alignment); }
  void patch_u32(std::size_t at, uint32_t v) { patch_le(at, v, 4); }
  void patch_u64(std::size_t at, uint64_t v) { patch_le(at, v, 8); }
  [[nodiscard]] std::size_t size() const { return buf_.size(); }
  [[nodiscard]] std::span<const std::byte> view() const { return buf_; }
  [[nodiscard]] std::vector<std::byte> take() { return std::move(buf_); }

 private:
  void put_le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) buf_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
  }
  void patch_le(std::size_t at, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) buf_[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
  }
  std::vector<std::byte> buf_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> data) : data_(data) {}

  [[nodiscard]] bool ok() const { return error_.empty(); }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] std::size_t offset() const { return pos_; }
  [[nodiscard]] std::size_t remaining() const { return data_.size() - pos_; }
  [[nodiscard]] bool at_end() const { return pos_ == data_.size(); }

  // Records the first failure; later reads yield zeros.
  void fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    pos_ = data_.size();
  }

  uint8_t u8() { return static_cast<uint8_t>(get_le(1, "u8")); }
  uint16_t u16() { return static_cast<uint16_t>(get_le(2, "u16")); }
  uint32_t u32() { return static_cast<uint32_t>(get_le(4, "u32")); }
  uint64_t u64() { return get_le(8, "u64"); }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  float f32() { return std::bit_cast<float>(u32()); }

  std::span<const std::byte> bytes(std::size_t n, std::string_view what = "bytes") {
    if (!need(n, what)) return {};
    auto s = data_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::string str(std::string_view what = "string") {
    uint32_t n = u32();
    auto b = bytes(n, what);
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }
  // Reads a u32 element count and checks that `count` elements of at least `min_element_bytes`
  // each can still fit in what remains, so that the caller may reserve `count` safely.
  uint32_t count(std::size_t min_element_bytes, std::string_view what) {
    std::size_t at = pos_;
    uint32_t n = u32();
    if (!ok()) return 0;
    if (min_element_bytes > 0 && static_cast<uint64_t>(n) > remaining() / min_element_bytes) {
      fail("count of " + std::string(what) + " at offset " + std::to_string(at) + " is " + std::to_string(n) +
           ", but only " + std::to_string(remaining()) + " bytes remain");
      return 0;
    }
    return n;
  }

 private:
  bool need(std::size_t n, std::string_view what) {
    if (!ok()) return false;
    if (n > remaining()) {
      fail("truncated: " + std::string(what) + " at offset " + std::to_string(pos_) + " needs " +
           std::to_string(n) + " bytes, only " + std::to_string(remaining()) + " remain");
      return false;
    }
    return true;
  }
  uint64_t get_le(int n, std::string_view what) {
    if (!need(static_cast<std::size_t>(n), what)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(data_[pos_ + i]) << (8 * i);
    pos_ += static_cast<std::size_t>(n);
    return v;
  }

  std::span<const std::byte> data_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace weave
