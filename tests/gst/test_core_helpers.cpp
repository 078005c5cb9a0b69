// Core helpers behind the GStreamer element (no GStreamer here): tensor-name sanitizing,
// multi-input gathering by timestamp, shared thread pools, the compiled-model cache and the
// model settings (bounds text, settings key, loading).
#define BOOST_TEST_MODULE gst_core_helpers
#include <sys/resource.h>
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/loader/compiled_cache.h"
#include "core/loader/model_settings.h"
#include "core/runtime/executor.h"
#include "core/runtime/tensor_names.h"
#include "core/stream/timestamp_gather.h"
#include "core/threads/thread_budget.h"

namespace fs = std::filesystem;
using weave::TimestampGather;

namespace {

// The error of a failed result, "" for a good one (BOOST_TEST evaluates its message either way).
template <class T>
std::string why(const weave::Expected<T>& e) {
  return e.ok() ? std::string() : e.message();
}

std::string models_dir() {
  const char* b = std::getenv("WEAVE_BUILD_ROOT");
  return std::string(b != nullptr ? b : ".") + "/tests/gst";
}

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("weave-gst-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

BOOST_AUTO_TEST_CASE(sanitize_keeps_lowercase_digits_and_replaces_the_rest) {
  BOOST_TEST(weave::sanitize_tensor_name("Input.1:0") == "input_1_0");
  BOOST_TEST(weave::sanitize_tensor_name("logits") == "logits");
  BOOST_TEST(weave::sanitize_tensor_name("sigmoid_0.tmp_0") == "sigmoid_0_tmp_0");
  BOOST_TEST(weave::sanitize_tensor_name("") == "tensor");
  BOOST_TEST(weave::sanitize_tensor_name("\xc3\xa9t\xc3\xa9") == "__t__");  // UTF-8 bytes, not letters
  BOOST_TEST(weave::sanitize_tensor_name(std::string(1000, 'A')).size() == 64u);
  BOOST_TEST(weave::sanitize_tensor_name("ABCDEF", 3) == "abc");
}

BOOST_AUTO_TEST_CASE(unique_names_suffix_later_duplicates) {
  std::vector<std::string> in{"x.1", "x:1", "X_1", "y"};
  auto out = weave::unique_tensor_names(in);
  BOOST_REQUIRE_EQUAL(out.size(), 4u);
  BOOST_TEST(out[0] == "x_1");
  BOOST_TEST(out[1] == "x_1_2");
  BOOST_TEST(out[2] == "x_1_3");
  BOOST_TEST(out[3] == "y");
}

BOOST_AUTO_TEST_CASE(gather_single_input_releases_immediately) {
  TimestampGather<int> g(1);
  std::vector<int> dropped;
  auto s = g.push(0, 42, 7, dropped);
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->key == 42u);
  BOOST_TEST(s->items == std::vector<int>{7});
  BOOST_TEST(dropped.empty());
}

BOOST_AUTO_TEST_CASE(gather_waits_for_every_input_with_the_same_key) {
  TimestampGather<int> g(2);
  std::vector<int> dropped;
  BOOST_TEST(!g.push(0, 0, 100, dropped).has_value());  // A pts=0
  auto s = g.push(1, 0, 200, dropped);                  // B pts=0
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->items == (std::vector<int>{100, 200}));  // in input order
  BOOST_TEST(!g.push(0, 1, 101, dropped).has_value());   // A pts=1 alone: nothing yet
  BOOST_TEST(g.pending() == 1u);
  BOOST_TEST(!g.push(1, 2, 202, dropped).has_value());  // B pts=2: another key
  s = g.push(1, 1, 201, dropped);                       // B pts=1 completes key 1
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->key == 1u);
  BOOST_TEST(s->items == (std::vector<int>{101, 201}));
  BOOST_TEST(g.pending() == 1u);  // key 2 still waits for A
  BOOST_TEST(dropped.empty());
}

BOOST_AUTO_TEST_CASE(gather_discards_sets_older_than_a_completed_one) {
  TimestampGather<int> g(2);
  std::vector<int> dropped;
  (void)g.push(0, 10, 1, dropped);  // A@10 never gets a partner
  (void)g.push(0, 20, 2, dropped);
  auto s = g.push(1, 20, 3, dropped);
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(dropped == std::vector<int>{1});
  BOOST_TEST(g.pending() == 0u);
  // A late partner for 10 (or a repeat of 20) can no longer complete anything.
  BOOST_TEST(!g.push(1, 10, 4, dropped).has_value());
  BOOST_TEST(!g.push(1, 20, 5, dropped).has_value());
  BOOST_TEST(dropped == (std::vector<int>{1, 4, 5}));
}

BOOST_AUTO_TEST_CASE(gather_bounds_pending_sets_and_replaces_duplicates) {
  TimestampGather<int> g(2, 3);
  std::vector<int> dropped;
  for (int k = 0; k < 3; ++k) (void)g.push(0, static_cast<uint64_t>(k), k, dropped);
  BOOST_TEST(g.pending() == 3u);
  (void)g.push(0, 3, 3, dropped);  // fourth key: the oldest (0) goes
  BOOST_TEST(dropped == std::vector<int>{0});
  BOOST_TEST(g.pending() == 3u);
  (void)g.push(0, 3, 33, dropped);  // same input and key again: the first one goes
  BOOST_TEST(dropped == (std::vector<int>{0, 3}));
  auto s = g.push(1, 3, 9, dropped);
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->items == (std::vector<int>{33, 9}));
  BOOST_TEST(!g.push(5, 4, 77, dropped).has_value());  // no such input
  BOOST_TEST(dropped.back() == 77);
  std::vector<int> rest;
  g.reset(rest);
  BOOST_TEST(rest.size() == 0u);  // keys 1, 2 were discarded when 3 completed
  BOOST_TEST(g.pending() == 0u);
  // After reset, keys may start over.
  BOOST_TEST(!g.push(0, 0, 1, dropped).has_value());
  BOOST_TEST(g.pending() == 1u);
}

BOOST_AUTO_TEST_CASE(element_thread_caps_come_from_one_budget) {
  // weaveinfer's `threads` is a cap on the process-wide budget: every element asking for the
  // same cap gets the same Parallel, and no cap exceeds the budget.
  auto& budget = weave::ThreadBudget::global();
  BOOST_TEST(budget.threads() >= 1);
  BOOST_TEST(&budget.parallel(2) == &budget.parallel(2));
  BOOST_TEST(budget.parallel(1).threads() == 1);
  BOOST_TEST(budget.parallel(0).threads() == budget.threads());
  BOOST_TEST(budget.parallel(256).threads() == budget.threads());
}

BOOST_AUTO_TEST_CASE(cache_path_depends_on_codec_and_file_state) {
  fs::path dir = fresh_dir("key");
  fs::path model = dir / "My Model.onnx";
  fs::copy_file(models_dir() + "/matmul_dyn.onnx", model);
  auto z = weave::compiled_artifact_path(model.string(), (dir / "c").string(), "zlib");
  auto n = weave::compiled_artifact_path(model.string(), (dir / "c").string(), "none");
  BOOST_REQUIRE(z.ok());
  BOOST_REQUIRE(n.ok());
  BOOST_TEST(*z != *n);
  BOOST_TEST(fs::path(*z).parent_path() == dir / "c");
  BOOST_TEST(fs::path(*z).filename().string().rfind("my_model-", 0) == 0u);
  BOOST_TEST(fs::path(*z).extension() == ".weave");
  // Same file again: same key. Touched file (new mtime): new key.
  BOOST_TEST(*weave::compiled_artifact_path(model.string(), (dir / "c").string(), "zlib") == *z);
  fs::last_write_time(model, fs::last_write_time(model) + std::chrono::seconds(5));
  BOOST_TEST(*weave::compiled_artifact_path(model.string(), (dir / "c").string(), "zlib") != *z);
  auto missing = weave::compiled_artifact_path((dir / "nope.onnx").string(), dir.string(), "zlib");
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(missing.message().find("nope.onnx") != std::string::npos);
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(compiled_cache_writes_once_then_reuses) {
  fs::path dir = fresh_dir("cache");
  weave::CompiledCacheOptions opt;
  opt.cache_dir = (dir / "cache").string();
  opt.codec = "zstd";
  const std::string model = models_dir() + "/matmul_dyn.onnx";
  auto first = weave::load_factory_compiled(model, opt);
  BOOST_REQUIRE_MESSAGE(first.ok(), (first.ok() ? std::string() : first.message()));
  BOOST_TEST(first->compiled_now);
  BOOST_TEST(first->warning.empty());
  BOOST_TEST(fs::exists(first->artifact_path));
  BOOST_TEST(fs::path(first->artifact_path).parent_path() == dir / "cache");
  auto second = weave::load_factory_compiled(model, opt);
  BOOST_REQUIRE(second.ok());
  BOOST_TEST(!second->compiled_now);
  BOOST_TEST(second->artifact_path == first->artifact_path);
  BOOST_TEST(second->factory.get() == first->factory.get());  // shared through FactoryCache
  // No temporary files left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir / "cache")) files += e.is_regular_file() ? 1 : 0;
  BOOST_TEST(files == 1);

  // Same outputs as the model compiled in memory: x = [1,2,3,4] -> x @ W, W[i][j] = i + j.
  weave::CompiledCacheOptions direct;  // no cache dir
  auto mem = weave::load_factory_compiled(model, direct);
  BOOST_REQUIRE(mem.ok());
  BOOST_TEST(mem->artifact_path.empty());
  const float x[4] = {1, 2, 3, 4};
  for (const auto& f : {first->factory, mem->factory}) {
    auto ex = weave::Executor::create(f);
    BOOST_REQUIRE(ex.ok());
    weave::ConstTensorView in{x, weave::DType::float32, weave::Dims{1, 4}};
    auto outs = ex->run(std::span<const weave::ConstTensorView>(&in, 1));
    BOOST_REQUIRE_MESSAGE(outs.ok(), (outs.ok() ? std::string() : outs.message()));
    const float* y = (*outs)[0].as<float>();
    BOOST_TEST(y[0] == 20.0f);  // 1*0 + 2*1 + 3*2 + 4*3
    BOOST_TEST(y[1] == 30.0f);
    BOOST_TEST(y[2] == 40.0f);
  }
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(corrupt_cache_entry_is_recompiled) {
  fs::path dir = fresh_dir("corrupt");
  weave::CompiledCacheOptions opt;
  opt.cache_dir = dir.string();
  const std::string model = models_dir() + "/two_outputs.onnx";
  auto entry = weave::compiled_artifact_path(model, opt.cache_dir, opt.codec);
  BOOST_REQUIRE(entry.ok());
  {
    std::ofstream f(*entry, std::ios::binary);
    f << "WEAVE\r\n\x1a garbage";  // right magic, broken body
  }
  auto r = weave::load_factory_compiled(model, opt);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.message()));
  BOOST_TEST(r->compiled_now);
  BOOST_TEST(r->warning.find("unreadable") != std::string::npos);
  BOOST_TEST(r->factory->num_outputs() == 2);
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(unwritable_cache_falls_back_to_memory) {
  fs::path dir = fresh_dir("ro");
  fs::path blocker = dir / "file";
  std::ofstream(blocker) << "not a directory";
  weave::CompiledCacheOptions opt;
  opt.cache_dir = (blocker / "sub").string();  // cannot be created below a regular file
  auto r = weave::load_factory_compiled(models_dir() + "/two_inputs.onnx", opt);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.message()));
  BOOST_TEST(r->artifact_path.empty());
  BOOST_TEST(r->warning.find("cannot create cache directory") != std::string::npos);
  BOOST_TEST(r->factory->num_inputs() == 2);
  fs::remove_all(dir);
}

// Cache entries cut short or emptied (a crash or a full disk while another program wrote one,
// a user's cp): recompiled, with a warning naming the entry; the model runs.
BOOST_AUTO_TEST_CASE(truncated_or_empty_cache_entry_is_recompiled) {
  fs::path dir = fresh_dir("truncated");
  weave::CompiledCacheOptions opt;
  opt.cache_dir = dir.string();
  opt.codec = "none";
  const std::string model = models_dir() + "/two_outputs.onnx";
  auto good = weave::load_factory_compiled(model, opt);
  BOOST_REQUIRE_MESSAGE(good.ok(), why(good));
  const auto full_size = fs::file_size(good->artifact_path);
  for (const std::uintmax_t keep : {full_size / 2, std::uintmax_t{40}, std::uintmax_t{0}}) {
    // Rewritten in place, as a failed writer would leave it (the loaded Factory keeps its own copy).
    fs::resize_file(good->artifact_path, keep);
    auto r = weave::load_factory_compiled(model, opt);
    BOOST_REQUIRE_MESSAGE(r.ok(), why(r));
    BOOST_TEST(r->compiled_now);
    if (keep > 0) BOOST_TEST(r->warning.find("unreadable") != std::string::npos, r->warning);
    BOOST_TEST(fs::file_size(r->artifact_path) == full_size);
    BOOST_TEST(r->factory->num_outputs() == 2);
  }
  fs::remove_all(dir);
}

namespace {

// A cache directory that refuses writes (on a tmpfs) falls back to memory with a warning saying
// why; `what` is in the warning. The model still runs: [1,2,3,4] -> [20,30,40].
void expect_in_memory_fallback(const std::string& cache_dir, const std::string& what) {
  weave::CompiledCacheOptions opt;
  opt.cache_dir = cache_dir;
  opt.codec = "none";
  auto r = weave::load_factory_compiled(models_dir() + "/matmul_dyn.onnx", opt);
  BOOST_REQUIRE_MESSAGE(r.ok(), why(r));
  BOOST_TEST(r->artifact_path.empty());
  BOOST_TEST(!r->compiled_now);
  BOOST_TEST(r->warning.find(what) != std::string::npos, r->warning);
  BOOST_TEST(r->warning.find("using the model compiled in memory") != std::string::npos, r->warning);
  auto ex = weave::Executor::create(r->factory);
  BOOST_REQUIRE(ex.ok());
  const float x[4] = {1, 2, 3, 4};
  weave::ConstTensorView in{x, weave::DType::float32, weave::Dims{1, 4}};
  auto outs = ex->run(std::span<const weave::ConstTensorView>(&in, 1));
  BOOST_REQUIRE(outs.ok());
  BOOST_TEST((*outs)[0].as<float>()[2] == 40.0f);
  // Nothing left behind (no temporary file).
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache_dir, ec))
    BOOST_TEST(e.path().filename().string().find(".tmp") == std::string::npos, e.path().string());
}

// The tmpfs tests run under tests/gst/cache_tmpfs.sh (a user and mount namespace with small
// tmpfs mounts); elsewhere they are skipped.
const char* tmpfs_dir(const char* name) {
  return std::getenv(name);
}
boost::test_tools::assertion_result have_tmpfs(boost::unit_test::test_unit_id) {
  return tmpfs_dir("WEAVE_TMPFS_FULL") != nullptr && tmpfs_dir("WEAVE_TMPFS_RO") != nullptr;
}

}  // namespace

// The disk fills while the entry is written: RLIMIT_FSIZE makes the kernel refuse the write past
// a few bytes (EFBIG, SIGXFSZ ignored), as a full file system would (ENOSPC) part way.
BOOST_AUTO_TEST_CASE(cache_write_cut_short_falls_back_to_memory) {
  fs::path dir = fresh_dir("fsize");
  struct rlimit old {};
  BOOST_REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 64;  // the header fits, the rest does not
  BOOST_REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  expect_in_memory_fallback(dir.string(), "write failed");
  BOOST_REQUIRE(::setrlimit(RLIMIT_FSIZE, &old) == 0);
  std::signal(SIGXFSZ, old_handler);
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(cache_dir_full_tmpfs, *boost::unit_test::precondition(have_tmpfs)) {
  expect_in_memory_fallback(tmpfs_dir("WEAVE_TMPFS_FULL"), "No space left on device");
}

BOOST_AUTO_TEST_CASE(cache_dir_read_only_tmpfs, *boost::unit_test::precondition(have_tmpfs)) {
  expect_in_memory_fallback(tmpfs_dir("WEAVE_TMPFS_RO"), "Read-only file system");
}

BOOST_AUTO_TEST_CASE(missing_model_is_an_error_naming_it) {
  weave::CompiledCacheOptions opt;
  opt.cache_dir = fs::temp_directory_path().string();
  auto r = weave::load_factory_compiled("/nonexistent/dir/model.onnx", opt);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("/nonexistent/dir/model.onnx") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(shape_bounds_parse_and_print) {
  auto b = weave::parse_shape_bounds("x=1x3x960x960; y=2x8\tz.1=4");
  BOOST_TEST_REQUIRE(b.ok(), why(b));
  BOOST_TEST(b->size() == 3u);
  BOOST_TEST((b->at("x") == weave::Shape{1, 3, 960, 960}));
  BOOST_TEST((b->at("z.1") == weave::Shape{4}));
  BOOST_TEST(weave::shape_bounds_text(*b) == "x=1x3x960x960;y=2x8;z.1=4");
  BOOST_TEST(weave::parse_shape_bounds("")->empty());
  for (const char* bad : {"x", "=1x2", "x=", "x=1xq", "x=1x3;y"}) {
    auto e = weave::parse_shape_bounds(bad);
    BOOST_TEST(!e.ok(), bad);
    if (!e.ok()) BOOST_TEST(e.message().find("expected NAME=DIMS") != std::string::npos, e.message());
  }
}

BOOST_AUTO_TEST_CASE(model_settings_key_and_load) {
  weave::ModelSettings s;
  s.model = models_dir() + "/matmul_dyn.onnx";
  s.cache_dir = "";
  const std::string k0 = s.key();
  s.bounds["x"] = {4, 4};
  BOOST_TEST(s.key() != k0);  // a bound is another plan, another factory
  s.bounds.clear();
  s.codec = "none";
  BOOST_TEST(s.key() != k0);

  auto a = weave::load_model(s);
  BOOST_TEST_REQUIRE(a.ok(), why(a));
  auto b = weave::load_model(s);
  BOOST_TEST_REQUIRE(b.ok(), why(b));
  BOOST_TEST(a->factory == b->factory);  // shared through the FactoryCache
  BOOST_TEST(weave::same_interface(*a->factory, *b->factory));
  weave::ModelSettings other = s;
  other.model = models_dir() + "/two_outputs.onnx";
  auto c = weave::load_model(other);
  BOOST_TEST_REQUIRE(c.ok(), why(c));
  BOOST_TEST(!weave::same_interface(*a->factory, *c->factory));

  weave::ModelSettings none;
  auto e = weave::load_model(none, "property 'model'");
  BOOST_TEST_REQUIRE(!e.ok());
  BOOST_TEST(e.message() == "no model set (property 'model')");
  none.model = "/nonexistent/model.onnx";
  e = weave::load_model(none);
  BOOST_TEST_REQUIRE(!e.ok());
  BOOST_TEST(e.message().find("/nonexistent/model.onnx") != std::string::npos, e.message());
}
