// "zlib": a zlib (RFC 1950) stream of the raw bytes. Always available.
#include <zlib.h>

#include "core/artifact/codec_builtin.h"

namespace weave::codecs {

Expected<std::vector<std::byte>> deflate_bytes(std::span<const std::byte> in, int level) {
  if (level < -1 || level > 9) return make_error("zlib: level ", level, " is outside -1..9");
  uLongf out_len = compressBound(static_cast<uLong>(in.size()));
  std::vector<std::byte> out(out_len);
  int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &out_len, reinterpret_cast<const Bytef*>(in.data()),
                     static_cast<uLong>(in.size()), level);
  if (rc != Z_OK) return make_error("zlib: compression failed (", zError(rc), ")");
  out.resize(out_len);
  return out;
}

Status inflate_bytes(std::span<const std::byte> in, std::span<std::byte> out) {
  uLongf out_len = static_cast<uLongf>(out.size());
  uLong in_len = static_cast<uLong>(in.size());
  // uncompress2 rejects a NULL destination even for 0 bytes; a dummy byte keeps it honest.
  Bytef dummy = 0;
  Bytef* dst = out.empty() ? &dummy : reinterpret_cast<Bytef*>(out.data());
  int rc = uncompress2(dst, &out_len, reinterpret_cast<const Bytef*>(in.data()), &in_len);
  if (rc == Z_BUF_ERROR && out_len == out.size())
    return make_error("zlib: data inflates to more than the declared ", out.size(), " bytes");
  if (rc != Z_OK) return make_error("zlib: corrupt stream (", zError(rc), ")");
  if (out_len != out.size())
    return make_error("zlib: data inflates to ", out_len, " bytes, expected ", out.size());
  if (in_len != in.size()) return make_error("zlib: ", in.size() - in_len, " trailing bytes after the stream");
  return {};
}

namespace {
class ZlibCodec final : public Codec {
public:
  std::string_view name() const override { return "zlib"; }
  Expected<std::vector<std::byte>> compress(std::span<const std::byte> in, int level) const override {
    return deflate_bytes(in, level);
  }
  Status decompress(std::span<const std::byte> in, std::span<std::byte> out) const override {
    return inflate_bytes(in, out);
  }
  // Deflate's longest match (258 bytes) costs at least two bits: 1032:1 at most.
  uint64_t max_expansion() const override { return 1032; }
};
}  // namespace

std::shared_ptr<const Codec> make_zlib() { return std::make_shared<ZlibCodec>(); }

}  // namespace weave::codecs
