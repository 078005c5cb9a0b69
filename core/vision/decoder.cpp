#include "core/vision/decoder.h"

namespace weave::vision {

// global() is in decoders.cpp, next to the modes it registers.

void DecoderRegistry::add(std::string mode, DecoderMaker maker) {
  for (auto& [name, m] : makers_)
    if (name == mode) {
      m = std::move(maker);
      return;
    }
  makers_.emplace_back(std::move(mode), std::move(maker));
}

Expected<std::unique_ptr<Decoder>> DecoderRegistry::make(std::string_view mode,
                                                         const DecoderOptions& opts) const {
  for (const auto& [name, maker] : makers_)
    if (name == mode) return maker(opts);
  std::string known;
  for (const auto& [name, maker] : makers_) known += (known.empty() ? "" : ", ") + name;
  return make_error("unknown decode mode '", mode, "' (known: ", known, ")");
}

std::vector<std::string> DecoderRegistry::modes() const {
  std::vector<std::string> names;
  for (const auto& [name, maker] : makers_) names.push_back(name);
  return names;
}

}  // namespace weave::vision
