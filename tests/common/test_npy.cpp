#define BOOST_TEST_MODULE npy
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/common/npy.h"

using namespace weave;

namespace {

std::string fixture(const std::string& name) {
  const char* root = std::getenv("WEAVE_SOURCE_ROOT");
  BOOST_REQUIRE_MESSAGE(root, "WEAVE_SOURCE_ROOT is not set (run through meson test)");
  return std::string(root) + "/tests/common/data/" + name;
}

std::vector<std::byte> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  std::memcpy(out.data(), c.data(), c.size());
  return out;
}

std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("weave_test_npy_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// A .npy image with an arbitrary header text and `data_bytes` zero bytes of payload.
std::vector<std::byte> make_npy(const std::string& header, std::size_t data_bytes, int major = 1) {
  std::vector<std::byte> out;
  const unsigned char magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  for (unsigned char c : magic) out.push_back(std::byte{c});
  out.push_back(static_cast<std::byte>(major));
  out.push_back(std::byte{0});
  const int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i)
    out.push_back(static_cast<std::byte>((header.size() >> (8 * i)) & 0xff));
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  out.resize(out.size() + data_bytes);
  return out;
}

std::string dict(const std::string& descr, const std::string& shape, const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

// Parses and requires failure; returns the message.
std::string parse_error(const std::vector<std::byte>& bytes) {
  auto r = parse_npy(bytes, "case.npy");
  BOOST_REQUIRE(!r.ok());
  return r.message();
}

std::string why(const Expected<Tensor>& r) {
  return r.ok() ? std::string() : r.message();
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

void check_round_trip(const Tensor& t) {
  const Dims dims = t.dims();
  const auto path = (temp_dir() / (std::string(dtype_name(t.dtype())) + ".npy")).string();
  BOOST_REQUIRE(write_npy(path, t.view()).ok());
  auto back = read_npy(path);
  BOOST_REQUIRE_MESSAGE(back.ok(), why(back));
  BOOST_TEST((back->dtype() == t.dtype()));
  BOOST_TEST((back->dims() == dims));
  BOOST_REQUIRE_EQUAL(back->bytes(), t.bytes());
  // memcmp wants non-null pointers even for 0 bytes; an empty tensor may have none.
  if (t.bytes() > 0) BOOST_TEST(std::memcmp(back->data(), t.data(), t.bytes()) == 0);
  // The data must start 64-byte aligned, like NumPy's own files.
  const auto bytes = encode_npy(t.view());
  BOOST_TEST((bytes.size() - t.bytes()) % 64 == 0u);
  std::filesystem::remove(path);
}

template <class T>
void check_round_trip(std::vector<T> values, Dims dims) {
  check_round_trip(Tensor::from<T>(dims, std::span<const T>(values)));
}

}  // namespace

BOOST_AUTO_TEST_CASE(round_trip_every_dtype) {
  check_round_trip<float>({1.5f, -0.0f, 3e38f, -1e-38f, 0.25f, 7.f}, Dims{2, 3});
  check_round_trip<double>({1e300, -2.5}, Dims{2});
  check_round_trip<int64_t>({INT64_MIN, INT64_MAX, 0, -1}, Dims{2, 1, 2});
  check_round_trip<int32_t>({INT32_MIN, 5, INT32_MAX}, Dims{3});
  check_round_trip<int16_t>({-32768, 32767}, Dims{1, 2});
  check_round_trip<int8_t>({-128, 127, 0}, Dims{3, 1});
  check_round_trip<uint8_t>({0, 255, 128}, Dims{3});
  check_round_trip<uint16_t>({0, 65535}, Dims{2});
  check_round_trip<uint32_t>({0u, 4294967295u}, Dims{2});
  check_round_trip<uint64_t>({0u, UINT64_MAX}, Dims{2});
  const bool flags[3] = {true, false, true};
  check_round_trip(Tensor::from<bool>(Dims{3}, flags));
  // float16 has no C++ type here: round-trip the raw bit patterns.
  Tensor h(DType::float16, Dims{2, 2});
  const uint16_t bits[4] = {0x3C00, 0xC100, 0x7BFF, 0x0001};
  std::memcpy(h.data(), bits, sizeof bits);
  auto back = parse_npy(encode_npy(h.view()), "f16");
  BOOST_REQUIRE(back.ok());
  BOOST_TEST((back->dtype() == DType::float16));
  BOOST_TEST(std::memcmp(back->data(), bits, sizeof bits) == 0);
}

BOOST_AUTO_TEST_CASE(round_trip_scalar_empty_and_max_rank) {
  check_round_trip<float>({42.f}, Dims{});
  check_round_trip<float>({}, Dims{0, 3});
  check_round_trip<int8_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Dims{1, 2, 1, 3, 1, 2, 1, 1});
  auto scalar = parse_npy(encode_npy(Tensor::from<int64_t>(Dims{}, std::vector<int64_t>{9}).view()), "s");
  BOOST_REQUIRE(scalar.ok());
  BOOST_TEST(scalar->dims().rank() == 0);
  BOOST_TEST(scalar->numel() == 1);
  BOOST_TEST(*scalar->as<int64_t>() == 9);
}

BOOST_AUTO_TEST_CASE(empty_array_whose_other_dims_overflow_is_empty) {
  // Found by fuzz_npy: the product of the non-zero dims overflows int64, but a zero dim makes
  // the array empty and valid.
  const std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4012109, 1011011, 101, 109, 1111, 0, 2592), }";
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header;
  std::vector<std::byte> bytes(file.size());
  std::memcpy(bytes.data(), file.data(), file.size());
  auto t = parse_npy(bytes, "overflowing.npy");
  if (!t) BOOST_FAIL(t.message());
  BOOST_TEST(t->numel() == 0);
  BOOST_TEST(t->dims().rank() == 7);
}

BOOST_AUTO_TEST_CASE(encoding_matches_numpy_byte_for_byte) {
  const std::vector<float> v{-1.f, -0.5f, 0.f, 0.5f, 1.f, 1.5f};
  const auto mine = encode_npy(Tensor::from<float>(Dims{2, 3}, v).view());
  BOOST_TEST(mine == file_bytes(fixture("f32_2x3.npy")));
  const std::vector<uint8_t> u{0, 1, 127, 128, 255};
  BOOST_TEST(encode_npy(Tensor::from<uint8_t>(Dims{5}, u).view()) == file_bytes(fixture("u8_5.npy")));
  const std::vector<int64_t> s{-42};
  BOOST_TEST(encode_npy(Tensor::from<int64_t>(Dims{}, s).view()) == file_bytes(fixture("i64_scalar.npy")));
}

BOOST_AUTO_TEST_CASE(reads_numpy_fixtures) {
  auto f = read_npy(fixture("f32_2x3.npy"));
  BOOST_REQUIRE_MESSAGE(f.ok(), why(f));
  BOOST_TEST((f->dtype() == DType::float32));
  BOOST_TEST((f->dims() == (Dims{2, 3})));
  const std::array<float, 6> fv{-1.f, -0.5f, 0.f, 0.5f, 1.f, 1.5f};
  for (int i = 0; i < 6; ++i) BOOST_TEST(f->as<float>()[i] == fv[i]);

  auto s = read_npy(fixture("i64_scalar.npy"));
  BOOST_REQUIRE(s.ok());
  BOOST_TEST((s->dtype() == DType::int64));
  BOOST_TEST(s->dims().rank() == 0);
  BOOST_TEST(s->as<int64_t>()[0] == -42);

  auto u = read_npy(fixture("u8_5.npy"));
  BOOST_REQUIRE(u.ok());
  BOOST_TEST((u->dtype() == DType::uint8));
  BOOST_TEST((u->dims() == (Dims{5})));
  BOOST_TEST(u->as<uint8_t>()[3] == 128);
  BOOST_TEST(u->as<uint8_t>()[4] == 255);

  auto b = read_npy(fixture("b1_4.npy"));
  BOOST_REQUIRE(b.ok());
  BOOST_TEST((b->dtype() == DType::boolean));
  const std::array<uint8_t, 4> bv{1, 0, 0, 1};
  BOOST_TEST(std::memcmp(b->data(), bv.data(), 4) == 0);

  auto h = read_npy(fixture("f16_3.npy"));
  BOOST_REQUIRE(h.ok());
  BOOST_TEST((h->dtype() == DType::float16));
  BOOST_TEST(h->as<uint16_t>()[0] == 0x3C00);  // 1.0
  BOOST_TEST(h->as<uint16_t>()[1] == 0xC100);  // -2.5
  BOOST_TEST(h->as<uint16_t>()[2] == 0x7BFF);  // 65504

  auto i = read_npy(fixture("i32_2x2x1.npy"));
  BOOST_REQUIRE(i.ok());
  BOOST_TEST((i->dims() == (Dims{2, 2, 1})));
  BOOST_TEST(i->as<int32_t>()[1] == -8);
  BOOST_TEST(i->as<int32_t>()[3] == INT32_MIN);

  auto v2 = read_npy(fixture("f64_0x3_v2.npy"));
  BOOST_REQUIRE_MESSAGE(v2.ok(), why(v2));
  BOOST_TEST((v2->dtype() == DType::float64));
  BOOST_TEST((v2->dims() == (Dims{0, 3})));
  BOOST_TEST(v2->numel() == 0);

  auto v3 = read_npy(fixture("i16_3_v3.npy"));
  BOOST_REQUIRE_MESSAGE(v3.ok(), why(v3));
  BOOST_TEST((v3->dtype() == DType::int16));
  BOOST_TEST(v3->as<int16_t>()[0] == -1);
  BOOST_TEST(v3->as<int16_t>()[2] == 300);
}

BOOST_AUTO_TEST_CASE(rejects_numpy_files_with_unsupported_layouts) {
  const std::string be = fixture("be_f4.npy");
  auto r = read_npy(be);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.message(), be));
  BOOST_TEST(contains(r.message(), "big-endian"));
  BOOST_TEST(contains(r.message(), ">f4"));

  const std::string fo = fixture("fortran_f4.npy");
  auto f = read_npy(fo);
  BOOST_REQUIRE(!f.ok());
  BOOST_TEST(contains(f.message(), fo));
  BOOST_TEST(contains(f.message(), "fortran_order"));
}

BOOST_AUTO_TEST_CASE(rejects_truncated_files) {
  const auto good = file_bytes(fixture("f32_2x3.npy"));
  BOOST_REQUIRE(good.size() == 128u + 24u);
  for (std::size_t n : {0u, 5u, 9u, 10u, 60u, 127u}) {
    std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    const auto msg = parse_error(cut);
    BOOST_TEST(contains(msg, "case.npy: "), msg);
  }
  BOOST_TEST(contains(parse_error({good.begin(), good.begin() + 60}), "truncated header"));
  // Cut inside the payload: the header is fine, the size check names the numbers.
  const auto msg = parse_error({good.begin(), good.end() - 1});
  BOOST_TEST(msg == "case.npy: data is 23 bytes but shape 2x3 of float32 needs 24");
}

BOOST_AUTO_TEST_CASE(rejects_bad_magic_and_versions) {
  auto bytes = make_npy(dict("<f4", "(1,)"), 4);
  bytes[1] = std::byte{'n'};
  BOOST_TEST(contains(parse_error(bytes), "bad magic"));
  auto v4 = make_npy(dict("<f4", "(1,)"), 4);
  v4[6] = std::byte{4};
  BOOST_TEST(contains(parse_error(v4), "version 4.0"));
  auto v11 = make_npy(dict("<f4", "(1,)"), 4);
  v11[7] = std::byte{1};
  BOOST_TEST(contains(parse_error(v11), "version 1.1"));
}

BOOST_AUTO_TEST_CASE(rejects_oversized_or_overlong_header_lengths) {
  // Version 2.0 header length claims 16 MiB: refused before looking further.
  auto big = make_npy(dict("<f4", "(1,)"), 4, 2);
  big[8] = std::byte{0};
  big[9] = std::byte{0};
  big[10] = std::byte{0};
  big[11] = std::byte{1};
  BOOST_TEST(contains(parse_error(big), "exceeds the limit"));
  // Header length just past the end of the file.
  auto over = make_npy(dict("<f4", "(1,)"), 0);
  over[8] = static_cast<std::byte>(static_cast<unsigned>(over[8]) + 1);
  BOOST_TEST(contains(parse_error(over), "truncated header"));
}

BOOST_AUTO_TEST_CASE(rejects_bad_header_dicts) {
  const std::vector<std::string> bad{
      "",
      "[]",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",    // no closing brace
      "{'descr': '<f4', 'fortran_order': False}",                  // no shape
      "{'fortran_order': False, 'shape': (1,)}",                   // no descr
      "{'descr': '<f4', 'shape': (1,)}",                           // no fortran_order
      "{'descr': '<f4', 'fortran_order': False, 'shape': [1]}",    // list, not tuple
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",  // negative dim
      "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",       // not a bool
      "{'descr': <f4, 'fortran_order': False, 'shape': (1,)}",     // unquoted
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",  // unknown key
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",  // missing comma
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}",  // rank 9
      "{'descr': '<f4\\n', 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f4",
  };
  for (const auto& h : bad) {
    const auto msg = parse_error(make_npy(h, 4));
    BOOST_TEST(contains(msg, "case.npy: malformed header"), h << " -> " << msg);
  }
  BOOST_TEST(contains(parse_error(make_npy(dict("<f4", "(1,1,1,1,1,1,1,1,1)"), 4)), "rank above"));
}

BOOST_AUTO_TEST_CASE(rejects_unsupported_descrs) {
  for (const std::string d : {"<c8", "<U4", "|O", "|f4", "=f4", "f4", "<b2", ""}) {
    const auto msg = parse_error(make_npy(dict(d, "(1,)"), 4));
    BOOST_TEST(contains(msg, "unsupported dtype descr '" + d + "'"), d << " -> " << msg);
  }
  BOOST_TEST(contains(parse_error(make_npy(dict(">i8", "(1,)"), 8)), "big-endian"));
  BOOST_TEST(contains(parse_error(make_npy(dict("<f4", "(1,)", "True"), 4)), "fortran_order True"));
}

BOOST_AUTO_TEST_CASE(single_byte_descrs_accept_any_byte_order_mark) {
  for (const std::string d : {"|u1", "<u1", ">i1", "|b1"}) {
    auto r = parse_npy(make_npy(dict(d, "(3,)"), 3), "x");
    BOOST_TEST(r.ok(), d);
  }
}

BOOST_AUTO_TEST_CASE(rejects_size_mismatches_without_allocating) {
  BOOST_TEST(parse_error(make_npy(dict("<f4", "(2, 3)"), 20)) ==
             "case.npy: data is 20 bytes but shape 2x3 of float32 needs 24");
  BOOST_TEST(parse_error(make_npy(dict("<f4", "(2, 3)"), 28)) ==
             "case.npy: data is 28 bytes but shape 2x3 of float32 needs 24");
  BOOST_TEST(parse_error(make_npy(dict("<f8", "()"), 0)) ==
             "case.npy: data is 0 bytes but shape scalar of float64 needs 8");
  // A terabyte-sized shape in a tiny file is refused, not allocated.
  BOOST_TEST(parse_error(make_npy(dict("<f4", "(1000000, 1000000)"), 16)) ==
             "case.npy: data is 16 bytes but shape 1000000x1000000 of float32 needs 4000000000000");
  // Element count overflowing int64, and count * itemsize overflowing size_t.
  BOOST_TEST(
      contains(parse_error(make_npy(dict("<f4", "(4611686018427387904, 4)"), 16)), "too many elements"));
  BOOST_TEST(contains(parse_error(make_npy(dict("<f8", "(4611686018427387904,)"), 16)), "needs more than"));
  // A zero dim makes any other dim harmless.
  auto empty = parse_npy(make_npy(dict("<f4", "(0, 9223372036854775807)"), 0), "x");
  BOOST_REQUIRE(empty.ok());
  BOOST_TEST(empty->numel() == 0);
}

BOOST_AUTO_TEST_CASE(accepts_numpy_header_variants) {
  // Double quotes, no trailing comma, Python 2 long suffixes, extra spaces.
  auto r = parse_npy(make_npy("{\"descr\": \"<i2\", \"shape\": (2L, 1L) , \"fortran_order\": False}   \n", 4),
                     "x");
  BOOST_REQUIRE_MESSAGE(r.ok(), why(r));
  BOOST_TEST((r->dims() == (Dims{2, 1})));
}

BOOST_AUTO_TEST_CASE(booleans_are_normalised) {
  auto bytes = make_npy(dict("|b1", "(3,)"), 3);
  bytes[bytes.size() - 3] = std::byte{2};
  bytes[bytes.size() - 1] = std::byte{0xff};
  auto r = parse_npy(bytes, "b");
  BOOST_REQUIRE(r.ok());
  const auto* p = static_cast<const uint8_t*>(r->data());
  BOOST_TEST(p[0] == 1);
  BOOST_TEST(p[1] == 0);
  BOOST_TEST(p[2] == 1);
}

BOOST_AUTO_TEST_CASE(file_errors_name_the_path) {
  const auto missing = (temp_dir() / "does_not_exist.npy").string();
  auto r = read_npy(missing);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.message(), missing));
  auto d = read_npy(temp_dir().string());
  BOOST_REQUIRE(!d.ok());
  BOOST_TEST(contains(d.message(), "not a readable regular file"));

  const std::vector<float> v{1.f};
  const auto bad_path = (temp_dir() / "no_such_dir" / "x.npy").string();
  Status s = write_npy(bad_path, Tensor::from<float>(Dims{1}, v).view());
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(contains(s.message(), bad_path));

  Status u = write_npy((temp_dir() / "u.npy").string(), ConstTensorView{});
  BOOST_REQUIRE(!u.ok());
  BOOST_TEST(contains(u.message(), "cannot write dtype undefined"));
  BOOST_TEST(encode_npy(ConstTensorView{}).empty());
  ConstTensorView no_data{nullptr, DType::float32, Dims{2}};
  BOOST_TEST(encode_npy(no_data).empty());
  std::filesystem::remove_all(temp_dir());
}

// The model references are written by scripts/make_references.js with its own encoder; this
// checks that the two implementations agree on real files.
BOOST_AUTO_TEST_CASE(reads_reference_files_written_by_the_node_script) {
  const char* root = std::getenv("WEAVE_SOURCE_ROOT");
  BOOST_REQUIRE(root);
  const std::string dir = std::string(root) + "/tests/models/data/";
  auto tokens = read_npy(dir + "lstm_lm/input_tokens.npy");
  BOOST_REQUIRE_MESSAGE(tokens.ok(), why(tokens));
  BOOST_TEST((tokens->dtype() == DType::int64));
  BOOST_TEST((tokens->dims() == (Dims{1, 8})));
  for (int i = 0; i < 8; ++i) {
    BOOST_TEST(tokens->as<int64_t>()[i] >= 0);
    BOOST_TEST(tokens->as<int64_t>()[i] < 256);
  }
  auto det = read_npy(dir + "ppocr_det/output_sigmoid_0_tmp_0.npy");
  BOOST_REQUIRE_MESSAGE(det.ok(), why(det));
  BOOST_TEST((det->dims() == (Dims{1, 1, 160, 192})));
  float lo = 1, hi = 0;
  for (int64_t i = 0; i < det->numel(); ++i) {
    lo = std::min(lo, det->as<float>()[i]);
    hi = std::max(hi, det->as<float>()[i]);
  }
  BOOST_TEST(lo >= 0.f);
  BOOST_TEST(hi <= 1.f);
  BOOST_TEST(hi > 0.5f);  // the synthetic text lines are detected
}
