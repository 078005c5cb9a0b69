// "zlib-shuffle": byte-plane shuffle of 4-byte elements, then deflate. Float weights of a layer
// share exponent and high mantissa bytes; grouping byte k of every element together makes those
// planes highly repetitive, so deflate does markedly better than on the interleaved bytes. A
// tail shorter than one element is kept unshuffled at the end.
#include <cstring>

#include "core/artifact/codec_builtin.h"

namespace weave::codecs {
namespace {

constexpr std::size_t kElem = 4;

void shuffle(std::span<const std::byte> in, std::span<std::byte> out) {
  const std::size_t n = in.size() / kElem;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < kElem; ++k) out[k * n + i] = in[i * kElem + k];
  const std::size_t tail = in.size() - n * kElem;
  if (tail) std::memcpy(out.data() + n * kElem, in.data() + n * kElem, tail);
}

void unshuffle(std::span<const std::byte> in, std::span<std::byte> out) {
  const std::size_t n = in.size() / kElem;
  for (std::size_t k = 0; k < kElem; ++k)
    for (std::size_t i = 0; i < n; ++i) out[i * kElem + k] = in[k * n + i];
  const std::size_t tail = in.size() - n * kElem;
  if (tail) std::memcpy(out.data() + n * kElem, in.data() + n * kElem, tail);
}

class ShuffleCodec final : public Codec {
 public:
  std::string_view name() const override { return "zlib-shuffle"; }
  Expected<std::vector<std::byte>> compress(std::span<const std::byte> in, int level) const override {
    std::vector<std::byte> planes(in.size());
    shuffle(in, planes);
    return deflate_bytes(planes, level);
  }
  Status decompress(std::span<const std::byte> in, std::span<std::byte> out) const override {
    std::vector<std::byte> planes(out.size());
    Status s = inflate_bytes(in, planes);
    if (!s) return make_error("zlib-shuffle: ", s.message());
    unshuffle(planes, out);
    return {};
  }
  uint64_t max_expansion() const override { return 1032; }
};

}  // namespace

std::shared_ptr<const Codec> make_zlib_shuffle() {
  return std::make_shared<ShuffleCodec>();
}

}  // namespace weave::codecs
