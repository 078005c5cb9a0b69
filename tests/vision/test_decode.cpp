// core/vision decoding: top-k, softmax, label files, the decoder registry and JSON lines.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "core/vision/classification.h"
#include "core/vision/json.h"
#include "core/vision/labels.h"
#include "core/vision/topk.h"

namespace wv = weave::vision;
using V = std::vector<wv::ScoredClass>;

namespace {
constexpr double kAll = -std::numeric_limits<double>::infinity();

std::string temp_file(const std::string& name, const std::string& text) {
  const auto path =
      std::filesystem::temp_directory_path() / ("weave_vision_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}
}  // namespace

BOOST_AUTO_TEST_CASE(top_k_orders_best_first) {
  const std::vector<float> s = {0.1f, 0.7f, 0.05f, 0.15f};
  BOOST_TEST((wv::top_k(s, 2, kAll) == V{{1, 0.7f}, {3, 0.15f}}));
  BOOST_TEST((wv::top_k(s, 0, kAll) == V{{1, 0.7f}, {3, 0.15f}, {0, 0.1f}, {2, 0.05f}}));
  BOOST_TEST(wv::top_k(s, 10, kAll).size() == 4u);
  BOOST_TEST((wv::top_k(s, 5, 0.1) == V{{1, 0.7f}, {3, 0.15f}, {0, 0.1f}}));  // threshold is inclusive
  BOOST_TEST(wv::top_k(s, 5, 0.9).empty());
  BOOST_TEST(wv::top_k(std::vector<float>{}, 5, kAll).empty());
}

BOOST_AUTO_TEST_CASE(top_k_ties_go_to_lower_id_and_nan_is_skipped) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> s = {0.5f, nan, 0.9f, 0.5f, 0.9f, -1.0f};
  BOOST_TEST((wv::top_k(s, 4, kAll) == V{{2, 0.9f}, {4, 0.9f}, {0, 0.5f}, {3, 0.5f}}));
  BOOST_TEST((wv::top_k(s, 0, kAll).size() == 5u));
  const std::vector<float> all_nan = {nan, nan};
  BOOST_TEST(wv::top_k(all_nan, 2, kAll).empty());
}

BOOST_AUTO_TEST_CASE(softmax_values) {
  std::vector<float> v = {0.0f, std::log(2.0f), 1000.0f - 1000.0f};
  wv::softmax_inplace(v);
  BOOST_TEST(std::fabs(v[0] - 0.25f) < 1e-6f);
  BOOST_TEST(std::fabs(v[1] - 0.5f) < 1e-6f);
  BOOST_TEST(std::fabs(v[2] - 0.25f) < 1e-6f);
  // Large logits must not overflow.
  std::vector<float> big = {1000.0f, 1000.0f};
  wv::softmax_inplace(big);
  BOOST_TEST(std::fabs(big[0] - 0.5f) < 1e-6f);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> ninf = {-inf, -inf, -inf, -inf};
  wv::softmax_inplace(ninf);
  BOOST_TEST(ninf[3] == 0.25f);
}

BOOST_AUTO_TEST_CASE(label_parsing) {
  auto l = wv::parse_labels("cat\r\n dog \n\nbird\n");
  BOOST_TEST_REQUIRE(l.ok());
  BOOST_TEST((*l == std::vector<std::string>{"cat", "dog", "", "bird"}));
  l = wv::parse_labels("one");
  BOOST_TEST_REQUIRE(l.ok());
  BOOST_TEST((*l == std::vector<std::string>{"one"}));
  BOOST_TEST(!wv::parse_labels("").ok());
  BOOST_TEST(!wv::parse_labels("\n\r\n").ok());
}

BOOST_AUTO_TEST_CASE(label_files) {
  const std::string path = temp_file("labels.txt", "tench\ngoldfish\nshark\n");
  auto l = wv::load_labels(path);
  BOOST_TEST_REQUIRE(l.ok());
  BOOST_TEST((*l == std::vector<std::string>{"tench", "goldfish", "shark"}));
  std::filesystem::remove(path);

  auto missing = wv::load_labels("/nonexistent/weave/labels.txt");
  BOOST_TEST_REQUIRE(!missing.ok());
  BOOST_TEST(missing.message().find("/nonexistent/weave/labels.txt") != std::string::npos, missing.message());
  BOOST_TEST(missing.message().find("cannot open") != std::string::npos, missing.message());

  const std::string empty = temp_file("empty.txt", "");
  auto e = wv::load_labels(empty);
  BOOST_TEST_REQUIRE(!e.ok());
  BOOST_TEST(e.message().find(empty) != std::string::npos, e.message());
  BOOST_TEST(e.message().find("no labels") != std::string::npos, e.message());
  std::filesystem::remove(empty);

  // A directory opens as a stream on Linux but cannot be read as a file.
  BOOST_TEST(!wv::load_labels(std::filesystem::temp_directory_path().string()).ok());
}

BOOST_AUTO_TEST_CASE(registry_makes_classification_and_names_unknown_modes) {
  auto& reg = wv::DecoderRegistry::global();
  BOOST_TEST((reg.modes() ==
              std::vector<std::string>{"classification", "angle", "ctc", "db", "yolo", "yolov8", "ssd"}));
  auto d = reg.make("classification", {});
  BOOST_TEST_REQUIRE(d.ok());
  BOOST_TEST((*d)->mode() == "classification");
  auto bad = reg.make("detection", {});
  BOOST_TEST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.message() ==
             "unknown decode mode 'detection' (known: classification, angle, ctc, db, yolo, yolov8, ssd)");
}

BOOST_AUTO_TEST_CASE(classification_accepts_vectors_and_rows_of_vectors) {
  wv::ClassificationDecoder d({});
  BOOST_TEST(d.accepts(weave::DType::float32, weave::Dims{1, 1000}).ok());
  BOOST_TEST(d.accepts(weave::DType::float32, weave::Dims{10}).ok());
  BOOST_TEST(d.accepts(weave::DType::float32, weave::Dims{2, 10}).ok());  // one per crop
  auto r = d.accepts(weave::DType::float32, weave::Dims{1, 3, 2, 2});
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("1x3x2x2") != std::string::npos, r.message());
  BOOST_TEST(!d.accepts(weave::DType::float32, weave::Dims{1, 0}).ok());
  r = d.accepts(weave::DType::int32, weave::Dims{1, 10});
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("int32") != std::string::npos, r.message());
}

BOOST_AUTO_TEST_CASE(classification_decodes_with_labels_softmax_threshold) {
  wv::DecoderOptions o;
  o.labels = {"a", "b", "c"};  // one short: class 3 is reported by id
  o.top_k = 3;
  wv::ClassificationDecoder d(o);
  const std::vector<float> s = {0.1f, 0.2f, 0.05f, 0.65f};
  auto r = d.decode({s.data(), weave::DType::float32, weave::Dims{1, 4}});
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST_REQUIRE(r->classes.size() == 3u);
  BOOST_TEST(r->classes[0].class_id == 3);
  BOOST_TEST(r->classes[0].label == "3");
  BOOST_TEST(r->classes[0].score == 0.65f);
  BOOST_TEST(r->classes[1].label == "b");
  BOOST_TEST(r->classes[2].label == "a");

  o.softmax = true;
  o.threshold = 0.3;
  wv::ClassificationDecoder sm(o);
  const std::vector<float> logits = {0.0f, std::log(3.0f)};  // -> 0.25, 0.75
  r = sm.decode({logits.data(), weave::DType::float32, weave::Dims{2}});
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST_REQUIRE(r->classes.size() == 1u);
  BOOST_TEST(r->classes[0].label == "b");
  BOOST_TEST(std::fabs(r->classes[0].score - 0.75f) < 1e-6f);

  // decode() re-checks what it is given.
  BOOST_TEST(!d.decode({s.data(), weave::DType::float32, weave::Dims{1, 2, 2}}).ok());

  // Rows: one top-k per row, row 0 also as `classes`.
  wv::DecoderOptions one;
  one.top_k = 1;
  wv::ClassificationDecoder rows(one);
  r = rows.decode({s.data(), weave::DType::float32, weave::Dims{2, 2}});
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST_REQUIRE(r->rows.size() == 2u);
  BOOST_TEST(r->rows[0].classes[0].class_id == 1);
  BOOST_TEST(r->rows[1].classes[0].class_id == 1);
  BOOST_TEST(r->rows[1].classes[0].score == 0.65f);
  BOOST_TEST(r->classes[0].score == 0.2f);
}

BOOST_AUTO_TEST_CASE(json_lines) {
  wv::DecodeResult r;
  r.classes = {{281, "tabby", 0.5f}, {7, "say \"hi\"\\\n\x01", 0.25f}};
  BOOST_TEST(wv::to_json_line(40000000u, r) ==
             "{\"pts\":40000000,\"results\":[{\"class_id\":281,\"label\":\"tabby\",\"score\":0.5},"
             "{\"class_id\":7,\"label\":\"say \\\"hi\\\"\\\\\\n\\u0001\",\"score\":0.25}]}");
  wv::DecodeResult odd;
  odd.classes = {{0, "x", std::numeric_limits<float>::infinity()}};
  BOOST_TEST(wv::to_json_line(std::nullopt, odd) ==
             "{\"pts\":null,\"results\":[{\"class_id\":0,\"label\":\"x\",\"score\":null}]}");
  BOOST_TEST(wv::to_json_line(0u, {}) == "{\"pts\":0,\"results\":[]}");
  BOOST_TEST(wv::json_string("ü") == "\"ü\"");
}
