// "zstd": one Zstandard frame with its content size recorded. Compiled only with
// WEAVE_HAVE_ZSTD (the `zstd` feature option).
#ifdef WEAVE_HAVE_ZSTD
#include <zstd.h>

#include <memory>

#include "core/artifact/codec_builtin.h"

namespace weave::codecs {
namespace {

struct FreeDCtx {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};

// One decompression context per thread, reused: ZSTD_decompress makes and frees a context of
// ~160 KB per call, which dominated loading models of many small params (4 frames per param
// with zstd-planes). The loading thread keeps its context (~100-160 KB) until it exits; the
// artifact reader's helper threads end with each load.
ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, FreeDCtx> ctx;
  if (!ctx) ctx.reset(ZSTD_createDCtx());  // again next time if it failed
  return ctx.get();
}

class ZstdCodec final : public Codec {
 public:
  std::string_view name() const override { return "zstd"; }
  Expected<std::vector<std::byte>> compress(std::span<const std::byte> in, int level) const override {
    if (level == -1) level = ZSTD_CLEVEL_DEFAULT;
    if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel())
      return make_error("zstd: level ", level, " is outside ", ZSTD_minCLevel(), "..", ZSTD_maxCLevel());
    std::vector<std::byte> out(ZSTD_compressBound(in.size()));
    std::size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), level);
    if (ZSTD_isError(n)) return make_error("zstd: compression failed (", ZSTD_getErrorName(n), ")");
    out.resize(n);
    return out;
  }
  Status decompress(std::span<const std::byte> in, std::span<std::byte> out) const override {
    unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
    if (declared == ZSTD_CONTENTSIZE_ERROR) return make_error("zstd: not a zstd frame");
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != out.size())
      return make_error("zstd: frame holds ", declared, " bytes, expected ", out.size());
    ZSTD_DCtx* ctx = thread_dctx();
    if (ctx == nullptr) return make_error("zstd: cannot create a decompression context");
    std::size_t n = ZSTD_decompressDCtx(ctx, out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) return make_error("zstd: corrupt frame (", ZSTD_getErrorName(n), ")");
    if (n != out.size()) return make_error("zstd: frame decodes to ", n, " bytes, expected ", out.size());
    return {};
  }
  // RLE blocks reach ~32768:1 (a 4 byte block for 128 KiB); leave headroom for sequences.
  uint64_t max_expansion() const override { return 1u << 17; }
};

}  // namespace

std::shared_ptr<const Codec> make_zstd() {
  return std::make_shared<ZstdCodec>();
}

}  // namespace weave::codecs
#endif
