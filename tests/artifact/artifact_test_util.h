// Helpers shared by the artifact tests: a hand-built graph that uses every part of the IR, and
// tools that edit .weave bytes by the layout documented in docs/artifact.md (so the tests also
// check the documentation).
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "core/artifact/artifact.h"
#include "core/artifact/byte_io.h"
#include "core/artifact/codec.h"
#include "core/artifact/format.h"
#include "core/graph/graph.h"

namespace weave::test {

template <class T>
SharedBytes bytes_of(const std::vector<T>& v) {
  return SharedBytes::copy_of(std::as_bytes(std::span(v)));
}

// x:float32[batch,3,4,4] -> Conv(W) -> Reshape(shape) -> MatMul(W2) -> y ; ConstantOfShape -> z
inline Graph sample_graph() {
  Graph g;
  Value x{ValueKind::input, DType::float32, {kDynamic, 3, 4, 4}, true, -1};
  int32_t vx = g.add_value(x);
  std::vector<float> w(8 * 3 * 3 * 3);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i) - 1.0f;
  int32_t vw = g.add_param(DType::float32, {8, 3, 3, 3}, bytes_of(w));
  int32_t vshape = g.add_param(DType::int64, {2}, bytes_of(std::vector<int64_t>{-1, 128}));
  std::vector<float> w2(128 * 16);  // 8 KiB, smooth: compresses
  for (std::size_t i = 0; i < w2.size(); ++i) w2[i] = static_cast<float>(i % 64) * 0.5f;
  int32_t vw2 = g.add_param(DType::float32, {128, 16}, bytes_of(w2));
  std::vector<uint8_t> u8(3000);
  for (std::size_t i = 0; i < u8.size(); ++i) u8[i] = static_cast<uint8_t>((i * 7) % 13);
  int32_t vu8 = g.add_param(DType::uint8, {3000}, bytes_of(u8));
  int32_t vh = g.add_param(DType::float16, {3, 5}, bytes_of(std::vector<uint16_t>(15, 0x3c00)));
  int32_t vb = g.add_param(DType::boolean, {0}, SharedBytes());  // empty param
  int32_t vc = g.add_value(Value{ValueKind::intermediate, DType::float32, {kDynamic, 8, 2, 2}, true, -1});
  int32_t vr = g.add_value(Value{ValueKind::intermediate, DType::float32, {}, false, -1});  // unknown rank
  int32_t vy = g.add_value(Value{ValueKind::intermediate, DType::float32, {kDynamic, 16}, true, -1});
  int32_t vz = g.add_value(Value{ValueKind::intermediate, DType::int8, {2, 3}, true, -1});
  int32_t vu = g.add_value(Value{ValueKind::intermediate, DType::undefined, {}, false, -1});

  Node conv{"Conv", {vx, vw, kNoValue}, {vc}, {}};
  conv.attrs.set("group", int64_t{1});
  conv.attrs.set("alpha", 0.25f);
  conv.attrs.set("auto_pad", std::string("NOTSET"));
  conv.attrs.set("pads", std::vector<int64_t>{0, 0, -1, 1LL << 40});
  conv.attrs.set("scales", std::vector<float>{1.5f, -0.0f, 3e-38f});
  conv.attrs.set("labels", std::vector<std::string>{"a", "", "ünïcode"});
  g.nodes.push_back(conv);
  g.nodes.push_back(Node{"Reshape", {vc, vshape}, {vr}, {}});
  g.nodes.push_back(Node{"MatMul", {vr, vw2}, {vy}, {}});
  Node cos{"ConstantOfShape", {vu8, vh, vb}, {vz, vu}, {}};
  cos.attrs.set("value", TensorAttr{DType::int8, {1}, {0xfe}});
  cos.attrs.set("empty_ints", std::vector<int64_t>{});
  g.nodes.push_back(cos);

  g.inputs = {vx};
  g.outputs = {vy, vz};
  g.input_infos = {TensorInfo{"x", DType::float32, {kDynamic, 3, 4, 4}, {"batch", "", "", ""}}};
  g.output_infos = {TensorInfo{"y", DType::float32, {kDynamic, 16}, {"batch", ""}},
                    TensorInfo{"z", DType::int8, {2, 3}, {}}};
  g.names.values = {{vw, "conv.weight"}, {vc, "/conv/Conv_output_0"}, {vy, "y"}};
  g.names.nodes = {{0, "/conv/Conv"}, {3, "/cos"}};
  g.metadata = {{"producer", "pytorch 2.1"}, {"opset", "17"}, {"labels", "cat\ndog"}};
  return g;
}

struct SectionRef {
  uint32_t kind;
  std::size_t offset;
  std::size_t size;
  std::size_t entry;  // file offset of the table entry
};

inline uint64_t get_le(const std::vector<std::byte>& b, std::size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}
inline void put_le(std::vector<std::byte>& b, std::size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

// The section table of a well-formed file (header field at offset 24 = count, entries at 40).
inline std::vector<SectionRef> sections_of(const std::vector<std::byte>& b) {
  std::vector<SectionRef> out;
  const auto count = get_le(b, 24, 4);
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t e = 40 + 32 * i;
    out.push_back({static_cast<uint32_t>(get_le(b, e, 4)), static_cast<std::size_t>(get_le(b, e + 8, 8)),
                   static_cast<std::size_t>(get_le(b, e + 16, 8)), e});
  }
  return out;
}

inline SectionRef section(const std::vector<std::byte>& b, artifact_format::SectionKind kind) {
  for (const auto& s : sections_of(b))
    if (s.kind == static_cast<uint32_t>(kind)) return s;
  return {0, 0, 0, 0};
}

// Recomputes every section CRC (blobs keep 0), the table CRC and the header CRC, so that a test
// can hand the parser structurally hostile content that passes the checksums.
// Recomputes only the table and header CRCs (for tables that point outside the file).
inline void fix_table_crcs(std::vector<std::byte>& b) {
  const auto count = get_le(b, 24, 4);
  put_le(b, 28, crc32_of(std::span(b).subspan(40, 32 * count)), 4);
  put_le(b, 32, crc32_of(std::span(b).first(32)), 4);
}

inline void fix_crcs(std::vector<std::byte>& b) {
  for (const auto& s : sections_of(b))
    if (s.kind != static_cast<uint32_t>(artifact_format::SectionKind::blobs))
      put_le(b, s.entry + 24, crc32_of(std::span(b).subspan(s.offset, s.size)), 4);
  const auto count = get_le(b, 24, 4);
  put_le(b, 28, crc32_of(std::span(b).subspan(40, 32 * count)), 4);
  put_le(b, 32, crc32_of(std::span(b).first(32)), 4);
}

struct RawSection {
  uint32_t kind;
  std::vector<std::byte> bytes;
};

// Lays sections out as the writer does (header, table, sections back to back, the blob section
// 64-byte aligned) with correct sizes and CRCs, whatever their content.
inline std::vector<std::byte> assemble(const std::vector<RawSection>& sections) {
  ByteWriter w;
  for (unsigned char c : artifact_format::kMagic) w.u8(c);
  w.u32(artifact_format::kFormatVersion);
  w.u32(0);
  w.u64(0);
  w.u32(static_cast<uint32_t>(sections.size()));
  w.zeros(12);
  w.zeros(32 * sections.size());
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].kind == static_cast<uint32_t>(artifact_format::SectionKind::blobs)) w.pad_to(64);
    w.patch_u32(40 + 32 * i, sections[i].kind);
    w.patch_u64(40 + 32 * i + 8, w.size());
    w.patch_u64(40 + 32 * i + 16, sections[i].bytes.size());
    w.bytes(sections[i].bytes);
  }
  w.patch_u64(16, w.size());
  auto out = w.take();
  fix_crcs(out);
  return out;
}

inline std::vector<RawSection> split(const std::vector<std::byte>& b) {
  std::vector<RawSection> out;
  for (const auto& s : sections_of(b))
    out.push_back({s.kind, {b.begin() + s.offset, b.begin() + s.offset + s.size}});
  return out;
}

// Replaces the content of one section; the rest of the file is laid out again around it.
inline std::vector<std::byte> replace_section(const std::vector<std::byte>& b,
                                              artifact_format::SectionKind kind,
                                              const std::vector<std::byte>& content) {
  auto parts = split(b);
  for (auto& p : parts)
    if (p.kind == static_cast<uint32_t>(kind)) p.bytes = content;
  return assemble(parts);
}

inline std::vector<std::byte> section_bytes(const std::vector<std::byte>& b,
                                            artifact_format::SectionKind kind) {
  SectionRef s = section(b, kind);
  return {b.begin() + s.offset, b.begin() + s.offset + s.size};
}

inline Expected<Graph> read_bytes(const std::vector<std::byte>& b, const std::string& label = "mem.weave") {
  return read_artifact_bytes(SharedBytes::copy_of(b), label);
}

inline std::string tmp_path(const std::string& name) {
  const char* build = std::getenv("WEAVE_BUILD_ROOT");
  return std::string(build ? build : "/tmp") + "/artifact_test_" + name;
}

}  // namespace weave::test
