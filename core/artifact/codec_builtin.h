// Factories of the built-in codecs (one file each); CodecRegistry::global() registers them.
#pragma once

#include <memory>

#include "core/artifact/codec.h"

namespace weave::codecs {

[[nodiscard]] std::shared_ptr<const Codec> make_none();
[[nodiscard]] std::shared_ptr<const Codec> make_zlib();
[[nodiscard]] std::shared_ptr<const Codec> make_zlib_shuffle();
[[nodiscard]] std::shared_ptr<const Codec> make_zlib_planes();
#ifdef WEAVE_HAVE_LZ4
[[nodiscard]] std::shared_ptr<const Codec> make_lz4();
#endif
#ifdef WEAVE_HAVE_ZSTD
[[nodiscard]] std::shared_ptr<const Codec> make_zstd();
[[nodiscard]] std::shared_ptr<const Codec> make_zstd_planes();
#endif

// Deflate/inflate shared by "zlib", "zlib-shuffle" and "zlib-planes".
[[nodiscard]] Expected<std::vector<std::byte>> deflate_bytes(std::span<const std::byte> in, int level);
[[nodiscard]] Status inflate_bytes(std::span<const std::byte> in, std::span<std::byte> out);

}  // namespace weave::codecs
