// "lz4": one raw LZ4 block (no frame); level <= 0 uses the fast compressor, 1..12 LZ4-HC.
// Compiled only with WEAVE_HAVE_LZ4 (the `lz4` feature option).
#ifdef WEAVE_HAVE_LZ4
#include <lz4.h>
#include <lz4hc.h>

#include "core/artifact/codec_builtin.h"

namespace weave::codecs {
namespace {

class Lz4Codec final : public Codec {
 public:
  std::string_view name() const override { return "lz4"; }
  Expected<std::vector<std::byte>> compress(std::span<const std::byte> in, int level) const override {
    if (in.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE))
      return make_error("lz4: ", in.size(), " bytes exceed LZ4's block limit of ", LZ4_MAX_INPUT_SIZE);
    if (level < -1 || level > LZ4HC_CLEVEL_MAX) return make_error("lz4: level ", level, " is outside -1..12");
    const int n = static_cast<int>(in.size());
    std::vector<std::byte> out(static_cast<std::size_t>(LZ4_compressBound(n)));
    const auto* src = reinterpret_cast<const char*>(in.data());
    auto* dst = reinterpret_cast<char*>(out.data());
    const int cap = static_cast<int>(out.size());
    int written =
        level <= 0 ? LZ4_compress_default(src, dst, n, cap) : LZ4_compress_HC(src, dst, n, cap, level);
    if (written <= 0 && n > 0) return make_error("lz4: compression failed");
    out.resize(static_cast<std::size_t>(written));
    return out;
  }
  Status decompress(std::span<const std::byte> in, std::span<std::byte> out) const override {
    if (in.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE) ||
        out.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE))
      return make_error("lz4: block larger than LZ4's limit");
    int got =
        LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()),
                            static_cast<int>(in.size()), static_cast<int>(out.size()));
    if (got < 0) return make_error("lz4: corrupt block");
    if (static_cast<std::size_t>(got) != out.size())
      return make_error("lz4: block decodes to ", got, " bytes, expected ", out.size());
    return {};
  }
  // A sequence can copy at most 255 bytes per extra length byte.
  uint64_t max_expansion() const override { return 256; }
};

}  // namespace

std::shared_ptr<const Codec> make_lz4() {
  return std::make_shared<Lz4Codec>();
}

}  // namespace weave::codecs
#endif
