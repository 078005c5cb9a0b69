// Fuzzes the params codecs' decoders (every codec in CodecRegistry::global(): none, zlib,
// zlib-shuffle, zlib-planes, lz4, zstd, zstd-planes): input = codec selector byte, a 3-byte
// raw size, then the stored bytes, decoded the way the .weave reader does (raw size bounded by
// stored size * max_expansion()). A decode must fail cleanly or fill the buffer exactly. Each
// input also goes through compress -> decompress with the same codec and must come back intact.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/artifact/codec.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weave;
  static const std::vector<std::string> names = [] {
    auto n = CodecRegistry::global().names();
    std::sort(n.begin(), n.end());
    return n;
  }();
  fuzz::Input in(data, size);
  const auto codec = CodecRegistry::global().find(names[in.u8() % names.size()]);
  uint64_t raw = in.u8() | (uint64_t{in.u8()} << 8) | (uint64_t{in.u8()} << 16);
  const auto stored = in.rest();
  raw = std::min<uint64_t>(raw, stored.size() * codec->max_expansion());

  std::vector<std::byte> out(raw);
  Status s = codec->decompress(stored, out);
  if (!s) fuzz::check_error(s, codec->name());

  auto packed = codec->compress(stored, -1);
  if (!packed) {
    fuzz::check_error(packed, codec->name());
    return 0;
  }
  std::vector<std::byte> back(stored.size());
  Status r = codec->decompress(*packed, back);
  fuzz::check(bool(r), std::string(codec->name()) + ": cannot decode what it encoded: " + r.message());
  fuzz::check(stored.empty() || std::memcmp(back.data(), stored.data(), stored.size()) == 0,
              std::string(codec->name()) + ": round trip changed the bytes");
  return 0;
}
