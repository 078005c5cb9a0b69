// ModelSlot, the model an element keeps between starts (no GStreamer): loads and their errors,
// the interface a reload must keep, and when the next start must load again. The models are
// small .weave artifacts written here, so no ONNX tooling is needed.
#define BOOST_TEST_MODULE loader_model_slot
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>

#include "core/artifact/artifact.h"
#include "core/graph/graph.h"
#include "core/loader/model_slot.h"

namespace fs = std::filesystem;
using weave::LoadFailure;
using weave::Reload;

namespace {

// `input` float32[batch,4] -> Relu -> "y".
weave::Graph relu_graph(const std::string& input) {
  weave::Graph g;
  const weave::Shape shape{weave::kDynamic, 4};
  const int32_t x =
      g.add_value(weave::Value{weave::ValueKind::input, weave::DType::float32, shape, true, -1});
  const int32_t y =
      g.add_value(weave::Value{weave::ValueKind::intermediate, weave::DType::float32, shape, true, -1});
  g.nodes.push_back(weave::Node{"Relu", {x}, {y}, {}});
  g.inputs = {x};
  g.outputs = {y};
  g.input_infos = {weave::TensorInfo{input, weave::DType::float32, shape, {"batch", ""}}};
  g.output_infos = {weave::TensorInfo{"y", weave::DType::float32, shape, {"batch", ""}}};
  return g;
}

// Two models in a fresh directory, and a slot to load them into.
struct Models {
  weave::ModelSlot slot;
  fs::path dir = fs::temp_directory_path() / ("weave-loader-" + std::to_string(::getpid()));
  Models() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    write("x.weave", "x");
    write("z.weave", "z");
  }
  ~Models() { fs::remove_all(dir); }
  // Written atomically (a new file renamed over the old one), as users are told to.
  void write(const std::string& name, const std::string& input) const {
    auto st = weave::write_artifact(relu_graph(input), (dir / name).string(), {});
    BOOST_TEST_REQUIRE(st.ok(), st.message());
  }
  [[nodiscard]] weave::ModelSettings settings(const std::string& name) const {
    weave::ModelSettings s;
    s.model = (dir / name).string();
    s.cache_dir = "";
    return s;
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(an_empty_path_or_a_missing_file_is_a_failure_that_says_so) {
  weave::ModelSlot slot;
  BOOST_TEST((slot.load(weave::ModelSettings{}, false, "property 'model'") == LoadFailure::no_model));
  BOOST_TEST(slot.error() == "no model set (property 'model')");
  BOOST_TEST(!slot.factory());
  weave::ModelSettings missing;
  missing.model = "/nonexistent/model.weave";
  BOOST_TEST((slot.load(missing, false) == LoadFailure::unreadable));
  BOOST_TEST(slot.error().find("/nonexistent/model.weave") != std::string::npos, slot.error());
  BOOST_TEST((slot.reload_needed(missing) == Reload::not_loaded));
}

BOOST_FIXTURE_TEST_CASE(a_good_load_publishes_the_factory_and_the_file_read, Models) {
  const auto s = settings("x.weave");
  BOOST_TEST_REQUIRE((slot.load(s, false) == LoadFailure::none), slot.error());
  BOOST_TEST_REQUIRE(slot.factory() != nullptr);
  BOOST_TEST(slot.factory()->input_info(0).name == "x");
  BOOST_TEST(slot.artifact_path() == s.model);  // a .weave model is its own artifact
  BOOST_TEST(slot.error().empty());
  BOOST_TEST(slot.take_warning().empty());
  BOOST_TEST(!slot.compiled_now());
  BOOST_TEST((slot.reload_needed(s) == Reload::none));
}

BOOST_FIXTURE_TEST_CASE(other_settings_or_a_changed_file_need_a_new_load, Models) {
  const auto s = settings("x.weave");
  BOOST_TEST_REQUIRE((slot.load(s, false) == LoadFailure::none), slot.error());
  auto codec = s;
  codec.codec = "none";
  BOOST_TEST((slot.reload_needed(codec) == Reload::settings_changed));
  auto bounded = s;
  bounded.bounds["x"] = {8, 4};
  BOOST_TEST((slot.reload_needed(bounded) == Reload::settings_changed));
  BOOST_TEST((slot.reload_needed(settings("z.weave")) == Reload::settings_changed));

  write("x.weave", "x");  // replaced: another file under the same name
  BOOST_TEST((slot.reload_needed(s) == Reload::file_changed));
  BOOST_TEST_REQUIRE((slot.load(s, true) == LoadFailure::none), slot.error());
  BOOST_TEST((slot.reload_needed(s) == Reload::none));
  fs::remove(s.model);
  BOOST_TEST((slot.reload_needed(s) == Reload::file_changed));
  BOOST_TEST(slot.factory() != nullptr);  // the running model stays until the next load
  BOOST_TEST((slot.load(s, true) == LoadFailure::unreadable));
  BOOST_TEST(!slot.factory());
}

BOOST_FIXTURE_TEST_CASE(a_reload_that_keeps_the_interface_refuses_other_names, Models) {
  BOOST_TEST_REQUIRE((slot.load(settings("x.weave"), false) == LoadFailure::none), slot.error());
  const auto z = settings("z.weave");
  BOOST_TEST((slot.load(z, true) == LoadFailure::interface_changed));
  BOOST_TEST(slot.error() == z.model + ": the model's inputs or outputs changed");
  BOOST_TEST(!slot.factory());
  BOOST_TEST(slot.artifact_path().empty());
  // Nothing is held, but the pads are still x's: z is refused again, also after a load that
  // failed in between.
  BOOST_TEST((slot.load(z, true) == LoadFailure::interface_changed));
  BOOST_TEST((slot.load(settings("missing.weave"), true) == LoadFailure::unreadable));
  BOOST_TEST((slot.load(z, true) == LoadFailure::interface_changed));
  BOOST_TEST_REQUIRE((slot.load(settings("x.weave"), true) == LoadFailure::none), slot.error());
  // A fresh load (new pads) takes any model.
  BOOST_TEST((slot.load(z, false) == LoadFailure::none));
  BOOST_TEST(slot.factory()->input_info(0).name == "z");
}

BOOST_FIXTURE_TEST_CASE(a_bound_plans_the_factory_and_a_bad_one_fails_the_load, Models) {
  auto s = settings("x.weave");
  s.bounds["x"] = {8, 4};
  BOOST_TEST_REQUIRE((slot.load(s, false) == LoadFailure::none), slot.error());
  BOOST_TEST(slot.factory()->check_bound(0, weave::Dims{8, 4}).ok());
  BOOST_TEST(!slot.factory()->check_bound(0, weave::Dims{9, 4}).ok());
  s.bounds = {{"x", {8, 5}}};  // not the model's shape
  BOOST_TEST((slot.load(s, false) == LoadFailure::unreadable));
  BOOST_TEST(!slot.error().empty());
}
