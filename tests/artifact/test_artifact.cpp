// Round trips of the .weave artifact: every part of the graph IR, names, metadata, mmap'd params.
#define BOOST_TEST_MODULE artifact
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/artifact/mapped_file.h"
#include "tests/artifact/artifact_test_util.h"

using namespace weave;
using namespace weave::test;
namespace af = weave::artifact_format;

namespace {

void check_info(const TensorInfo& a, const TensorInfo& b) {
  BOOST_TEST(a.name == b.name);
  BOOST_TEST(static_cast<int>(a.dtype) == static_cast<int>(b.dtype));
  BOOST_TEST(a.shape == b.shape);
  BOOST_TEST(a.dim_names == b.dim_names);
}

// Field-by-field equality of everything the IR holds (names only when `with_names`).
void check_same(const Graph& a, const Graph& b, bool with_names = true) {
  BOOST_REQUIRE_EQUAL(a.values.size(), b.values.size());
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    BOOST_TEST_CONTEXT("value " << i) {
      BOOST_TEST(static_cast<int>(a.values[i].kind) == static_cast<int>(b.values[i].kind));
      BOOST_TEST(static_cast<int>(a.values[i].dtype) == static_cast<int>(b.values[i].dtype));
      BOOST_TEST(a.values[i].shape == b.values[i].shape);
      BOOST_TEST(a.values[i].rank_known == b.values[i].rank_known);
      BOOST_TEST(a.values[i].param == b.values[i].param);
    }
  }
  BOOST_REQUIRE_EQUAL(a.nodes.size(), b.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    BOOST_TEST_CONTEXT("node " << i) {
      BOOST_TEST(a.nodes[i].op == b.nodes[i].op);
      BOOST_TEST(a.nodes[i].inputs == b.nodes[i].inputs);
      BOOST_TEST(a.nodes[i].outputs == b.nodes[i].outputs);
      BOOST_TEST((a.nodes[i].attrs == b.nodes[i].attrs));
    }
  }
  BOOST_REQUIRE_EQUAL(a.params.size(), b.params.size());
  for (std::size_t p = 0; p < a.params.size(); ++p) {
    BOOST_TEST_CONTEXT("param " << p) {
      BOOST_TEST(a.params[p].value == b.params[p].value);
      BOOST_REQUIRE_EQUAL(a.params[p].data.size(), b.params[p].data.size());
      if (a.params[p].data.size())
        BOOST_TEST(std::memcmp(a.params[p].data.data(), b.params[p].data.data(), a.params[p].data.size()) ==
                   0);
    }
  }
  BOOST_TEST(a.inputs == b.inputs);
  BOOST_TEST(a.outputs == b.outputs);
  BOOST_REQUIRE_EQUAL(a.input_infos.size(), b.input_infos.size());
  for (std::size_t i = 0; i < a.input_infos.size(); ++i) check_info(a.input_infos[i], b.input_infos[i]);
  BOOST_REQUIRE_EQUAL(a.output_infos.size(), b.output_infos.size());
  for (std::size_t i = 0; i < a.output_infos.size(); ++i) check_info(a.output_infos[i], b.output_infos[i]);
  BOOST_TEST((a.metadata == b.metadata));
  if (with_names) {
    BOOST_TEST((a.names.values == b.names.values));
    BOOST_TEST((a.names.nodes == b.names.nodes));
  }
}

std::vector<std::byte> serialize(const Graph& g, WriteOptions opt = {}) {
  auto b = serialize_artifact(g, opt);
  BOOST_REQUIRE_MESSAGE(b.ok(), (b.ok() ? "" : b.message()));
  return std::move(*b);
}

std::vector<std::byte> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  std::memcpy(out.data(), c.data(), c.size());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(sample_graph_is_valid) {
  Graph g = sample_graph();
  BOOST_TEST(g.validate().ok());
}

BOOST_AUTO_TEST_CASE(round_trip_every_part_of_the_ir) {
  Graph g = sample_graph();
  auto bytes = serialize(g);
  auto back = read_bytes(bytes);
  BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.message()));
  check_same(g, *back);
  // Spot checks by hand, independent of check_same.
  const Attributes& attrs = back->nodes[0].attrs;
  BOOST_TEST(attrs.get_ints("pads") == (std::vector<int64_t>{0, 0, -1, 1LL << 40}));
  BOOST_TEST(std::signbit(attrs.get_floats("scales")[1]));
  BOOST_TEST(attrs.get_strings("labels")[2] == "ünïcode");
  BOOST_TEST(back->nodes[3].attrs.get_tensor("value")->bytes == (std::vector<uint8_t>{0xfe}));
  BOOST_TEST(back->values[8].rank_known == false);
  BOOST_TEST(back->input_infos[0].shape[0] == kDynamic);
  BOOST_TEST(back->input_infos[0].dim_names[0] == "batch");
  BOOST_TEST(back->metadata.at("labels") == "cat\ndog");
  BOOST_TEST(back->names.nodes.at(0) == "/conv/Conv");
  BOOST_TEST(back->params[5].data.size() == 0u);
}

BOOST_AUTO_TEST_CASE(header_layout_matches_the_documentation) {
  auto b = serialize(sample_graph());
  BOOST_TEST(std::memcmp(b.data(), "WEAVE\r\n\x1a", 8) == 0);
  BOOST_TEST(get_le(b, 8, 4) == 1u);         // version
  BOOST_TEST(get_le(b, 16, 8) == b.size());  // file size
  BOOST_TEST(get_le(b, 24, 4) == 5u);        // metadata graph params names blobs
  auto secs = sections_of(b);
  BOOST_REQUIRE_EQUAL(secs.size(), 5u);
  BOOST_TEST(secs[0].kind == 1u);
  BOOST_TEST(secs[0].offset == 40u + 5 * 32);
  BOOST_TEST(secs[4].kind == 5u);
  BOOST_TEST(secs[4].offset % 64 == 0u);
  // Rebuilding the file from its sections with the documented layout gives the same bytes.
  BOOST_TEST((assemble(split(b)) == b));
}

BOOST_AUTO_TEST_CASE(serialization_is_deterministic_and_matches_the_file) {
  Graph g = sample_graph();
  auto a = serialize(g);
  BOOST_TEST((serialize(g) == a));
  const std::string path = tmp_path("det.weave");
  BOOST_REQUIRE(write_artifact(g, path, {}).ok());
  BOOST_TEST((file_bytes(path) == a));
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(names_present_and_stripped) {
  Graph g = sample_graph();
  const std::string path = tmp_path("names.weave");
  BOOST_REQUIRE(write_artifact(g, path, {.codec = "zlib", .level = -1, .strip_names = true}).ok());
  auto back = read_artifact(path);
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(back->names.empty());
  check_same(g, *back, false);
  // The only name left is that of real inputs/outputs; node labels lose the name part.
  BOOST_TEST(back->node_label(0) == "node 0 (Conv)");
  auto info = inspect_artifact(path);
  BOOST_REQUIRE(info.ok());
  BOOST_TEST(!info->has_names);
  BOOST_TEST(info->sections.size() == 4u);

  BOOST_REQUIRE(write_artifact(g, path, {}).ok());
  back = read_artifact(path);
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(back->node_label(0) == "node 0 (Conv '/conv/Conv')");
  BOOST_TEST(inspect_artifact(path)->has_names);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(mmap_none_params_point_into_the_mapping) {
  Graph g = sample_graph();
  // One param big enough (>= 64 KiB) to be used in place; the small ones are copied so that a
  // mapping is only kept alive by params worth it.
  std::vector<float> big(32768, 0.5f);
  const int32_t big_value =
      g.add_param(DType::float32, {32768}, SharedBytes::copy_of(std::as_bytes(std::span(big))));
  const std::string path = tmp_path("mmap.weave");
  BOOST_REQUIRE(write_artifact(g, path, {.codec = "none"}).ok());
  auto back = read_artifact(path, {.use_mmap = true});
  BOOST_REQUIRE(back.ok());
  check_same(g, *back);
  const auto& owner = back->params[0].data.owner();
  BOOST_REQUIRE(owner);
  // The big param's owner is the MappedFile and its data lies inside the map; small params are
  // 64-byte aligned copies outside it.
  const Param& big_param = back->params[back->values[big_value].param];
  const auto& owner_big = big_param.data.owner();
  auto file = std::static_pointer_cast<const MappedFile>(owner_big);
  auto map = file->bytes();
  BOOST_TEST(map.size() == file_bytes(path).size());
  int in_place = 0;
  for (const Param& p : back->params) {
    if (p.data.size() == 0) continue;
    const bool inside =
        p.data.data() >= map.data() && p.data.data() + p.data.size() <= map.data() + map.size();
    BOOST_TEST(inside == (p.data.size() >= 64 * 1024));
    if (inside) {
      BOOST_TEST(p.data.owner().get() == owner_big.get());
      ++in_place;
    }
    BOOST_TEST(reinterpret_cast<std::uintptr_t>(p.data.data()) % 64 == 0u);
  }
  BOOST_TEST(in_place == 1);
  // The params keep the mapping alive after the graph that loaded them is gone.
  SharedBytes kept = big_param.data;
  back = Graph();
  BOOST_TEST_REQUIRE(kept.size() == big.size() * sizeof(float));
  BOOST_TEST(std::memcmp(kept.data(), big.data(), kept.size()) == 0);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(compressed_params_are_decoded_into_aligned_heap_blocks) {
  Graph g = sample_graph();
  const std::string path = tmp_path("heap.weave");
  BOOST_REQUIRE(write_artifact(g, path, {.codec = "zlib"}).ok());
  auto back = read_artifact(path, {.use_mmap = false});
  BOOST_REQUIRE(back.ok());
  check_same(g, *back);
  // Param 2 (8 KiB smooth floats) was compressed, param 0 (864 B) is below the 1 KiB threshold.
  const auto& small = back->params[0].data;
  const auto& big = back->params[2].data;
  BOOST_TEST(small.owner().get() != big.owner().get());
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(big.data()) % 64 == 0u);
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(small.data()) % 64 == 0u);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(unaligned_memory_is_copied_not_aliased) {
  Graph g = sample_graph();
  std::vector<float> big(32768, 0.25f);  // >= 64 KiB: used in place when aligned
  const int32_t big_value =
      g.add_param(DType::float32, {32768}, SharedBytes::copy_of(std::as_bytes(std::span(big))));
  auto b = serialize(g, {.codec = "none"});
  // A buffer whose start is 1 byte past 64-byte alignment: blobs would be misaligned in place.
  auto block = std::make_shared<AlignedBuffer>(b.size() + 1);
  std::memcpy(block->data() + 1, b.data(), b.size());
  SharedBytes view(std::span<const std::byte>(block->data() + 1, b.size()), block);
  auto back = read_artifact_bytes(view, "unaligned");
  BOOST_REQUIRE(back.ok());
  for (const Param& p : back->params) {
    if (p.data.size() == 0) continue;
    BOOST_TEST(reinterpret_cast<std::uintptr_t>(p.data.data()) % 64 == 0u);
    BOOST_TEST(p.data.owner().get() != static_cast<const void*>(block.get()));
  }
  // Aligned memory is aliased.
  auto aligned = SharedBytes::copy_of(b);
  back = read_artifact_bytes(aligned, "aligned");
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(back->params[back->values[big_value].param].data.owner().get() == aligned.owner().get());
}

BOOST_AUTO_TEST_CASE(inspect_reports_sections_codecs_and_tables) {
  Graph g = sample_graph();
  const std::string path = tmp_path("inspect.weave");
  BOOST_REQUIRE(write_artifact(g, path, {.codec = "zlib"}).ok());
  auto info = inspect_artifact(path);
  BOOST_REQUIRE_MESSAGE(info.ok(), (info.ok() ? "" : info.message()));
  BOOST_TEST(info->version == 1u);
  BOOST_TEST(info->file_size == file_bytes(path).size());
  std::vector<std::string> names;
  for (const auto& s : info->sections) names.push_back(s.name);
  BOOST_TEST(names == (std::vector<std::string>{"metadata", "graph", "params", "names", "blobs"}));
  BOOST_TEST(info->value_count == g.values.size());
  BOOST_TEST(info->node_count == 4u);
  BOOST_TEST(info->param_count == 6u);
  BOOST_TEST(info->inputs[0].name == "x");
  BOOST_TEST(info->outputs[1].name == "z");
  BOOST_TEST(info->metadata.at("opset") == "17");
  // w2 (8192 B) and u8 (3000 B) are >= 1 KiB and compress; the rest is stored as-is.
  BOOST_REQUIRE(info->codecs.count("zlib"));
  BOOST_TEST(info->codecs.at("zlib").params == 2u);
  BOOST_TEST(info->codecs.at("zlib").raw_bytes == 8192u + 3000u);
  BOOST_TEST(info->codecs.at("zlib").stored_bytes < info->codecs.at("zlib").raw_bytes / 4);
  BOOST_TEST(info->codecs.at("none").params == 4u);
  BOOST_TEST(info->codecs.at("none").raw_bytes == 864u + 16u + 30u + 0u);
  BOOST_TEST(info->codecs.at("none").stored_bytes == info->codecs.at("none").raw_bytes);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(incompressible_params_fall_back_to_none) {
  Graph g;
  std::vector<uint8_t> noise(4096);
  uint32_t s = 12345;
  for (auto& b : noise) b = static_cast<uint8_t>((s = s * 1103515245u + 12345u) >> 24);
  int32_t p = g.add_param(DType::uint8, {4096}, bytes_of(noise));
  int32_t out = g.add_value(Value{ValueKind::intermediate, DType::uint8, {4096}, true, -1});
  g.nodes.push_back(Node{"Identity", {p}, {out}, {}});
  g.outputs = {out};
  g.output_infos = {TensorInfo{"out", DType::uint8, {4096}, {}}};
  const std::string path = tmp_path("noise.weave");
  BOOST_REQUIRE(write_artifact(g, path, {.codec = "zlib", .level = 9}).ok());
  auto info = inspect_artifact(path);
  BOOST_REQUIRE(info.ok());
  BOOST_TEST(info->codecs.count("zlib") == 0u);
  BOOST_TEST(info->codecs.at("none").params == 1u);
  auto back = read_artifact(path);
  BOOST_REQUIRE(back.ok());
  check_same(g, *back);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(writer_rejects_what_the_reader_would_reject) {
  Graph g = sample_graph();
  g.nodes[2].inputs[0] = 99;  // out of range
  auto r = serialize_artifact(g, {});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("cannot write artifact") != std::string::npos);
  BOOST_TEST(r.message().find("out of range") != std::string::npos);

  Graph big = sample_graph();
  big.values[7].shape = Shape(9, 1);
  r = serialize_artifact(big, {});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("rank 9") != std::string::npos);

  r = serialize_artifact(sample_graph(), {.codec = "brotli"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("unknown codec 'brotli'") != std::string::npos);

  r = serialize_artifact(sample_graph(), {.codec = "zlib", .level = 12});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("level 12") != std::string::npos);

  BOOST_TEST(!write_artifact(sample_graph(), "/nonexistent-dir/x.weave", {}).ok());
}

BOOST_AUTO_TEST_CASE(empty_graph_round_trips) {
  Graph g;
  auto b = serialize(g);
  auto back = read_bytes(b);
  BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.message()));
  BOOST_TEST(back->values.empty());
  BOOST_TEST(back->params.empty());
}
