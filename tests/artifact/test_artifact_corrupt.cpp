// Hostile and damaged .weave files: every failure must be a clean Error that names the file and
// the section (and the param / node where one applies), never a crash or a huge allocation.
#define BOOST_TEST_MODULE artifact_corrupt
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <fstream>

#include "tests/artifact/artifact_test_util.h"

using namespace weave;
using namespace weave::test;
namespace af = weave::artifact_format;
using K = af::SectionKind;

namespace {

std::vector<std::byte> serialize(const Graph& g, WriteOptions opt = {}) {
  auto b = serialize_artifact(g, opt);
  BOOST_REQUIRE(b.ok());
  return std::move(*b);
}

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

// Expects failure with every one of `parts` in the message.
void expect_error(const std::vector<std::byte>& b, std::initializer_list<std::string> parts) {
  auto r = read_bytes(b, "bad.weave");
  BOOST_REQUIRE_MESSAGE(!r.ok(), "read unexpectedly succeeded");
  BOOST_TEST(contains(r.message(), "bad.weave"), r.message());
  for (const auto& p : parts) BOOST_TEST(contains(r.message(), p), "'" << p << "' not in: " << r.message());
}

void write_file(const std::string& path, std::span<const std::byte> b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

std::vector<std::byte> empty_metadata() {
  ByteWriter w;
  w.u32(0);
  w.u32(0);
  w.u32(0);
  return w.take();
}

// A graph section holding one param value (uint8 unless told) of `shape` and nothing else.
std::vector<std::byte> one_param_value(const Shape& shape, int32_t dtype = 2) {
  ByteWriter w;
  w.u32(1);
  w.u8(1);  // kind param
  w.u8(1);  // rank known
  w.u16(0);
  w.i32(dtype);
  w.i32(0);  // param id
  w.u32(static_cast<uint32_t>(shape.size()));
  for (auto d : shape) w.i64(d);
  w.u32(0);  // nodes
  w.u32(0);  // inputs
  w.u32(0);  // outputs
  return w.take();
}

std::vector<std::byte> one_param_entry(const std::string& codec, const Shape& shape, uint64_t stored,
                                       uint64_t raw, int32_t dtype = 2) {
  ByteWriter w;
  w.u32(1);
  w.str(codec);
  w.u32(1);
  w.i32(0);  // value
  w.i32(dtype);
  w.u32(0);  // codec index
  w.u32(static_cast<uint32_t>(shape.size()));
  for (auto d : shape) w.i64(d);
  w.u64(0);  // offset
  w.u64(stored);
  w.u64(raw);
  w.u32(0);
  w.u32(0);
  return w.take();
}

std::vector<std::byte> file_of(std::vector<std::byte> graph, std::vector<std::byte> params,
                               std::vector<std::byte> blobs) {
  return assemble(
      {{1, empty_metadata()}, {2, std::move(graph)}, {3, std::move(params)}, {5, std::move(blobs)}});
}

// Which region a file offset falls in, as the reader's messages name it.
std::string region_of(const std::vector<std::byte>& b, std::size_t at) {
  if (at < af::kHeaderSize) return "header";
  if (at < af::kHeaderSize + af::kSectionEntrySize * sections_of(b).size()) return "section table";
  for (const auto& s : sections_of(b))
    if (at >= s.offset && at < s.offset + s.size) return std::string(af::section_name(s.kind)) + " section";
  return "padding";
}

}  // namespace

BOOST_AUTO_TEST_CASE(missing_empty_and_non_regular_files) {
  const std::string missing = tmp_path("does_not_exist.weave");
  for (bool mmap : {true, false}) {
    auto r = read_artifact(missing, {.use_mmap = mmap});
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(contains(r.message(), missing), r.message());
    BOOST_TEST(contains(r.message(), "cannot open"), r.message());
  }
  BOOST_TEST(contains(inspect_artifact(missing).message(), "cannot open"));
  auto dir = read_artifact("/");
  BOOST_REQUIRE(!dir.ok());
  BOOST_TEST(contains(dir.message(), "not a regular file"), dir.message());
  const std::string empty = tmp_path("empty.weave");
  write_file(empty, {});
  for (bool mmap : {true, false}) {
    auto r = read_artifact(empty, {.use_mmap = mmap});
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(contains(r.message(), empty + ": header: not a .weave artifact"), r.message());
  }
  std::remove(empty.c_str());
}

BOOST_AUTO_TEST_CASE(wrong_magic_and_version) {
  auto b = serialize(sample_graph());
  auto bad = b;
  bad[0] = std::byte{'w'};
  expect_error(bad, {"header: bad magic"});
  bad = b;
  put_le(bad, 8, 2, 4);
  expect_error(bad, {"header: unsupported format version 2 (this reader supports 1)"});
  bad = b;
  put_le(bad, 8, 2, 4);
  fix_crcs(bad);  // also with a consistent checksum
  expect_error(bad, {"unsupported format version 2"});
  // A text file is not an artifact.
  std::string text = "hello, this is not a model at all";
  std::vector<std::byte> t(text.size());
  std::memcpy(t.data(), text.data(), text.size());
  expect_error(t, {"bad magic"});
}

BOOST_AUTO_TEST_CASE(every_truncation_fails_cleanly) {
  for (const char* codec : {"zlib", "none"}) {
    auto b = serialize(sample_graph(), {.codec = codec});
    for (std::size_t n = 0; n < b.size(); ++n) {
      std::vector<std::byte> cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
      auto r = read_bytes(cut, "cut.weave");
      BOOST_REQUIRE_MESSAGE(!r.ok(), codec << ": prefix of " << n << " bytes was accepted");
      BOOST_REQUIRE_MESSAGE(contains(r.message(), "cut.weave: header"), r.message());
    }
  }
  // The same through the mmap path, at a few lengths.
  auto b = serialize(sample_graph());
  const std::string path = tmp_path("cut.weave");
  for (std::size_t n : {std::size_t{3}, std::size_t{39}, std::size_t{200}, b.size() - 1}) {
    write_file(path, std::span(b).first(n));
    auto r = read_artifact(path);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(contains(r.message(), path), r.message());
  }
  std::remove(path.c_str());
  // Extra bytes at the end are refused too.
  auto longer = b;
  longer.push_back(std::byte{0});
  expect_error(longer, {"header", "1 unexpected bytes after the declared end"});
}

BOOST_AUTO_TEST_CASE(every_byte_flip_is_detected_and_attributed) {
  // With the CRCs and the zero-padding rule, no byte of the file is unchecked.
  for (const char* codec : {"zlib", "none"}) {
    auto b = serialize(sample_graph(), {.codec = codec});
    std::map<std::string, int> hits;
    for (std::size_t i = 0; i < b.size(); ++i) {
      auto bad = b;
      bad[i] ^= std::byte{0x10};
      auto r = read_bytes(bad, "flip.weave");
      BOOST_REQUIRE_MESSAGE(!r.ok(), codec << ": flip at " << i << " went unnoticed");
      const std::string region = region_of(b, i);
      BOOST_REQUIRE_MESSAGE(contains(r.message(), region),
                            "flip at " << i << " (" << region << "): " << r.message());
      ++hits[region];
    }
    for (const char* r : {"header", "section table", "metadata section", "graph section", "params section",
                          "names section", "blobs section", "padding"})
      BOOST_TEST(hits[r] > 0, codec << ": no byte of " << r);
  }
}

BOOST_AUTO_TEST_CASE(blob_errors_name_the_param) {
  auto b = serialize(sample_graph(), {.codec = "none"});
  SectionRef blobs = section(b, K::blobs);
  // Param 2 (value 3) is the third blob: offsets 0 (864 B), 896 (16 B), 960 (8192 B).
  auto bad = b;
  bad[blobs.offset + 960 + 100] ^= std::byte{1};
  expect_error(bad, {"blobs section: param 2 (value 3): checksum mismatch"});
  // Padding between blobs must be zero.
  bad = b;
  bad[blobs.offset + 930] = std::byte{1};
  expect_error(bad, {"blobs section: padding before param 2"});
}

BOOST_AUTO_TEST_CASE(hostile_counts_are_refused_before_allocation) {
  auto b = serialize(sample_graph());
  // values count -> 2^32-1 in the graph section (first field).
  auto graph = section_bytes(b, K::graph);
  put_le(graph, 0, 0xffffffffu, 4);
  expect_error(replace_section(b, K::graph, graph), {"graph section", "count of values", "4294967295"});
  // params count: after the codec table. Find it by re-encoding: codec table is "zlib","none".
  auto params = section_bytes(b, K::params);
  std::size_t at = 4;
  for (int i = 0; i < static_cast<int>(get_le(params, 0, 4)); ++i) at += 4 + get_le(params, at, 4);
  put_le(params, at, 0xfffffff0u, 4);
  expect_error(replace_section(b, K::params, params), {"params section", "count of params"});
  auto meta = section_bytes(b, K::metadata);
  put_le(meta, 0, 0x7fffffffu, 4);
  expect_error(replace_section(b, K::metadata, meta), {"metadata section", "count of inputs"});
  // A string claiming 4 GiB (the first input's name).
  meta = section_bytes(b, K::metadata);
  put_le(meta, 4, 0xffffffffu, 4);
  expect_error(replace_section(b, K::metadata, meta), {"metadata section", "input 0", "truncated"});
  // Section table claiming 2^31 sections.
  auto bad = b;
  put_le(bad, 24, 0x80000000u, 4);
  put_le(bad, 32, crc32_of(std::span(bad).first(32)), 4);  // only the header CRC: no such table
  expect_error(bad, {"section table", "section count 2147483648"});
}

BOOST_AUTO_TEST_CASE(hostile_raw_sizes_are_refused_before_allocation) {
  // 2^58 bytes claimed by a 16-byte zlib blob: consistent with the shape, but beyond what zlib
  // can expand 16 bytes to.
  const Shape huge{1LL << 29, 1LL << 29};
  auto f = file_of(one_param_value(huge), one_param_entry("zlib", huge, 16, 1ULL << 58),
                   std::vector<std::byte>(16));
  expect_error(f, {"params section: param 0", "more than codec 'zlib' can expand"});
  // 2^60 raw bytes that the shape does not support.
  f = file_of(one_param_value({16}), one_param_entry("zlib", {16}, 16, 1ULL << 60),
              std::vector<std::byte>(16));
  expect_error(f, {"params section: param 0: raw size 1152921504606846976"});
  // A shape whose byte size overflows 64 bits.
  const Shape overflow{1LL << 40, 1LL << 40};
  f = file_of(one_param_value(overflow, 1), one_param_entry("none", overflow, 16, 16, 1),
              std::vector<std::byte>(16));
  expect_error(f, {"param 0", "no finite byte size"});
  // Stored blob beyond the blob area.
  f = file_of(one_param_value({64}), one_param_entry("none", {64}, 64, 64), std::vector<std::byte>(16));
  expect_error(f, {"param 0", "lies outside the 16-byte blob area"});
  // A rank beyond what Dims holds, and a negative dim.
  f = file_of(one_param_value(Shape(9, 1)), one_param_entry("none", {1}, 1, 1), std::vector<std::byte>(1));
  expect_error(f, {"graph section: value 0", "rank 9"});
  f = file_of(one_param_value({-5}), one_param_entry("none", {1}, 1, 1), std::vector<std::byte>(1));
  expect_error(f, {"graph section: value 0", "dim 0 is -5"});
  // A consistent tiny file is accepted (the helpers themselves are right).
  std::vector<std::byte> blob(16, std::byte{7});
  auto entry = one_param_entry("none", {16}, 16, 16);
  const uint32_t crc = crc32_of(blob);
  put_le(entry, entry.size() - 8, crc, 4);
  put_le(entry, entry.size() - 4, crc, 4);
  auto ok = read_bytes(file_of(one_param_value({16}), entry, blob));
  BOOST_TEST(ok.ok(), (ok.ok() ? "" : ok.message()));
}

BOOST_AUTO_TEST_CASE(section_table_damage) {
  auto b = serialize(sample_graph());
  auto parts = split(b);
  // Unknown required kind.
  auto p = parts;
  p.push_back({77, {}});
  expect_error(assemble(p), {"section table", "unknown required section kind 77"});
  // Unknown optional kind is skipped.
  p = parts;
  p.insert(p.begin(), RawSection{0x80000001u, std::vector<std::byte>(5, std::byte{9})});
  auto r = read_bytes(assemble(p));
  BOOST_TEST(r.ok(), (r.ok() ? "" : r.message()));
  // Missing and duplicated sections.
  p = parts;
  p.erase(p.begin() + 1);
  expect_error(assemble(p), {"required graph section is missing"});
  p = parts;
  p.push_back(parts[0]);
  expect_error(assemble(p), {"duplicate section"});
  // Overlapping sections and ranges outside the file.
  auto bad = b;
  put_le(bad, 40 + 32 + 8, get_le(b, 40 + 8, 8), 8);  // graph offset := metadata offset
  fix_crcs(bad);
  expect_error(bad, {"overlaps"});
  bad = b;
  put_le(bad, 40 + 16, 1ULL << 62, 8);  // metadata size
  fix_table_crcs(bad);
  expect_error(bad, {"entry 0 (metadata)", "outside the file"});
}

BOOST_AUTO_TEST_CASE(structural_damage_names_the_node) {
  Graph g = sample_graph();
  auto b = serialize(g);
  auto graph = section_bytes(b, K::graph);
  // Find node 3's attribute "value" tag byte: the name is followed by the tag (6 = tensor).
  const std::string name = "value";
  std::vector<std::byte> needle{std::byte{5}, std::byte{0}, std::byte{0}, std::byte{0}};
  for (char c : name) needle.push_back(static_cast<std::byte>(c));
  auto it = std::search(graph.begin(), graph.end(), needle.begin(), needle.end());
  BOOST_REQUIRE(it != graph.end());
  it[static_cast<std::ptrdiff_t>(needle.size())] = std::byte{9};
  expect_error(replace_section(b, K::graph, graph),
               {"graph section: node 3: attribute 'value'", "unknown attribute kind 9"});

  // Structurally valid but semantically broken: node 2 reads a value produced later (by node 3).
  // The writer refuses such a graph, so patch node 2's first input in the encoded graph section.
  auto good_graph = section_bytes(b, K::graph);
  // node 2's inputs are {vr=8, vw2=3}: search for that pair followed by the outputs {vy=9}.
  std::vector<std::byte> pat;
  ByteWriter w;
  w.u32(2);
  w.i32(8);
  w.i32(3);
  w.u32(1);
  w.i32(9);
  auto v = w.view();
  pat.assign(v.begin(), v.end());
  auto at = std::search(good_graph.begin(), good_graph.end(), pat.begin(), pat.end());
  BOOST_REQUIRE(at != good_graph.end());
  put_le(good_graph, static_cast<std::size_t>(at - good_graph.begin()) + 4, 10, 4);  // vz = 10
  auto r = read_bytes(replace_section(b, K::graph, good_graph), "bad.weave");
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(
      contains(r.message(), "bad.weave: graph: node 2 (MatMul) reads output 'z' before it is produced"),
      r.message());

  // Names pointing at a node that does not exist.
  ByteWriter nw;
  nw.u32(0);
  nw.u32(1);
  nw.i32(40);
  nw.str("ghost");
  expect_error(replace_section(b, K::names, nw.take()), {"names section", "node id 40 out of range"});
}

BOOST_AUTO_TEST_CASE(fuzzed_tables_with_valid_checksums_never_crash) {
  // Mutate every byte of the table sections, fix the CRCs so that the parser sees the damage,
  // and read: each attempt must return (success or a clean error). Run under ASan/UBSan to make
  // this a memory-safety check.
  auto b = serialize(sample_graph(), {.codec = "zlib"});
  int failures = 0, total = 0;
  for (K kind : {K::metadata, K::graph, K::params, K::names}) {
    SectionRef s = section(b, kind);
    for (std::size_t i = s.offset; i < s.offset + s.size; ++i) {
      for (uint8_t v :
           {uint8_t{0x00}, uint8_t{0xff}, uint8_t{0x80}, static_cast<uint8_t>(uint8_t(b[i]) + 1)}) {
        if (static_cast<uint8_t>(b[i]) == v) continue;
        auto bad = b;
        bad[i] = static_cast<std::byte>(v);
        fix_crcs(bad);
        auto r = read_bytes(bad, "fuzz.weave");
        ++total;
        if (!r.ok()) {
          ++failures;
          BOOST_REQUIRE_MESSAGE(contains(r.message(), "fuzz.weave"), r.message());
        }
      }
    }
  }
  // Most mutations break something; a few (e.g. a float attribute's bits) are legitimately valid.
  BOOST_TEST(failures > total / 2);
  BOOST_TEST_MESSAGE(failures << " of " << total << " mutations rejected");
}
