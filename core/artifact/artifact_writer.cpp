// Writes the .weave format; see docs/artifact.md for the layout this produces.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <variant>

#include "core/artifact/artifact.h"
#include "core/artifact/byte_io.h"
#include "core/artifact/codec.h"
#include "core/artifact/format.h"

namespace weave {
namespace {

using namespace artifact_format;

void put_shape(ByteWriter& w, const Shape& shape) {
  w.u32(static_cast<uint32_t>(shape.size()));
  for (int64_t d : shape) w.i64(d);
}

void put_info(ByteWriter& w, const TensorInfo& t) {
  w.str(t.name);
  w.i32(static_cast<int32_t>(t.dtype));
  put_shape(w, t.shape);
  w.u32(static_cast<uint32_t>(t.dim_names.size()));
  for (const auto& n : t.dim_names) w.str(n);
}

void put_attr(ByteWriter& w, const AttrValue& v) {
  w.u8(static_cast<uint8_t>(v.index()));  // AttrTag follows the variant's order
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          w.i64(x);
        } else if constexpr (std::is_same_v<T, float>) {
          w.f32(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          w.str(x);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          w.u32(static_cast<uint32_t>(x.size()));
          for (int64_t e : x) w.i64(e);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          w.u32(static_cast<uint32_t>(x.size()));
          for (float e : x) w.f32(e);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          w.u32(static_cast<uint32_t>(x.size()));
          for (const auto& e : x) w.str(e);
        } else {
          static_assert(std::is_same_v<T, TensorAttr>);
          w.i32(static_cast<int32_t>(x.dtype));
          put_shape(w, x.shape);
          w.u32(static_cast<uint32_t>(x.bytes.size()));
          w.bytes(std::as_bytes(std::span(x.bytes)));
        }
      },
      v);
}

std::vector<std::byte> metadata_section(const Graph& g) {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(g.input_infos.size()));
  for (const auto& t : g.input_infos) put_info(w, t);
  w.u32(static_cast<uint32_t>(g.output_infos.size()));
  for (const auto& t : g.output_infos) put_info(w, t);
  w.u32(static_cast<uint32_t>(g.metadata.size()));
  for (const auto& [k, v] : g.metadata) {
    w.str(k);
    w.str(v);
  }
  return w.take();
}

std::vector<std::byte> graph_section(const Graph& g) {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(g.values.size()));
  for (const Value& v : g.values) {
    w.u8(static_cast<uint8_t>(v.kind));
    w.u8(v.rank_known ? 1 : 0);
    w.u16(0);
    w.i32(static_cast<int32_t>(v.dtype));
    w.i32(v.param);
    put_shape(w, v.shape);
  }
  w.u32(static_cast<uint32_t>(g.nodes.size()));
  for (const Node& n : g.nodes) {
    w.str(n.op);
    w.u32(static_cast<uint32_t>(n.inputs.size()));
    for (int32_t id : n.inputs) w.i32(id);
    w.u32(static_cast<uint32_t>(n.outputs.size()));
    for (int32_t id : n.outputs) w.i32(id);
    w.u32(static_cast<uint32_t>(n.attrs.size()));
    for (const auto& [name, value] : n.attrs.items()) {
      w.str(name);
      put_attr(w, value);
    }
  }
  w.u32(static_cast<uint32_t>(g.inputs.size()));
  for (int32_t id : g.inputs) w.i32(id);
  w.u32(static_cast<uint32_t>(g.outputs.size()));
  for (int32_t id : g.outputs) w.i32(id);
  return w.take();
}

std::vector<std::byte> names_section(const NameMap& names) {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(names.values.size()));
  for (const auto& [id, name] : names.values) {
    w.i32(id);
    w.str(name);
  }
  w.u32(static_cast<uint32_t>(names.nodes.size()));
  for (const auto& [id, name] : names.nodes) {
    w.i32(id);
    w.str(name);
  }
  return w.take();
}

struct StoredParam {
  uint32_t codec = 0;                 // index into the codec string table
  std::vector<std::byte> compressed;  // empty when stored with "none" (bytes come from the graph)
  bool raw = true;
  uint64_t offset = 0;
  uint64_t stored_size = 0;
  uint32_t stored_crc = 0;
  uint32_t raw_crc = 0;
};

// What the reader enforces beyond Graph::validate(), checked here so that we never write a file
// we would refuse to read.
Status check_writable(const Graph& g) {
  constexpr auto kU32 = std::numeric_limits<uint32_t>::max();
  WEAVE_TRY(g.validate());
  auto rank_ok = [](const Shape& s) { return s.size() <= static_cast<std::size_t>(kMaxRank); };
  for (std::size_t i = 0; i < g.values.size(); ++i) {
    const Value& v = g.values[i];
    if (!rank_ok(v.shape)) return make_error("value ", i, " has rank ", v.shape.size(), " > ", kMaxRank);
    if (v.kind == ValueKind::param && (v.param < 0 || v.param >= static_cast<int32_t>(g.params.size()) ||
                                       g.params[v.param].value != static_cast<int32_t>(i)))
      return make_error("value ", i, " is a param value without a matching param");
  }
  for (const auto* infos : {&g.input_infos, &g.output_infos})
    for (const TensorInfo& t : *infos)
      if (!rank_ok(t.shape))
        return make_error("tensor '", t.name, "' has rank ", t.shape.size(), " > ", kMaxRank);
  for (std::size_t p = 0; p < g.params.size(); ++p)
    if (!dtype_valid(static_cast<int32_t>(g.values[g.params[p].value].dtype)))
      return make_error("param ", p, " has no valid dtype");
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].attrs.size() > kMaxAttributes)
      return make_error(g.node_label(static_cast<int32_t>(i)), ": more than ", kMaxAttributes, " attributes");
    for (const auto& [name, value] : g.nodes[i].attrs.items())
      if (const auto* t = std::get_if<TensorAttr>(&value);
          t && (t->bytes.size() > kU32 || !rank_ok(t->shape)))
        return make_error(g.node_label(static_cast<int32_t>(i)), ": tensor attribute '", name,
                          "' is too large");
  }
  return {};
}

}  // namespace

Expected<std::vector<std::byte>> serialize_artifact(const Graph& g, const WriteOptions& opt) {
  Status ok = check_writable(g);
  if (!ok) return ok.error().context("cannot write artifact");
  auto& registry = CodecRegistry::global();
  auto codec = registry.find(opt.codec);
  if (!codec) return make_error("cannot write artifact: unknown codec '", opt.codec, "'");

  // Encode params first: the params table needs their stored sizes.
  std::vector<std::string> codec_names;
  auto codec_index = [&](std::string_view name) {
    for (std::size_t i = 0; i < codec_names.size(); ++i)
      if (codec_names[i] == name) return static_cast<uint32_t>(i);
    codec_names.emplace_back(name);
    return static_cast<uint32_t>(codec_names.size() - 1);
  };
  std::vector<StoredParam> stored(g.params.size());
  uint64_t blob_end = 0;
  for (std::size_t p = 0; p < g.params.size(); ++p) {
    auto raw = g.params[p].data.span();
    StoredParam& s = stored[p];
    s.raw_crc = crc32_of(raw);
    if (codec->name() != "none" && raw.size() >= kMinCompressBytes) {
      auto c = codec->compress(raw, opt.level);
      if (!c) return c.error().context("cannot write artifact: param " + std::to_string(p));
      // Keep the compressed form only when it helps and stays within the bound the reader
      // enforces for this codec.
      if (c->size() < raw.size() && c->size() * codec->max_expansion() >= raw.size()) {
        s.compressed = std::move(*c);
        s.raw = false;
      }
    }
    s.codec = codec_index(s.raw ? "none" : codec->name());
    s.stored_size = s.raw ? raw.size() : s.compressed.size();
    s.stored_crc = s.raw ? s.raw_crc : crc32_of(s.compressed);
    s.offset = align_up(blob_end, kBlobAlignment);
    blob_end = s.offset + s.stored_size;
  }

  ByteWriter pw;
  pw.u32(static_cast<uint32_t>(codec_names.size()));
  for (const auto& n : codec_names) pw.str(n);
  pw.u32(static_cast<uint32_t>(g.params.size()));
  for (std::size_t p = 0; p < g.params.size(); ++p) {
    const Param& param = g.params[p];
    const Value& v = g.values[param.value];
    const StoredParam& s = stored[p];
    pw.i32(param.value);
    pw.i32(static_cast<int32_t>(v.dtype));
    pw.u32(s.codec);
    put_shape(pw, v.shape);
    pw.u64(s.offset);
    pw.u64(s.stored_size);
    pw.u64(param.data.size());
    pw.u32(s.stored_crc);
    pw.u32(s.raw_crc);
  }

  struct Section {
    SectionKind kind;
    std::vector<std::byte> bytes;
  };
  std::vector<Section> sections;
  sections.push_back({SectionKind::metadata, metadata_section(g)});
  sections.push_back({SectionKind::graph, graph_section(g)});
  sections.push_back({SectionKind::params, pw.take()});
  if (!opt.strip_names && !g.names.empty()) sections.push_back({SectionKind::names, names_section(g.names)});
  const std::size_t count = sections.size() + 1;  // + blobs

  ByteWriter w;
  for (unsigned char c : kMagic) w.u8(c);
  w.u32(kFormatVersion);
  w.u32(0);  // flags
  w.u64(0);  // file size, patched below
  w.u32(static_cast<uint32_t>(count));
  w.u32(0);  // table crc, patched below
  w.u32(0);  // header crc, patched below
  w.u32(0);  // reserved
  const std::size_t table_at = w.size();
  w.zeros(count * kSectionEntrySize);

  auto put_entry = [&](std::size_t i, SectionKind kind, uint64_t offset, uint64_t size, uint32_t crc) {
    std::size_t at = table_at + i * kSectionEntrySize;
    w.patch_u32(at, static_cast<uint32_t>(kind));
    w.patch_u32(at + 4, 0);
    w.patch_u64(at + 8, offset);
    w.patch_u64(at + 16, size);
    w.patch_u32(at + 24, crc);
    w.patch_u32(at + 28, 0);
  };
  for (std::size_t i = 0; i < sections.size(); ++i) {
    put_entry(i, sections[i].kind, w.size(), sections[i].bytes.size(), crc32_of(sections[i].bytes));
    w.bytes(sections[i].bytes);
  }
  w.pad_to(kBlobAlignment);
  const std::size_t blobs_at = w.size();
  // The blob area has no section CRC (its crc field is 0): every blob carries its own, and the
  // reader requires all padding between blobs to be zero.
  put_entry(sections.size(), SectionKind::blobs, blobs_at, blob_end, 0);
  for (std::size_t p = 0; p < g.params.size(); ++p) {
    w.zeros(blobs_at + stored[p].offset - w.size());
    w.bytes(stored[p].raw ? g.params[p].data.span() : std::span<const std::byte>(stored[p].compressed));
  }
  w.patch_u64(16, w.size());
  w.patch_u32(28, crc32_of(w.view().subspan(table_at, count * kSectionEntrySize)));
  w.patch_u32(kHeaderCrcOffset, crc32_of(w.view().first(kHeaderCrcOffset)));
  return w.take();
}

Status write_artifact(const Graph& g, const std::string& path, const WriteOptions& opt) {
  auto bytes = serialize_artifact(g, opt);
  if (!bytes) return bytes.error().context(path);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(path, ": cannot create ", tmp, ": ", std::strerror(errno));
    out.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    out.close();  // a full disk may only show when the last block is written
    if (!out) {
      const int err = errno;
      std::remove(tmp.c_str());
      return make_error(path, ": write failed (", bytes->size(), " bytes): ", std::strerror(err));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return make_error(path, ": cannot rename ", tmp, " into place");
  }
  return {};
}

}  // namespace weave
