// "zlib": a zlib (RFC 1950) stream of the raw bytes. Always available.
#include <zlib.h>

#include <algorithm>

#include "core/artifact/codec_builtin.h"

namespace weave::codecs {

Expected<std::vector<std::byte>> deflate_bytes(std::span<const std::byte> in, int level) {
  if (level < -1 || level > 9) return make_error("zlib: level ", level, " is outside -1..9");
  uLongf out_len = compressBound(static_cast<uLong>(in.size()));
  std::vector<std::byte> out(out_len);
  int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &out_len,
                     reinterpret_cast<const Bytef*>(in.data()), static_cast<uLong>(in.size()), level);
  if (rc != Z_OK) return make_error("zlib: compression failed (", zError(rc), ")");
  out.resize(out_len);
  return out;
}

Status inflate_bytes(std::span<const std::byte> in, std::span<std::byte> out) {
  // A hand-driven inflate rather than uncompress2(): it must notice a stream that holds more
  // bytes than `out` (uncompress2 accepts that silently when out is empty), and it handles
  // spans beyond 4 GiB by feeding zlib's 32-bit counters in chunks.
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return make_error("zlib: inflateInit failed");
  constexpr std::size_t kChunk = 1u << 30;
  std::size_t in_pos = 0, out_pos = 0;
  unsigned char scratch = 0;  // where a stream longer than `out` spills, to detect it
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (zs.avail_in == 0 && in_pos < in.size()) {
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + in_pos));
      zs.avail_in = static_cast<uInt>(std::min(kChunk, in.size() - in_pos));
      in_pos += zs.avail_in;
    }
    if (zs.avail_out == 0) {
      if (out_pos < out.size()) {
        zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
        zs.avail_out = static_cast<uInt>(std::min(kChunk, out.size() - out_pos));
        out_pos += zs.avail_out;
      } else {
        zs.next_out = &scratch;
        zs.avail_out = 1;
      }
    }
    const uLong before_in = zs.total_in, before_out = zs.total_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (zs.total_out > out.size()) {
      inflateEnd(&zs);
      return make_error("zlib: data inflates to more than the declared ", out.size(), " bytes");
    }
    if (rc == Z_BUF_ERROR && zs.total_in == before_in && zs.total_out == before_out && in_pos == in.size()) {
      inflateEnd(&zs);
      return make_error("zlib: stream is truncated");
    }
    if (rc == Z_BUF_ERROR) rc = Z_OK;  // needs more input or output: loop supplies it
  }
  const uLong total_in = zs.total_in, total_out = zs.total_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) return make_error("zlib: corrupt stream (", zError(rc), ")");
  if (total_out != out.size())
    return make_error("zlib: data inflates to ", total_out, " bytes, expected ", out.size());
  if (total_in != in.size())
    return make_error("zlib: ", in.size() - total_in, " trailing bytes after the stream");
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

std::shared_ptr<const Codec> make_zlib() {
  return std::make_shared<ZlibCodec>();
}

}  // namespace weave::codecs
