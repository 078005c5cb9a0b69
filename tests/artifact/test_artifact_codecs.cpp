// Codecs: each built-in round-trips bytes exactly, rejects malformed input, respects its declared
// expansion bound; user codecs register, round-trip through files, and are required to read.
#define BOOST_TEST_MODULE artifact_codecs
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>

#include "tests/artifact/artifact_test_util.h"

using namespace weave;
using namespace weave::test;
namespace af = weave::artifact_format;

namespace {

std::vector<std::string> builtin_names() {
  std::vector<std::string> n{"none", "zlib", "zlib-shuffle", "zlib-planes"};
#ifdef WEAVE_HAVE_LZ4
  n.push_back("lz4");
#endif
#ifdef WEAVE_HAVE_ZSTD
  n.push_back("zstd");
  n.push_back("zstd-planes");
#endif
  return n;
}

std::vector<std::vector<std::byte>> samples() {
  std::vector<std::vector<std::byte>> s;
  s.emplace_back();                    // empty
  s.emplace_back(1, std::byte{0x42});  // one byte
  s.emplace_back(4099, std::byte{0});  // zeros with a 3-byte shuffle tail
  std::vector<std::byte> noise(10007);
  uint32_t x = 7;
  for (auto& b : noise) b = static_cast<std::byte>((x = x * 1664525u + 1013904223u) >> 24);
  s.push_back(noise);
  std::vector<float> f(5000);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = std::sin(0.01f * static_cast<float>(i));
  auto fb = std::as_bytes(std::span(f));
  s.emplace_back(fb.begin(), fb.end());
  return s;
}

// A user codec: (count, byte) run-length pairs, counts up to 255.
class RleCodec final : public Codec {
 public:
  explicit RleCodec(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  Expected<std::vector<std::byte>> compress(std::span<const std::byte> in, int) const override {
    std::vector<std::byte> out;
    for (std::size_t i = 0; i < in.size();) {
      std::size_t n = 1;
      while (i + n < in.size() && n < 255 && in[i + n] == in[i]) ++n;
      out.push_back(static_cast<std::byte>(n));
      out.push_back(in[i]);
      i += n;
    }
    return out;
  }
  Status decompress(std::span<const std::byte> in, std::span<std::byte> out) const override {
    if (in.size() % 2) return make_error("odd length");
    std::size_t o = 0;
    for (std::size_t i = 0; i < in.size(); i += 2) {
      auto n = static_cast<std::size_t>(in[i]);
      if (n == 0 || n > out.size() - o) return make_error("run overflows the output");
      std::fill_n(out.begin() + static_cast<std::ptrdiff_t>(o), n, in[i + 1]);
      o += n;
    }
    if (o != out.size()) return make_error("short output");
    return {};
  }
  uint64_t max_expansion() const override { return 128; }

 private:
  std::string name_;
};

Graph one_param_graph(std::vector<uint8_t> data) {
  Graph g;
  const auto n = static_cast<int64_t>(data.size());
  int32_t p = g.add_param(DType::uint8, {n}, bytes_of(data));
  int32_t out = g.add_value(Value{ValueKind::intermediate, DType::uint8, {n}, true, -1});
  g.nodes.push_back(Node{"Identity", {p}, {out}, {}});
  g.outputs = {out};
  g.output_infos = {TensorInfo{"out", DType::uint8, {n}, {}}};
  return g;
}

}  // namespace

BOOST_AUTO_TEST_CASE(registry_has_the_builtins) {
  for (const auto& n : builtin_names()) BOOST_TEST(CodecRegistry::global().find(n) != nullptr, n);
  BOOST_TEST(CodecRegistry::global().find("brotli") == nullptr);
#ifndef WEAVE_HAVE_ZSTD
  BOOST_TEST(CodecRegistry::global().find("zstd") == nullptr);
#endif
}

BOOST_AUTO_TEST_CASE(each_codec_round_trips_bytes_exactly) {
  for (const auto& name : builtin_names()) {
    auto codec = CodecRegistry::global().find(name);
    for (const auto& s : samples()) {
      BOOST_TEST_CONTEXT(name << " on " << s.size() << " bytes") {
        auto c = codec->compress(s, -1);
        BOOST_REQUIRE(c.ok());
        std::vector<std::byte> out(s.size(), std::byte{0x77});
        BOOST_REQUIRE(codec->decompress(*c, out).ok());
        BOOST_TEST((out == s));
        // Decoding into a buffer of the wrong size fails instead of overrunning or leaving a gap.
        std::vector<std::byte> small(s.size() + 1);
        BOOST_TEST(!codec->decompress(*c, small).ok());
        if (!s.empty()) {
          std::vector<std::byte> shorter(s.size() - 1);
          BOOST_TEST(!codec->decompress(*c, shorter).ok());
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(corrupt_streams_fail_cleanly) {
  auto s = samples()[4];
  for (const auto& name : builtin_names()) {
    if (name == "none") continue;
    auto codec = CodecRegistry::global().find(name);
    auto c = codec->compress(s, -1);
    BOOST_REQUIRE(c.ok());
    std::vector<std::byte> out(s.size());
    // Flip bytes throughout the stream and truncate it: each must fail or (rarely, for formats
    // without an internal checksum) decode to *something* of the right size -- never crash.
    int failures = 0;
    for (std::size_t i = 0; i < c->size(); i += 1 + c->size() / 64) {
      auto bad = *c;
      bad[i] ^= std::byte{0x5a};
      failures += codec->decompress(bad, out).ok() ? 0 : 1;
    }
    BOOST_TEST(failures > 0, name);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, c->size() / 2, c->size() - 1}) {
      std::span<const std::byte> cut(c->data(), n);
      BOOST_TEST(!codec->decompress(cut, out).ok(), name << " truncated to " << n);
    }
  }
}

BOOST_AUTO_TEST_CASE(shuffle_groups_byte_planes) {
  // 10 bytes: two 4-byte elements and a 2-byte tail. Inflating with plain zlib shows the planes.
  std::vector<std::byte> in;
  for (int i = 0; i < 10; ++i) in.push_back(static_cast<std::byte>(i));
  auto c = CodecRegistry::global().find("zlib-shuffle")->compress(in, 9);
  BOOST_REQUIRE(c.ok());
  std::vector<std::byte> planes(10);
  BOOST_REQUIRE(CodecRegistry::global().find("zlib")->decompress(*c, planes).ok());
  std::vector<int> got;
  for (auto b : planes) got.push_back(static_cast<int>(b));
  BOOST_TEST(got == (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7, 8, 9}));
}

BOOST_AUTO_TEST_CASE(shuffle_beats_plain_zlib_on_float_weights) {
  std::vector<float> w(16384);
  uint32_t x = 1;
  for (auto& v : w)
    v = 0.02f * (static_cast<float>((x = x * 1664525u + 1013904223u) >> 16) / 65536.0f - 0.5f);
  auto b = std::as_bytes(std::span(w));
  auto plain = CodecRegistry::global().find("zlib")->compress(b, 6);
  auto shuf = CodecRegistry::global().find("zlib-shuffle")->compress(b, 6);
  BOOST_REQUIRE(plain.ok() && shuf.ok());
  BOOST_TEST(shuf->size() < plain->size());
}

BOOST_AUTO_TEST_CASE(declared_expansion_bounds_hold_for_zeros) {
  // All-zero data is the best case of every codec: the bound must still hold, or the writer
  // would have to store such params uncompressed.
  std::vector<std::byte> zeros(32 << 20);
  for (const auto& name : builtin_names()) {
    if (name == "none") continue;
    auto codec = CodecRegistry::global().find(name);
    for (int level : {-1, 9}) {
      auto c = codec->compress(zeros, level);
      BOOST_REQUIRE(c.ok());
      BOOST_TEST(zeros.size() <= c->size() * codec->max_expansion(),
                 name << " level " << level << ": " << zeros.size() / c->size() << ":1");
    }
  }
}

BOOST_AUTO_TEST_CASE(each_codec_round_trips_through_a_file) {
  Graph g = sample_graph();
  for (const auto& name : builtin_names()) {
    BOOST_TEST_CONTEXT(name) {
      const std::string path = tmp_path("codec_" + name + ".weave");
      BOOST_REQUIRE(write_artifact(g, path, {.codec = name}).ok());
      auto info = inspect_artifact(path);
      BOOST_REQUIRE(info.ok());
      // The two compressible params (>= 1 KiB) use the codec; with "none" everything does.
      BOOST_TEST(info->codecs.at(name).params == (name == "none" ? 6u : 2u));
      for (bool mmap : {true, false}) {
        auto back = read_artifact(path, {.use_mmap = mmap});
        BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.message()));
        for (std::size_t p = 0; p < g.params.size(); ++p) {
          BOOST_REQUIRE_EQUAL(back->params[p].data.size(), g.params[p].data.size());
          if (g.params[p].data.size() == 0) continue;  // memcmp may not see null pointers
          BOOST_TEST(std::memcmp(back->params[p].data.data(), g.params[p].data.data(),
                                 g.params[p].data.size()) == 0);
        }
      }
      std::remove(path.c_str());
    }
  }
}

BOOST_AUTO_TEST_CASE(registry_rejects_bad_and_duplicate_names) {
  auto& reg = CodecRegistry::global();
  Status s = reg.add(std::make_shared<RleCodec>("zlib"));
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.message().find("already registered") != std::string::npos);
  s = reg.add(std::make_shared<RleCodec>("has space"));
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.message().find("invalid codec name") != std::string::npos);
  BOOST_TEST(!reg.add(std::make_shared<RleCodec>("")).ok());
  BOOST_TEST(!reg.add(std::make_shared<RleCodec>(std::string(65, 'a'))).ok());
  BOOST_TEST(!reg.add(nullptr).ok());
}

BOOST_AUTO_TEST_CASE(user_codec_round_trips_and_unregistered_one_errors) {
  BOOST_REQUIRE(CodecRegistry::global().add(std::make_shared<RleCodec>("test-rle")).ok());
  std::vector<uint8_t> data(5000, 3);
  for (std::size_t i = 0; i < 100; ++i) data[i * 50] = 9;
  Graph g = one_param_graph(data);
  auto bytes = serialize_artifact(g, {.codec = "test-rle"});
  BOOST_REQUIRE(bytes.ok());
  auto back = read_bytes(*bytes);
  BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.message()));
  BOOST_TEST(std::memcmp(back->params[0].data.data(), data.data(), data.size()) == 0);

  // Rename the codec in the params section's string table to one nobody registered.
  auto params = section_bytes(*bytes, af::SectionKind::params);
  const std::string from = "test-rle", to = "test-rlx";
  auto it = std::search(params.begin(), params.end(), reinterpret_cast<const std::byte*>(from.data()),
                        reinterpret_cast<const std::byte*>(from.data()) + from.size());
  BOOST_REQUIRE(it != params.end());
  std::memcpy(&*it, to.data(), to.size());
  auto renamed = replace_section(*bytes, af::SectionKind::params, params);
  auto r = read_bytes(renamed, "user.weave");
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("user.weave") != std::string::npos, r.message());
  BOOST_TEST(r.message().find("param 0") != std::string::npos, r.message());
  BOOST_TEST(r.message().find("codec 'test-rlx'") != std::string::npos, r.message());
  BOOST_TEST(r.message().find("not registered") != std::string::npos, r.message());

  // inspect still works and reports the codec by name.
  const std::string path = tmp_path("user.weave");
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    BOOST_REQUIRE(f);
    BOOST_REQUIRE(std::fwrite(renamed.data(), 1, renamed.size(), f) == renamed.size());
    std::fclose(f);
  }
  auto info = inspect_artifact(path);
  BOOST_REQUIRE(info.ok());
  BOOST_TEST(info->codecs.count("test-rlx") == 1u);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(a_codec_that_decodes_differently_is_caught_by_the_raw_checksum) {
  // A decoder that ignores its input "succeeds" with the wrong bytes; the raw CRC catches it.
  class Liar final : public Codec {
   public:
    std::string_view name() const override { return "test-liar"; }
    Expected<std::vector<std::byte>> compress(std::span<const std::byte> in, int) const override {
      return std::vector<std::byte>(in.size() / 8, std::byte{1});
    }
    Status decompress(std::span<const std::byte>, std::span<std::byte> out) const override {
      std::fill(out.begin(), out.end(), std::byte{0});
      return {};
    }
  };
  BOOST_REQUIRE(CodecRegistry::global().add(std::make_shared<Liar>()).ok());
  auto bytes = serialize_artifact(one_param_graph(std::vector<uint8_t>(4096, 5)), {.codec = "test-liar"});
  BOOST_REQUIRE(bytes.ok());
  auto r = read_bytes(*bytes, "liar.weave");
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("blobs section: param 0") != std::string::npos, r.message());
  BOOST_TEST(r.message().find("checksum") != std::string::npos, r.message());
}

namespace {

// Float weights like a trained layer's: roughly normal, std 0.05 (Box-Muller on an LCG).
std::vector<float> trained_like_weights(std::size_t n) {
  std::vector<float> w(n);
  uint32_t x = 12345;
  auto uniform = [&] {
    return (static_cast<float>((x = x * 1664525u + 1013904223u) >> 8) + 0.5f) / 16777216.0f;
  };
  for (auto& v : w) v = 0.05f * std::sqrt(-2.0f * std::log(uniform())) * std::cos(6.2831853f * uniform());
  return w;
}

std::vector<std::byte> to_bytes(std::span<const float> f) {
  auto b = std::as_bytes(f);
  return {b.begin(), b.end()};
}

}  // namespace

BOOST_AUTO_TEST_CASE(planes_layout_is_rotated_byte_planes_each_with_a_header) {
  // Two words and a 1-byte tail. 1.0f = 0x3f800000 rotates to 0x7f000000; -2.0f = 0xc0000000
  // rotates to 0x80000001. Level 0 deflate never shrinks 2 bytes, so every plane is stored raw:
  // mode 0, length 2 (LE), then the bytes; the tail byte comes last.
  std::vector<float> f{1.0f, -2.0f};
  auto in = to_bytes(f);
  in.push_back(std::byte{0xab});
  auto c = CodecRegistry::global().find("zlib-planes")->compress(in, 0);
  BOOST_REQUIRE(c.ok());
  std::vector<int> got;
  for (auto b : *c) got.push_back(static_cast<int>(b));
  const std::vector<int> want{0,   2, 0, 0, 0, 0x00, 0x01,  // plane 0: low bytes
                              0,   2, 0, 0, 0, 0x00, 0x00,  // plane 1
                              0,   2, 0, 0, 0, 0x00, 0x00,  // plane 2
                              0,   2, 0, 0, 0, 0x7f, 0x80,  // plane 3: exponent (and rotated sign bit 31)
                              0xab};
  BOOST_TEST(got == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(planes_beats_zlib_and_shuffle_on_trained_like_weights) {
  auto w = trained_like_weights(65536);
  auto b = to_bytes(w);
  auto size_of = [&](const char* name) {
    auto c = CodecRegistry::global().find(name)->compress(b, 6);
    BOOST_REQUIRE(c.ok());
    return static_cast<double>(c->size()) / static_cast<double>(b.size());
  };
  const double zlib = size_of("zlib"), shuffle = size_of("zlib-shuffle"), planes = size_of("zlib-planes");
  BOOST_TEST_MESSAGE("zlib " << zlib << " zlib-shuffle " << shuffle << " zlib-planes " << planes);
  BOOST_TEST(planes < shuffle);
  BOOST_TEST(planes < zlib);
  BOOST_TEST(planes < 0.9);
}

BOOST_AUTO_TEST_CASE(planes_rejects_headers_that_lie) {
  auto codec = CodecRegistry::global().find("zlib-planes");
  auto w = trained_like_weights(1000);
  auto b = to_bytes(w);
  auto c = codec->compress(b, -1);
  BOOST_REQUIRE(c.ok());
  std::vector<std::byte> out(b.size());
  BOOST_REQUIRE(codec->decompress(*c, out).ok());
  BOOST_TEST((out == b));
  {  // plane 0 length larger than what remains
    auto bad = *c;
    put_le(bad, 1, 0xfffffff0u, 4);
    auto s = codec->decompress(bad, out);
    BOOST_TEST(!s.ok());
    BOOST_TEST(s.message().find("plane 0 claims") != std::string::npos, s.message());
  }
  {  // unknown mode
    auto bad = *c;
    bad[0] = std::byte{7};
    auto s = codec->decompress(bad, out);
    BOOST_TEST(!s.ok());
    BOOST_TEST(s.message().find("unknown mode 7") != std::string::npos, s.message());
  }
  {  // a raw plane of the wrong length
    std::vector<std::byte> raw{std::byte{0}, std::byte{3}, std::byte{0}, std::byte{0},
                               std::byte{0}, std::byte{1}, std::byte{2}, std::byte{3}};
    std::vector<std::byte> out8(8);
    auto s = codec->decompress(raw, out8);
    BOOST_TEST(!s.ok());
    BOOST_TEST(s.message().find("raw plane 0 has 3 bytes, expected 2") != std::string::npos, s.message());
  }
  {  // extra bytes after the planes
    auto bad = *c;
    bad.push_back(std::byte{0});
    auto s = codec->decompress(bad, out);
    BOOST_TEST(!s.ok());
    BOOST_TEST(s.message().find("after the planes") != std::string::npos, s.message());
  }
}
