#include "core/artifact/codec.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "core/artifact/codec_builtin.h"

namespace weave {

namespace codecs {
namespace {
class NoneCodec final : public Codec {
 public:
  std::string_view name() const override { return "none"; }
  Expected<std::vector<std::byte>> compress(std::span<const std::byte> in, int) const override {
    return std::vector<std::byte>(in.begin(), in.end());
  }
  Status decompress(std::span<const std::byte> in, std::span<std::byte> out) const override {
    if (in.size() != out.size())
      return make_error("none: stored ", in.size(), " bytes but raw size is ", out.size());
    if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
    return {};
  }
  uint64_t max_expansion() const override { return 1; }
};
}  // namespace
std::shared_ptr<const Codec> make_none() {
  return std::make_shared<NoneCodec>();
}
}  // namespace codecs

bool codec_name_valid(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

uint32_t crc32_of(std::span<const std::byte> bytes) {
  uLong crc = crc32_z(0L, Z_NULL, 0);
  return static_cast<uint32_t>(
      crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<z_size_t>(bytes.size())));
}

CodecRegistry& CodecRegistry::global() {
  static CodecRegistry* registry = [] {
    auto* r = new CodecRegistry();  // never destroyed: codecs may be used during static teardown
    for (auto& c :
         {codecs::make_none(), codecs::make_zlib(), codecs::make_zlib_shuffle(), codecs::make_zlib_planes()})
      r->codecs_.push_back(c);
#ifdef WEAVE_HAVE_LZ4
    r->codecs_.push_back(codecs::make_lz4());
#endif
#ifdef WEAVE_HAVE_ZSTD
    r->codecs_.push_back(codecs::make_zstd());
    r->codecs_.push_back(codecs::make_zstd_planes());
#endif
    return r;
  }();
  return *registry;
}

Status CodecRegistry::add(std::shared_ptr<const Codec> codec) {
  if (!codec) return make_error("codec registry: null codec");
  std::string name(codec->name());
  if (!codec_name_valid(name))
    return make_error("codec registry: invalid codec name '", name, "' (1..64 of [A-Za-z0-9._-])");
  if (codec->max_expansion() == 0)
    return make_error("codec registry: codec '", name, "' has max_expansion 0");
  std::lock_guard lock(mu_);
  for (const auto& c : codecs_)
    if (c->name() == name)
      return make_error("codec registry: a codec named '", name, "' is already registered");
  codecs_.push_back(std::move(codec));
  return {};
}

std::shared_ptr<const Codec> CodecRegistry::find(std::string_view name) const {
  std::lock_guard lock(mu_);
  for (const auto& c : codecs_)
    if (c->name() == name) return c;
  return nullptr;
}

std::vector<std::string> CodecRegistry::names() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& c : codecs_) out.emplace_back(c->name());
  return out;
}

}  // namespace weave
