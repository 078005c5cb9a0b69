// Reads the .weave format (docs/artifact.md). The file is hostile until proven otherwise: all
// parsing goes through ByteReader (bounds-checked, counts capped by the remaining bytes), sizes
// are checked for overflow, and each failure names the file and the section.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <new>
#include <set>
#include <vector>

#include "core/artifact/artifact.h"
#include "core/artifact/byte_io.h"
#include "core/artifact/codec.h"
#include "core/artifact/format.h"
#include "core/artifact/mapped_file.h"
#include "core/threads/thread_budget.h"

namespace weave {
namespace {

using namespace artifact_format;

template <class... Args>
Error section_error(const std::string& label, std::string_view section, Args&&... args) {
  return make_error(label, ": ", section, " section: ", std::forward<Args>(args)...);
}

std::string hex32(uint32_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x00000000";
  for (int i = 0; i < 8; ++i) s[9 - i] = digits[(v >> (4 * i)) & 0xf];
  return s;
}

bool all_zero(std::span<const std::byte> b) {
  return std::all_of(b.begin(), b.end(), [](std::byte x) { return x == std::byte{0}; });
}

struct Layout {
  uint32_t version = 0;
  uint64_t file_size = 0;
  std::vector<SectionSummary> table;
  std::span<const std::byte> metadata, graph, params, names, blobs;
  bool has_names = false;
};

Expected<Layout> parse_layout(std::span<const std::byte> file, const std::string& label) {
  Layout L;
  if (file.size() < kMagic.size())
    return make_error(label, ": header: not a .weave artifact (", file.size(),
                      " bytes, too short for the magic)");
  for (std::size_t i = 0; i < kMagic.size(); ++i)
    if (file[i] != static_cast<std::byte>(kMagic[i]))
      return make_error(label, ": header: bad magic, not a .weave artifact");
  if (file.size() < kHeaderSize)
    return make_error(label, ": header: truncated (file is ", file.size(), " bytes, the header needs ",
                      kHeaderSize, ")");
  ByteReader h(file.first(kHeaderSize));
  h.bytes(kMagic.size());
  L.version = h.u32();
  // The version is checked before the CRC so that a file from a newer writer says so clearly.
  if (L.version != kFormatVersion)
    return make_error(label, ": header: unsupported format version ", L.version, " (this reader supports ",
                      kFormatVersion, ")");
  const uint32_t flags = h.u32();
  L.file_size = h.u64();
  const uint32_t count = h.u32();
  const uint32_t table_crc = h.u32();
  const uint32_t header_crc = h.u32();
  const uint32_t reserved = h.u32();
  const uint32_t header_actual = crc32_of(file.first(kHeaderCrcOffset));
  if (header_crc != header_actual)
    return make_error(label, ": header: checksum mismatch (stored ", hex32(header_crc), ", computed ",
                      hex32(header_actual), "); the file is corrupt");
  if (flags != 0 || reserved != 0) return make_error(label, ": header: nonzero flags or reserved field");
  if (L.file_size > file.size())
    return make_error(label, ": header: file is truncated (header declares ", L.file_size,
                      " bytes, file has ", file.size(), ")");
  if (L.file_size < file.size())
    return make_error(label, ": header: ", file.size() - L.file_size,
                      " unexpected bytes after the declared end");
  if (count == 0 || count > kMaxSections)
    return make_error(label, ": section table: section count ", count, " is outside 1..", kMaxSections);
  const uint64_t table_end = kHeaderSize + static_cast<uint64_t>(count) * kSectionEntrySize;
  if (table_end > file.size())
    return make_error(label, ": section table: truncated (", count, " entries need ", table_end,
                      " bytes, file has ", file.size(), ")");
  auto table = file.subspan(kHeaderSize, table_end - kHeaderSize);
  const uint32_t table_actual = crc32_of(table);
  if (table_crc != table_actual)
    return make_error(label, ": section table: checksum mismatch (stored ", hex32(table_crc), ", computed ",
                      hex32(table_actual), "); the file is corrupt");

  ByteReader r(table);
  std::set<uint32_t> seen;
  for (uint32_t i = 0; i < count; ++i) {
    SectionSummary s;
    s.kind = r.u32();
    const uint32_t sflags = r.u32();
    s.offset = r.u64();
    s.size = r.u64();
    s.crc32 = r.u32();
    const uint32_t sreserved = r.u32();
    s.name = std::string(section_name(s.kind));
    const std::string where = label + ": section table: entry " + std::to_string(i) + " (" + s.name + ")";
    if (sflags != 0 || sreserved != 0) return make_error(where, ": nonzero flags or reserved field");
    if (s.name == "unknown" && !(s.kind & kOptionalSectionBit))
      return make_error(where, ": unknown required section kind ", s.kind, " (written by a newer Weave?)");
    if (!seen.insert(s.kind).second) return make_error(where, ": duplicate section");
    if (s.offset < table_end || s.offset > L.file_size || s.size > L.file_size - s.offset)
      return make_error(where, ": range [", s.offset, ", +", s.size, ") lies outside the file's ",
                        L.file_size, " bytes");
    L.table.push_back(std::move(s));
  }

  // Sections must not overlap, and every byte between them must be zero padding: together with
  // the CRCs this means no byte of the file goes unchecked.
  std::vector<const SectionSummary*> by_offset;
  for (const auto& s : L.table) by_offset.push_back(&s);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return a->offset < b->offset; });
  uint64_t pos = table_end;
  for (const auto* s : by_offset) {
    if (s->offset < pos)
      return make_error(label, ": section table: ", s->name, " section overlaps the previous section");
    if (!all_zero(file.subspan(pos, s->offset - pos)))
      return make_error(label, ": padding before the ", s->name, " section is not zero; the file is corrupt");
    pos = s->offset + s->size;
  }
  if (!all_zero(file.subspan(pos)))
    return make_error(label, ": padding after the last section is not zero; the file is corrupt");

  for (const auto& s : L.table) {
    auto bytes = file.subspan(s.offset, s.size);
    if (s.kind == static_cast<uint32_t>(SectionKind::blobs)) {
      if (s.crc32 != 0) return section_error(label, "blobs", "checksum field must be 0");
      if (s.offset % kBlobAlignment != 0)
        return section_error(label, "blobs", "offset ", s.offset, " is not a multiple of ", kBlobAlignment);
      L.blobs = bytes;
      continue;
    }
    const uint32_t actual = crc32_of(bytes);
    if (actual != s.crc32)
      return section_error(label, s.name, "checksum mismatch (stored ", hex32(s.crc32), ", computed ",
                           hex32(actual), "); the file is corrupt");
    switch (static_cast<SectionKind>(s.kind)) {
      case SectionKind::metadata:
        L.metadata = bytes;
        break;
      case SectionKind::graph:
        L.graph = bytes;
        break;
      case SectionKind::params:
        L.params = bytes;
        break;
      case SectionKind::names:
        L.names = bytes;
        L.has_names = true;
        break;
      default:
        break;  // optional section of a newer writer
    }
  }
  for (SectionKind k : {SectionKind::metadata, SectionKind::graph, SectionKind::params, SectionKind::blobs})
    if (!seen.count(static_cast<uint32_t>(k)))
      return make_error(label, ": section table: required ", section_name(static_cast<uint32_t>(k)),
                        " section is missing");
  return L;
}

// Dims are kDynamic (-1) or >= 0; ranks are capped at kMaxRank (what Dims can hold).
void read_shape(ByteReader& r, Shape& out) {
  const std::size_t at = r.offset();
  const uint32_t rank = r.u32();
  if (rank > static_cast<uint32_t>(kMaxRank)) {
    r.fail("rank " + std::to_string(rank) + " at offset " + std::to_string(at) + " exceeds the maximum " +
           std::to_string(kMaxRank));
    return;
  }
  out.clear();
  for (uint32_t i = 0; i < rank && r.ok(); ++i) {
    const int64_t d = r.i64();
    if (d < kDynamic) r.fail("dim " + std::to_string(i) + " is " + std::to_string(d));
    out.push_back(d);
  }
}

// 0 (undefined) is allowed where a dtype may be unknown (intermediates); params require a real one.
DType read_dtype(ByteReader& r, bool allow_undefined) {
  const int32_t raw = r.i32();
  if (!(dtype_valid(raw) || (allow_undefined && raw == 0))) r.fail("invalid dtype " + std::to_string(raw));
  return static_cast<DType>(raw);
}

void read_info(ByteReader& r, TensorInfo& t) {
  t.name = r.str("tensor name");
  t.dtype = read_dtype(r, true);
  read_shape(r, t.shape);
  const uint32_t n = r.count(4, "dim names");
  for (uint32_t i = 0; i < n && r.ok(); ++i) t.dim_names.push_back(r.str("dim name"));
}

Status finish(ByteReader& r, const std::string& label, std::string_view section) {
  if (!r.ok()) return section_error(label, section, r.error());
  if (!r.at_end()) return section_error(label, section, r.remaining(), " unexpected bytes at the end");
  return {};
}

Status parse_metadata(std::span<const std::byte> bytes, const std::string& label, Graph& g) {
  ByteReader r(bytes);
  constexpr std::size_t kMinInfo = 16;
  for (auto* infos : {&g.input_infos, &g.output_infos}) {
    const char* what = infos == &g.input_infos ? "input" : "output";
    const uint32_t n = r.count(kMinInfo, std::string(what) + "s");
    infos->resize(n);
    for (uint32_t i = 0; i < n && r.ok(); ++i) {
      read_info(r, (*infos)[i]);
      if (!r.ok()) return section_error(label, "metadata", what, " ", i, ": ", r.error());
    }
  }
  const uint32_t n = r.count(8, "metadata entries");
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    std::string key = r.str("metadata key");
    std::string value = r.str("metadata value");
    if (r.ok() && !g.metadata.emplace(std::move(key), std::move(value)).second)
      r.fail("duplicate metadata key at entry " + std::to_string(i));
  }
  return finish(r, label, "metadata");
}

void read_attr(ByteReader& r, AttrValue& out) {
  const uint8_t tag = r.u8();
  switch (static_cast<AttrTag>(tag)) {
    case AttrTag::int64:
      out = r.i64();
      return;
    case AttrTag::float32:
      out = r.f32();
      return;
    case AttrTag::string:
      out = r.str("string attribute");
      return;
    case AttrTag::ints: {
      std::vector<int64_t> v(r.count(8, "ints"));
      for (auto& e : v) e = r.i64();
      out = std::move(v);
      return;
    }
    case AttrTag::floats: {
      std::vector<float> v(r.count(4, "floats"));
      for (auto& e : v) e = r.f32();
      out = std::move(v);
      return;
    }
    case AttrTag::strings: {
      std::vector<std::string> v(r.count(4, "strings"));
      for (auto& e : v) e = r.str("string attribute");
      out = std::move(v);
      return;
    }
    case AttrTag::tensor: {
      TensorAttr t;
      t.dtype = read_dtype(r, true);
      read_shape(r, t.shape);
      auto b = r.bytes(r.count(1, "tensor bytes"), "tensor bytes");
      t.bytes.resize(b.size());
      std::transform(b.begin(), b.end(), t.bytes.begin(),
                     [](std::byte x) { return static_cast<uint8_t>(x); });
      out = std::move(t);
      return;
    }
  }
  r.fail("unknown attribute kind " + std::to_string(tag));
}

void read_ids(ByteReader& r, std::vector<int32_t>& ids, std::string_view what) {
  ids.resize(r.count(4, what));
  for (auto& id : ids) id = r.i32();
}

Status parse_graph(std::span<const std::byte> bytes, const std::string& label, Graph& g) {
  ByteReader r(bytes);
  g.values.resize(r.count(16, "values"));
  for (std::size_t i = 0; i < g.values.size() && r.ok(); ++i) {
    Value& v = g.values[i];
    const uint8_t kind = r.u8();
    const uint8_t rank_known = r.u8();
    const uint16_t reserved = r.u16();
    if (r.ok() && (kind > 2 || rank_known > 1 || reserved != 0))
      r.fail("bad kind " + std::to_string(kind) + " / rank flag " + std::to_string(rank_known));
    v.kind = static_cast<ValueKind>(kind);
    v.rank_known = rank_known == 1;
    v.dtype = read_dtype(r, true);
    v.param = r.i32();
    read_shape(r, v.shape);
    if (!r.ok()) return section_error(label, "graph", "value ", i, ": ", r.error());
  }
  g.nodes.resize(r.count(16, "nodes"));
  for (std::size_t i = 0; i < g.nodes.size() && r.ok(); ++i) {
    Node& n = g.nodes[i];
    n.op = r.str("op type");
    read_ids(r, n.inputs, "node inputs");
    read_ids(r, n.outputs, "node outputs");
    const uint32_t na = r.count(5, "attributes");
    if (na > kMaxAttributes)
      r.fail("node has " + std::to_string(na) + " attributes, more than " + std::to_string(kMaxAttributes));
    for (uint32_t a = 0; a < na && r.ok(); ++a) {
      std::string name = r.str("attribute name");
      AttrValue value;
      read_attr(r, value);
      if (!r.ok()) return section_error(label, "graph", "node ", i, ": attribute '", name, "': ", r.error());
      if (n.attrs.has(name))
        return section_error(label, "graph", "node ", i, ": duplicate attribute '", name, "'");
      n.attrs.set(std::move(name), std::move(value));
    }
    if (!r.ok()) return section_error(label, "graph", "node ", i, ": ", r.error());
  }
  read_ids(r, g.inputs, "graph inputs");
  read_ids(r, g.outputs, "graph outputs");
  return finish(r, label, "graph");
}

Status parse_names(std::span<const std::byte> bytes, const std::string& label, Graph& g) {
  ByteReader r(bytes);
  for (auto* m : {&g.names.values, &g.names.nodes}) {
    const bool values = m == &g.names.values;
    const auto limit = static_cast<int64_t>(values ? g.values.size() : g.nodes.size());
    const uint32_t n = r.count(8, values ? "value names" : "node names");
    for (uint32_t i = 0; i < n && r.ok(); ++i) {
      const int32_t id = r.i32();
      std::string name = r.str("name");
      if (!r.ok()) break;
      if (id < 0 || id >= limit)
        return section_error(label, "names", values ? "value" : "node", " id ", id, " out of range");
      if (!m->emplace(id, std::move(name)).second)
        return section_error(label, "names", values ? "value" : "node", " id ", id, " named twice");
    }
  }
  return finish(r, label, "names");
}

struct ParamEntry {
  int32_t value = -1;
  DType dtype = DType::undefined;
  uint32_t codec = 0;
  Shape shape;
  uint64_t offset = 0, stored = 0, raw = 0;
  uint32_t stored_crc = 0, raw_crc = 0;
};

struct ParamsTable {
  std::vector<std::string> codecs;
  std::vector<ParamEntry> entries;
};

constexpr std::size_t kMinParamEntry = 48;

Expected<ParamsTable> parse_params(std::span<const std::byte> bytes, const std::string& label) {
  ParamsTable t;
  ByteReader r(bytes);
  t.codecs.resize(r.count(4, "codec names"));
  for (std::size_t i = 0; i < t.codecs.size() && r.ok(); ++i) {
    t.codecs[i] = r.str("codec name");
    if (r.ok() && !codec_name_valid(t.codecs[i])) r.fail("codec name " + std::to_string(i) + " is malformed");
  }
  t.entries.resize(r.count(kMinParamEntry, "params"));
  for (std::size_t p = 0; p < t.entries.size() && r.ok(); ++p) {
    ParamEntry& e = t.entries[p];
    e.value = r.i32();
    e.dtype = read_dtype(r, false);
    e.codec = r.u32();
    if (r.ok() && e.codec >= t.codecs.size())
      r.fail("codec index " + std::to_string(e.codec) + " is not in the codec table");
    read_shape(r, e.shape);
    e.offset = r.u64();
    e.stored = r.u64();
    e.raw = r.u64();
    e.stored_crc = r.u32();
    e.raw_crc = r.u32();
    if (!r.ok()) return section_error(label, "params", "param ", p, ": ", r.error());
  }
  Status s = finish(r, label, "params");
  if (!s) return s.error();
  return t;
}

// Cross-checks the params table against the values and the blob area before any blob is touched:
// after this, every blob range is inside the file and every raw size is bounded.
Status check_params(const ParamsTable& t, const Graph& g, std::span<const std::byte> blobs,
                    const std::string& label, bool need_codecs) {
  const auto nv = static_cast<int64_t>(g.values.size());
  const auto np = static_cast<int64_t>(t.entries.size());
  for (int64_t id = 0; id < nv; ++id) {
    const Value& v = g.values[id];
    if (v.kind == ValueKind::param && (v.param < 0 || v.param >= np || t.entries[v.param].value != id))
      return section_error(label, "params", "value ", id,
                           " is a param value but no param entry refers to it");
  }
  uint64_t end = 0;
  for (int64_t p = 0; p < np; ++p) {
    const ParamEntry& e = t.entries[p];
    auto fail = [&](auto&&... args) { return section_error(label, "params", "param ", p, ": ", args...); };
    if (e.value < 0 || e.value >= nv) return fail("value id ", e.value, " out of range");
    const Value& v = g.values[e.value];
    if (v.kind != ValueKind::param || v.param != p)
      return fail("value ", e.value, " does not refer back to it");
    if (v.dtype != e.dtype || v.shape != e.shape) return fail("dtype/shape disagree with value ", e.value);
    const int64_t checked = checked_bytes(e.shape, dtype_size(e.dtype));
    if (checked < 0) return fail("shape ", shape_str(e.shape), " has no finite byte size");
    const auto bytes = static_cast<uint64_t>(checked);
    if (e.raw != bytes)
      return fail("raw size ", e.raw, " but ", dtype_name(e.dtype), "[", shape_str(e.shape), "] needs ",
                  bytes);
    const std::string& codec_name = t.codecs[e.codec];
    if (codec_name == "none") {
      if (e.stored != e.raw) return fail("stored ", e.stored, " bytes uncompressed, raw size is ", e.raw);
      if (e.stored_crc != e.raw_crc) return fail("checksums of an uncompressed blob disagree");
    } else if (need_codecs) {
      auto codec = CodecRegistry::global().find(codec_name);
      if (!codec)
        return fail("stored with codec '", codec_name, "', which is not registered in this process");
      uint64_t bound = 0;
      if (!__builtin_mul_overflow(e.stored, codec->max_expansion(), &bound) && e.raw > bound)
        return fail("raw size ", e.raw, " is more than codec '", codec_name, "' can expand ", e.stored,
                    " stored bytes to");
    }
    if (e.offset % kBlobAlignment != 0) return fail("blob offset ", e.offset, " is not 64-byte aligned");
    if (e.offset < end) return fail("blob offset ", e.offset, " overlaps the previous blob");
    if (e.offset > blobs.size() || e.stored > blobs.size() - e.offset)
      return fail("blob [", e.offset, ", +", e.stored, ") lies outside the ", blobs.size(),
                  "-byte blob area");
    if (!all_zero(blobs.subspan(end, e.offset - end)))
      return section_error(label, "blobs", "padding before param ", p, " is not zero; the file is corrupt");
    end = e.offset + e.stored;
  }
  if (!all_zero(blobs.subspan(end)))
    return section_error(label, "blobs", "padding after the last param is not zero; the file is corrupt");
  return {};
}

// Uncompressed params at least this large are used in place from the mapping; smaller ones are
// copied, so that a compressed artifact's mapping (kept alive by any param pointing into it)
// can be released once its params are decoded.
constexpr std::size_t kInPlaceMinBytes = 64 * 1024;

Status load_params(const ParamsTable& t, const SharedBytes& file, std::span<const std::byte> blobs,
                   const std::string& label, Graph& g) {
  g.params.resize(t.entries.size());
  std::vector<std::size_t> compressed;
  for (std::size_t p = 0; p < t.entries.size(); ++p) {
    const ParamEntry& e = t.entries[p];
    auto blob = blobs.subspan(e.offset, e.stored);
    const uint32_t crc = crc32_of(blob);
    if (crc != e.stored_crc)
      return section_error(label, "blobs", "param ", p, " (value ", e.value, "): checksum mismatch (stored ",
                           hex32(e.stored_crc), ", computed ", hex32(crc), "); the file is corrupt");
    g.params[p].value = e.value;
    if (t.codecs[e.codec] != "none") {
      compressed.push_back(p);
      continue;
    }
    const bool aligned = reinterpret_cast<std::uintptr_t>(blob.data()) % kAlignment == 0;
    g.params[p].data = aligned && file.owner() && blob.size() >= kInPlaceMinBytes
                           ? SharedBytes(blob, file.owner())
                           : SharedBytes::copy_of(blob);
  }

  // Decoding dominates load time: spread the compressed params over the cores.
  std::vector<Status> results(compressed.size());
  std::atomic<std::size_t> next{0};
  auto decode_some = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < compressed.size();) {
      const std::size_t p = compressed[i];
      const ParamEntry& e = t.entries[p];
      auto fail = [&](auto&&... args) {
        return section_error(label, "blobs", "param ", p, " (value ", e.value, "): ", args...);
      };
      const std::string& codec_name = t.codecs[e.codec];
      auto codec = CodecRegistry::global().find(codec_name);  // presence checked in check_params
      AlignedBuffer buf;
      try {
        // Big blocks as mapped pages (zeroed by the system, populated in one call): cheaper
        // than a fault per page, and a fast Factory recycles them into packed weights once
        // packed (PageRecycling).
        buf = AlignedBuffer(e.raw, /*zero=*/e.raw >= kPopulateBytes);
      } catch (const std::bad_alloc&) {
        results[i] = fail("cannot allocate ", e.raw, " bytes to decode it");
        continue;
      }
      Status s = codec->decompress(blobs.subspan(e.offset, e.stored), buf.span());
      if (!s) {
        results[i] = fail("codec '", codec_name, "': ", s.message());
        continue;
      }
      if (crc32_of(buf.span()) != e.raw_crc) {
        results[i] =
            fail("decoded bytes fail their checksum (codec '", codec_name, "' disagrees with the writer's)");
        continue;
      }
      g.params[p].data = SharedBytes::from(std::move(buf));
    }
  };
  // On the process's compute slots (R12: WEAVE_NUM_THREADS bounds every thread weave runs),
  // each lane taking the next param left.
  const Parallel& par = ThreadBudget::global().parallel(0);
  const int64_t lanes = compressed.size() < 4 ? 1 : std::min<int64_t>(par.threads(), 8);
  par.for_range(lanes, 1, [&](int64_t, int64_t) { decode_some(); });
  for (Status& s : results)
    if (!s) return s;
  return {};
}

struct Parsed {
  Layout layout;
  Graph graph;
  ParamsTable params;
};

Expected<Parsed> parse_tables(std::span<const std::byte> file, const std::string& label, bool need_codecs) {
  Parsed out;
  auto layout = parse_layout(file, label);
  if (!layout) return layout.error();
  out.layout = std::move(*layout);
  WEAVE_TRY(parse_metadata(out.layout.metadata, label, out.graph));
  WEAVE_TRY(parse_graph(out.layout.graph, label, out.graph));
  auto params = parse_params(out.layout.params, label);
  if (!params) return params.error();
  out.params = std::move(*params);
  if (out.layout.has_names) WEAVE_TRY(parse_names(out.layout.names, label, out.graph));
  WEAVE_TRY(check_params(out.params, out.graph, out.layout.blobs, label, need_codecs));
  return out;
}

}  // namespace

Expected<Graph> read_artifact_bytes(SharedBytes bytes, std::string label) {
  auto parsed = parse_tables(bytes.span(), label, true);
  if (!parsed) return parsed.error();
  Graph& g = parsed->graph;
  WEAVE_TRY(load_params(parsed->params, bytes, parsed->layout.blobs, label, g));
  Status valid = g.validate();
  if (!valid) return valid.error().context(label);
  return std::move(g);
}

Expected<Graph> read_artifact(const std::string& path, const ReadOptions& opt) {
  if (opt.use_mmap) {
    auto file = MappedFile::open(path);
    if (!file) return file.error();
    return read_artifact_bytes(MappedFile::share(std::move(*file)), path);
  }
  auto bytes = read_whole_file(path);
  if (!bytes) return bytes.error();
  return read_artifact_bytes(std::move(*bytes), path);
}

Expected<ArtifactInfo> inspect_artifact(const std::string& path) {
  auto file = MappedFile::open(path);
  if (!file) return file.error();
  return inspect_artifact_bytes((*file)->bytes(), path);
}

Expected<ArtifactInfo> inspect_artifact_bytes(std::span<const std::byte> bytes, const std::string& label) {
  auto parsed = parse_tables(bytes, label, false);
  if (!parsed) return parsed.error();
  ArtifactInfo info;
  info.version = parsed->layout.version;
  info.file_size = parsed->layout.file_size;
  info.sections = parsed->layout.table;
  info.has_names = parsed->layout.has_names;
  const Graph& g = parsed->graph;
  info.value_count = g.values.size();
  info.node_count = g.nodes.size();
  info.param_count = parsed->params.entries.size();
  info.inputs = g.input_infos;
  info.outputs = g.output_infos;
  info.metadata = g.metadata;
  for (const auto& e : parsed->params.entries) {
    CodecUsage& u = info.codecs[parsed->params.codecs[e.codec]];
    ++u.params;
    u.stored_bytes += e.stored;
    u.raw_bytes += e.raw;
  }
  return info;
}

}  // namespace weave
