#include "core/common/npy.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>

namespace weave {

// The payload is copied as-is; a big-endian host would need byte swapping here.
static_assert(std::endian::native == std::endian::little, "npy.cpp assumes a little-endian host");

namespace {

constexpr std::array<unsigned char, 6> kMagic{0x93, 'N', 'U', 'M', 'P', 'Y'};

struct DescrEntry {
  std::string_view descr;  // without the byte-order character
  DType dtype;
  bool single_byte;  // byte order is irrelevant, NumPy writes '|'
};

constexpr std::array<DescrEntry, 12> kDescrs{{
    {"f4", DType::float32, false},
    {"f8", DType::float64, false},
    {"f2", DType::float16, false},
    {"i8", DType::int64, false},
    {"i4", DType::int32, false},
    {"i2", DType::int16, false},
    {"i1", DType::int8, true},
    {"u1", DType::uint8, true},
    {"u2", DType::uint16, false},
    {"u4", DType::uint32, false},
    {"u8", DType::uint64, false},
    {"b1", DType::boolean, true},
}};

Expected<DType> dtype_from_descr(const std::string& descr) {
  if (descr.size() < 2) return make_error("unsupported dtype descr '", descr, "'");
  const char order = descr[0];
  const std::string_view code = std::string_view(descr).substr(1);
  for (const auto& e : kDescrs) {
    if (e.descr != code) continue;
    if (e.single_byte) {
      if (order == '|' || order == '<' || order == '>' || order == '=') return e.dtype;
    } else {
      if (order == '<') return e.dtype;
      if (order == '>')
        return make_error("big-endian dtype '", descr,
                          "' is not supported; save the array as little-endian ('<", code,
                          "'), e.g. with arr.astype('<", code, "')");
    }
    break;
  }
  return make_error("unsupported dtype descr '", descr,
                    "' (supported: <f4 <f8 <f2 <i8 <i4 <i2 |i1 |u1 <u2 <u4 <u8 |b1)");
}

std::string_view descr_of(DType t) {
  switch (t) {
    case DType::float32:
      return "<f4";
    case DType::float64:
      return "<f8";
    case DType::float16:
      return "<f2";
    case DType::int64:
      return "<i8";
    case DType::int32:
      return "<i4";
    case DType::int16:
      return "<i2";
    case DType::int8:
      return "|i1";
    case DType::uint8:
      return "|u1";
    case DType::uint16:
      return "<u2";
    case DType::uint32:
      return "<u4";
    case DType::uint64:
      return "<u8";
    case DType::boolean:
      return "|b1";
    default:
      return {};
  }
}

// The header is a Python dict literal as written by numpy.lib.format, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// This recogniser accepts exactly the literal forms NumPy produces (either quote style, optional
// trailing commas, Python 2 'L' suffixes on ints) and nothing executable.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  struct Result {
    std::string descr;
    bool fortran_order = false;
    Shape shape;
  };

  Expected<Result> parse() {
    Result r;
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    if (!eat('{')) return fail("expected '{'");
    skip_ws();
    while (!eat('}')) {
      std::string key;
      if (!parse_string(key)) return fail("expected a quoted key");
      skip_ws();
      if (!eat(':')) return fail("expected ':' after key '" + key + "'");
      skip_ws();
      if (key == "descr") {
        if (have_descr) return fail("duplicate key 'descr'");
        if (!parse_string(r.descr)) return fail("'descr' must be a quoted dtype string");
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_fortran) return fail("duplicate key 'fortran_order'");
        if (eat_word("True")) {
          r.fortran_order = true;
        } else if (eat_word("False")) {
          r.fortran_order = false;
        } else {
          return fail("'fortran_order' must be True or False");
        }
        have_fortran = true;
      } else if (key == "shape") {
        if (have_shape) return fail("duplicate key 'shape'");
        WEAVE_TRY(parse_shape_tuple(r.shape));
        have_shape = true;
      } else {
        return fail("unexpected key '" + key + "'");
      }
      skip_ws();
      if (eat(',')) {
        skip_ws();
      } else if (pos_ < s_.size() && s_[pos_] != '}') {
        return fail("expected ',' or '}'");
      }
    }
    skip_ws();
    if (pos_ != s_.size()) return fail("unexpected text after the closing '}'");
    if (!have_descr) return fail("missing key 'descr'");
    if (!have_fortran) return fail("missing key 'fortran_order'");
    if (!have_shape) return fail("missing key 'shape'");
    return r;
  }

 private:
  Error fail(const std::string& what) const {
    return make_error("malformed header at offset ", pos_, ": ", what);
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eat_word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  // A '...' or "..." string without escapes (NumPy never writes escapes in these fields).
  bool parse_string(std::string& out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return false;
    const char quote = s_[pos_];
    const std::size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return false;
    const std::string_view body = s_.substr(pos_ + 1, end - pos_ - 1);
    if (body.find('\\') != std::string_view::npos || body.find('\n') != std::string_view::npos) return false;
    out.assign(body);
    pos_ = end + 1;
    return true;
  }
  Status parse_shape_tuple(Shape& shape) {
    if (!eat('(')) return fail("'shape' must be a tuple");
    skip_ws();
    while (!eat(')')) {
      if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9')
        return fail("'shape' must hold non-negative integers");
      int64_t v = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        const int digit = s_[pos_] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) return fail("shape dimension too large");
        v = v * 10 + digit;
        ++pos_;
      }
      eat('L');
      if (shape.size() >= static_cast<std::size_t>(kMaxRank))
        return fail("rank above the supported maximum of " + std::to_string(kMaxRank));
      shape.push_back(v);
      skip_ws();
      if (eat(',')) {
        skip_ws();
      } else if (pos_ < s_.size() && s_[pos_] != ')') {
        return fail("expected ',' or ')' in 'shape'");
      }
    }
    return {};
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

uint32_t read_le(const std::byte* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint32_t>(p[i]);
  return v;
}

// numel of a validated (non-negative) shape, or nullopt when it exceeds int64.
std::optional<int64_t> checked_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d == 0) return 0;
  for (int64_t d : shape) {
    if (n > std::numeric_limits<int64_t>::max() / d) return std::nullopt;
    n *= d;
  }
  return n;
}

Expected<Tensor> parse_npy_impl(std::span<const std::byte> bytes) {
  if (bytes.size() < 10) return make_error("not a .npy file: only ", bytes.size(), " bytes");
  for (std::size_t i = 0; i < kMagic.size(); ++i)
    if (static_cast<unsigned char>(bytes[i]) != kMagic[i]) return Error("not a .npy file: bad magic string");
  const int major = static_cast<int>(bytes[6]);
  const int minor = static_cast<int>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return make_error("unsupported .npy format version ", major, ".", minor, " (supported: 1.0, 2.0, 3.0)");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  const std::size_t header_start = 8 + len_bytes;
  if (bytes.size() < header_start) return Error("truncated .npy preamble");
  const std::size_t header_len = read_le(bytes.data() + 8, static_cast<int>(len_bytes));
  if (header_len > kNpyMaxHeaderBytes)
    return make_error("header of ", header_len, " bytes exceeds the limit of ", kNpyMaxHeaderBytes);
  if (header_len > bytes.size() - header_start)
    return make_error("truncated header: needs ", header_len, " bytes, file has ",
                      bytes.size() - header_start);
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + header_start), header_len);

  auto parsed = HeaderParser(header).parse();
  if (!parsed) return parsed.error();
  if (parsed->fortran_order)
    return Error(
        "fortran_order True (column-major) arrays are not supported; save with np.ascontiguousarray");
  auto dtype = dtype_from_descr(parsed->descr);
  if (!dtype) return dtype.error();

  const std::size_t itemsize = dtype_size(*dtype);
  const std::size_t data_start = header_start + header_len;
  const std::size_t data_bytes = bytes.size() - data_start;
  const std::string shape_text = shape_str(parsed->shape);
  const auto numel = checked_numel(parsed->shape);
  if (!numel) return make_error("shape ", shape_text, " has too many elements");
  // Compare by division first so a huge shape can neither overflow nor reach an allocation.
  if (static_cast<uint64_t>(*numel) > data_bytes / itemsize || *numel * itemsize != data_bytes) {
    std::string need = static_cast<uint64_t>(*numel) <= std::numeric_limits<std::size_t>::max() / itemsize
                           ? std::to_string(static_cast<std::size_t>(*numel) * itemsize)
                           : "more than " + std::to_string(std::numeric_limits<std::size_t>::max());
    return make_error("data is ", data_bytes, " bytes but shape ", shape_text, " of ", dtype_name(*dtype),
                      " needs ", need);
  }

  Tensor t(*dtype, Dims(std::span<const int64_t>(parsed->shape)));
  if (data_bytes) std::memcpy(t.data(), bytes.data() + data_start, data_bytes);
  if (*dtype == DType::boolean) {
    auto* p = static_cast<unsigned char*>(t.data());
    for (std::size_t i = 0; i < data_bytes; ++i) p[i] = p[i] != 0 ? 1 : 0;
  }
  return t;
}

}  // namespace

Expected<Tensor> parse_npy(std::span<const std::byte> bytes, const std::string& label) {
  auto r = parse_npy_impl(bytes);
  if (!r) return r.error().context(label);
  return r;
}

Expected<Tensor> read_npy(const std::string& path) {
  // Size the buffer from the file system, not from seeking: a directory or a FIFO opened as a
  // stream can report nonsense sizes.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return make_error(path, ": not a readable regular file");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return make_error(path, ": cannot determine the file size: ", ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path, ": cannot open for reading");
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    return make_error(path, ": read error (file changed while reading?)");
  return parse_npy(bytes, path);
}

std::vector<std::byte> encode_npy(ConstTensorView t) {
  const std::string_view descr = descr_of(t.dtype);
  if (descr.empty() || t.dims.rank() > kMaxRank) return {};
  for (int64_t d : t.dims)
    if (d < 0) return {};
  if (t.numel() > 0 && t.data == nullptr) return {};

  std::string header = "{'descr': '";
  header += descr;
  header += "', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < t.dims.rank(); ++i) {
    if (i) header += ", ";
    header += std::to_string(t.dims[i]);
  }
  if (t.dims.rank() == 1) header += ',';
  header += "), }";

  // Pad with spaces and a final newline so that the payload starts 64-byte aligned. With at most
  // kMaxRank dims the header is far below the 64 KiB limit of version 1.0.
  constexpr std::size_t kPreamble = 10;
  const std::size_t total = align_up(kPreamble + header.size() + 1, 64);
  header.append(total - kPreamble - header.size() - 1, ' ');
  header += '\n';

  const std::size_t data_bytes = t.bytes();
  std::vector<std::byte> out;
  out.reserve(total + data_bytes);
  for (unsigned char c : kMagic) out.push_back(static_cast<std::byte>(c));
  out.push_back(std::byte{1});  // version 1.0
  out.push_back(std::byte{0});
  out.push_back(static_cast<std::byte>(header.size() & 0xff));
  out.push_back(static_cast<std::byte>(header.size() >> 8));
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  const auto* src = static_cast<const std::byte*>(t.data);
  if (data_bytes) out.insert(out.end(), src, src + data_bytes);
  return out;
}

Status write_npy(const std::string& path, ConstTensorView t) {
  if (descr_of(t.dtype).empty())
    return make_error(path, ": cannot write dtype ", dtype_name(t.dtype), " as .npy");
  for (int64_t d : t.dims)
    if (d < 0) return make_error(path, ": cannot write a tensor with a negative dimension");
  if (t.numel() > 0 && t.data == nullptr) return make_error(path, ": tensor has no data");
  const std::vector<std::byte> bytes = encode_npy(t);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return make_error(path, ": cannot open for writing");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return make_error(path, ": write error");
  return {};
}

}  // namespace weave
