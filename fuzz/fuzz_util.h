// Helpers shared by the libFuzzer targets in fuzz/ (built with -Dfuzzing=true, see
// docs/reliability.md). A target returns normally for every input it rejects with a clean
// error; anything else the sanitizers or these checks see is a crash libFuzzer records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

namespace weave::fuzz {

inline std::span<const std::byte> as_bytes(const uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

// An invariant of the code under test broke (e.g. a round trip changed the value): report it
// and abort so that libFuzzer saves the input.
[[noreturn]] inline void fail(std::string_view what) {
  std::fprintf(stderr, "fuzz invariant violated: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

inline void check(bool ok, std::string_view what) {
  if (!ok) fail(what);
}

// A failure must say something: an empty message is a defect of the error path.
template <class E>
void check_error(const E& result, std::string_view where) {
  if (result.message().empty()) fail(std::string(where) + ": failure with an empty message");
}

// Takes little-endian integers and bytes off the front of the input; yields zeros once empty.
class Input {
 public:
  Input(const uint8_t* data, std::size_t size) : p_(data), n_(size) {}
  uint8_t u8() { return n_ ? (--n_, *p_++) : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(u8()) << (8 * i);
    return v;
  }
  bool empty() const { return n_ == 0; }
  std::span<const std::byte> rest() {
    auto s = as_bytes(p_, n_);
    p_ += n_;
    n_ = 0;
    return s;
  }
  std::string_view take_string(std::size_t max) {
    std::size_t len = std::min<std::size_t>(u8(), std::min(max, n_));
    std::string_view s(reinterpret_cast<const char*>(p_), len);
    p_ += len;
    n_ -= len;
    return s;
  }

 private:
  const uint8_t* p_;
  std::size_t n_;
};

}  // namespace weave::fuzz
