// Makes the .weave and codec seed corpora from the ONNX seeds (scripts/fuzz.sh runs it after
// scripts/make_fuzz_seeds.py):
//   make_fuzz_seeds ONNX_DIR OUT_DIR
// writes OUT_DIR/artifact/<model>-<codec>[-stripped].weave for every registered codec, and
// OUT_DIR/codecs/<codec>-<sample>: the codec selector byte fuzz_codecs reads, the 3-byte raw
// size, then the sample compressed with that codec (float weights, zeros, text, random bytes).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/artifact/artifact.h"
#include "core/artifact/codec.h"
#include "core/loader/model_loader.h"

namespace fs = std::filesystem;

namespace {

bool write_file(const fs::path& p, std::span<const std::byte> bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return bool(out);
}

std::vector<std::pair<std::string, std::vector<std::byte>>> samples() {
  std::vector<std::pair<std::string, std::vector<std::byte>>> out;
  std::vector<float> w(1024);
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.f, 0.05f);
  for (float& v : w) v = nd(rng);
  auto fb = std::as_bytes(std::span(w));
  out.emplace_back("weights", std::vector<std::byte>(fb.begin(), fb.end()));
  out.emplace_back("zeros", std::vector<std::byte>(3000));
  const std::string text = "tensor/x-raw, dtype=(string)float32, shape=(int)<1,3,224,224>; ";
  std::vector<std::byte> t;
  for (int i = 0; i < 20; ++i)
    for (char c : text) t.push_back(static_cast<std::byte>(c));
  out.emplace_back("text", t);
  std::vector<std::byte> r(777);
  for (auto& b : r) b = static_cast<std::byte>(rng());
  out.emplace_back("random", r);
  out.emplace_back("odd", std::vector<std::byte>(13, std::byte{7}));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace weave;
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_fuzz_seeds ONNX_DIR OUT_DIR\n");
    return 2;
  }
  const fs::path onnx_dir = argv[1], out = argv[2];
  fs::create_directories(out / "artifact");
  fs::create_directories(out / "codecs");
  auto names = CodecRegistry::global().names();
  std::sort(names.begin(), names.end());  // fuzz_codecs picks codecs by index in this order
  int artifacts = 0, codec_seeds = 0;
  for (const auto& entry : fs::directory_iterator(onnx_dir)) {
    if (entry.path().extension() != ".onnx") continue;
    auto g = load_model_graph(entry.path().string());
    if (!g) {
      std::fprintf(stderr, "%s\n", g.message().c_str());
      return 1;
    }
    for (const auto& codec : names) {
      for (bool strip : {false, true}) {
        if (strip && codec != "none") continue;
        WriteOptions wo;
        wo.codec = codec;
        wo.strip_names = strip;
        auto bytes = serialize_artifact(*g, wo);
        if (!bytes) {
          std::fprintf(stderr, "%s\n", bytes.message().c_str());
          return 1;
        }
        const std::string name =
            entry.path().stem().string() + "-" + codec + (strip ? "-stripped" : "") + ".weave";
        if (!write_file(out / "artifact" / name, *bytes)) return 1;
        ++artifacts;
      }
    }
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto codec = CodecRegistry::global().find(names[i]);
    for (const auto& [label, raw] : samples()) {
      auto packed = codec->compress(raw, -1);
      if (!packed) continue;  // e.g. a planes codec given a size it does not take
      std::vector<std::byte> seed{static_cast<std::byte>(i), static_cast<std::byte>(raw.size() & 0xff),
                                  static_cast<std::byte>((raw.size() >> 8) & 0xff),
                                  static_cast<std::byte>((raw.size() >> 16) & 0xff)};
      seed.insert(seed.end(), packed->begin(), packed->end());
      if (!write_file(out / "codecs" / (names[i] + "-" + label), seed)) return 1;
      ++codec_seeds;
    }
  }
  std::printf("seeds in %s: artifact %d, codecs %d\n", out.c_str(), artifacts, codec_seeds);
  return 0;
}
