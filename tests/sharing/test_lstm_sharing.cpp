// R6 on real models: a step model (embedding + LSTM) and an output model (the linear head) cut
// from one LSTM language model (scripts/export_models.py: lstm_lm, lstm_step, lstm_output, same
// seeded weights). With content dedup the halves use the very bytes of lstm_lm; run token by
// token in their own executors they reproduce lstm_lm over the whole sequence; the explicit API
// shares the same params by name with dedup off and refuses mismatched links. Also: N factories
// of one model loaded without the FactoryCache hold the params once.
#define BOOST_TEST_MODULE lstm_sharing
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/artifact/artifact.h"
#include "core/kernels/registry.h"
#include "core/loader/model_loader.h"
#include "core/params/param_store.h"
#include "core/params/share_params.h"
#include "core/runtime/executor.h"

namespace fs = std::filesystem;
using namespace weave;

namespace {

constexpr int64_t kHidden = 128, kVocab = 256;

std::string model(const std::string& name) {
  const char* dir = std::getenv("WEAVE_MODELS_DIR");
  return (fs::path(dir && *dir ? dir : "models") / (name + ".onnx")).string();
}

// Factories here run the reference kernels, which read params in place, so sharing params by
// pointer is what there is to see (the fast path's packed weights: the last case and
// tests/sharing/test_memory.cpp).
std::shared_ptr<const Factory> load(const std::string& name, bool dedup = true) {
  LoadOptions o;
  o.use_cache = false;  // separate factories: any sharing comes from the store or the API
  o.factory.dedup_params = dedup;
  o.factory.registry = &KernelRegistry::reference();
  auto f = load_factory(model(name), o);
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  return *f;
}

Graph load_graph(const std::string& name) {
  auto g = load_model_graph(model(name));
  BOOST_TEST_REQUIRE(g.ok(), (g.ok() ? "" : g.message()));
  return std::move(*g);
}

// The bytes of the param named `name` (NameMap name).
const std::byte* param_ptr(const Graph& g, const std::string& name) {
  for (const auto& [v, n] : g.names.values)
    if (n == name && g.values[v].kind == ValueKind::param) return g.params[g.values[v].param].data.data();
  BOOST_FAIL("no param named " << name);
  return nullptr;
}

// The name of the param feeding input `index` of the first `op` node (lstm_lm's generated
// names, e.g. "onnx::LSTM_98", are found rather than hard-coded).
std::string param_input_name(const Graph& g, const std::string& op, std::size_t index) {
  for (const Node& n : g.nodes) {
    if (n.op != op || n.inputs.size() <= index) continue;
    int32_t v = n.inputs[index];
    BOOST_TEST_REQUIRE((g.values[v].kind == ValueKind::param));
    return g.names.values.at(v);
  }
  BOOST_FAIL("no " << op << " node");
  return {};
}

// lstm_lm's name for each param of the two halves.
std::vector<ParamLink> step_links(const Graph& lm) {
  return {{"embedding.weight", ""},
          {"lstm.W", param_input_name(lm, "LSTM", 1)},
          {"lstm.R", param_input_name(lm, "LSTM", 2)},
          {"lstm.B", param_input_name(lm, "LSTM", 3)}};
}
std::vector<ParamLink> output_links(const Graph& lm) {
  return {{"head.bias", ""}, {"head.weight_t", param_input_name(lm, "MatMul", 1)}};
}

const std::vector<int64_t> kTokens = {17, 3, 250, 99, 0, 128, 42, 7, 7, 201};

Executor make_executor(std::shared_ptr<const Factory> f) {
  auto ex = Executor::create(std::move(f));
  BOOST_TEST_REQUIRE(ex.ok(), (ex.ok() ? "" : ex.message()));
  return std::move(*ex);
}

std::vector<float> copy_out(Executor& ex, const std::string& name, int64_t numel) {
  auto v = ex.output(name);
  BOOST_TEST_REQUIRE(v.ok(), (v.ok() ? "" : v.message()));
  BOOST_TEST_REQUIRE(v->numel() == numel);
  return std::vector<float>(v->as<float>(), v->as<float>() + numel);
}

// Runs lstm_lm over the whole sequence and step+output token by token, comparing every
// position's logits and the final state.
void check_step_and_output_match_lm(std::shared_ptr<const Factory> lm, std::shared_ptr<const Factory> step,
                                    std::shared_ptr<const Factory> output) {
  const int64_t seq = static_cast<int64_t>(kTokens.size());
  std::vector<float> zeros(kHidden, 0.f);
  Executor whole = make_executor(lm);
  BOOST_TEST_REQUIRE(
      whole.set_input("tokens", ConstTensorView{kTokens.data(), DType::int64, Dims{1, seq}}).ok());
  BOOST_TEST_REQUIRE(
      whole.set_input("h0", ConstTensorView{zeros.data(), DType::float32, Dims{1, 1, kHidden}}).ok());
  BOOST_TEST_REQUIRE(
      whole.set_input("c0", ConstTensorView{zeros.data(), DType::float32, Dims{1, 1, kHidden}}).ok());
  BOOST_TEST_REQUIRE(whole.run().ok());
  const auto ref_logits = copy_out(whole, "next_logits", seq * kVocab);
  const auto ref_h = copy_out(whole, "h1", kHidden);
  const auto ref_c = copy_out(whole, "c1", kHidden);

  Executor step_ex = make_executor(step);
  Executor out_ex = make_executor(output);
  std::vector<float> h = zeros, c = zeros;
  double worst = 0;
  for (int64_t t = 0; t < seq; ++t) {
    BOOST_TEST_REQUIRE(
        step_ex.set_input("tokens", ConstTensorView{&kTokens[t], DType::int64, Dims{1, 1}}).ok());
    BOOST_TEST_REQUIRE(
        step_ex.set_input("h0", ConstTensorView{h.data(), DType::float32, Dims{1, 1, kHidden}}).ok());
    BOOST_TEST_REQUIRE(
        step_ex.set_input("c0", ConstTensorView{c.data(), DType::float32, Dims{1, 1, kHidden}}).ok());
    Status st = step_ex.run();
    BOOST_TEST_REQUIRE(st.ok(), st.message());
    h = copy_out(step_ex, "h1", kHidden);
    c = copy_out(step_ex, "c1", kHidden);
    BOOST_TEST_REQUIRE(
        out_ex.set_input("h", ConstTensorView{h.data(), DType::float32, Dims{1, 1, kHidden}}).ok());
    st = out_ex.run();
    BOOST_TEST_REQUIRE(st.ok(), st.message());
    const auto logits = copy_out(out_ex, "logits", kVocab);
    for (int64_t k = 0; k < kVocab; ++k)
      worst = std::max(worst, double(std::fabs(logits[k] - ref_logits[t * kVocab + k])));
  }
  BOOST_TEST_MESSAGE("step+output vs lstm_lm: max |logit diff| = " << worst);
  BOOST_TEST(worst <= 1e-5);
  for (int64_t k = 0; k < kHidden; ++k) {
    BOOST_TEST(std::fabs(h[k] - ref_h[k]) <= 1e-5f);
    BOOST_TEST(std::fabs(c[k] - ref_c[k]) <= 1e-5f);
  }
  // Not trivially equal: the logits move from token to token.
  BOOST_TEST(std::fabs(ref_logits[0] - ref_logits[kVocab]) > 1e-3f);
}

}  // namespace

BOOST_AUTO_TEST_CASE(dedup_makes_the_halves_use_the_lm_bytes) {
  const auto before = ParamStore::global().stats();
  auto lm = load("lstm_lm");
  auto step = load("lstm_step");
  auto output = load("lstm_output");
  const Graph& g = lm->graph();
  for (const ParamLink& l : step_links(g))
    BOOST_TEST(param_ptr(step->graph(), l.name) == param_ptr(g, l.from.empty() ? l.name : l.from), l.name);
  for (const ParamLink& l : output_links(g))
    BOOST_TEST(param_ptr(output->graph(), l.name) == param_ptr(g, l.from.empty() ? l.name : l.from), l.name);
  // Every byte of the halves is saved: they add no param memory of their own.
  const auto st = ParamStore::global().stats();
  BOOST_TEST(st.bytes_saved() - before.bytes_saved() ==
             static_cast<std::size_t>(step->param_bytes() + output->param_bytes()));
  BOOST_TEST(st.unique_bytes - before.unique_bytes == static_cast<std::size_t>(lm->param_bytes()));
  BOOST_TEST(step->param_bytes() + output->param_bytes() > 500000);  // embedding, LSTM and head
}

BOOST_AUTO_TEST_CASE(step_then_output_token_by_token_equals_the_whole_model) {
  check_step_and_output_match_lm(load("lstm_lm"), load("lstm_step"), load("lstm_output"));
}

BOOST_AUTO_TEST_CASE(explicit_api_shares_lm_params_into_step_and_output) {
  // Dedup off everywhere: only share_params can make bytes common.
  auto lm = load("lstm_lm", false);
  auto unshared = load("lstm_step", false);
  BOOST_TEST(param_ptr(unshared->graph(), "embedding.weight") != param_ptr(lm->graph(), "embedding.weight"));

  FactoryOptions no_dedup;
  no_dedup.dedup_params = false;
  no_dedup.registry = &KernelRegistry::reference();
  Graph step_g = load_graph("lstm_step");
  Status st = share_params(step_g, *lm, step_links(lm->graph()));
  BOOST_TEST_REQUIRE(st.ok(), st.message());
  auto step = Factory::create(std::move(step_g), no_dedup);
  BOOST_TEST_REQUIRE(step.ok(), (step.ok() ? "" : step.message()));
  Graph out_g = load_graph("lstm_output");
  st = share_params(out_g, *lm, output_links(lm->graph()));
  BOOST_TEST_REQUIRE(st.ok(), st.message());
  auto output = Factory::create(std::move(out_g), no_dedup);
  BOOST_TEST_REQUIRE(output.ok(), (output.ok() ? "" : output.message()));

  for (const ParamLink& l : step_links(lm->graph()))
    BOOST_TEST(param_ptr((*step)->graph(), l.name) ==
               param_ptr(lm->graph(), l.from.empty() ? l.name : l.from));
  for (const ParamLink& l : output_links(lm->graph()))
    BOOST_TEST(param_ptr((*output)->graph(), l.name) ==
               param_ptr(lm->graph(), l.from.empty() ? l.name : l.from));

  // A second output model takes every same-named param from the first output factory.
  Graph out2_g = load_graph("lstm_output");
  auto n = share_common_params(out2_g, **output);
  BOOST_TEST_REQUIRE(n.ok(), (n.ok() ? "" : n.message()));
  BOOST_TEST(*n == 2);
  auto output2 = Factory::create(std::move(out2_g), no_dedup);
  BOOST_TEST_REQUIRE(output2.ok());
  BOOST_TEST(param_ptr((*output2)->graph(), "head.weight_t") ==
             param_ptr((*output)->graph(), "head.weight_t"));

  // The lm factory may go: the shared bytes stay alive with their users.
  const std::byte* emb = param_ptr(lm->graph(), "embedding.weight");
  lm.reset();
  auto lm2 = load("lstm_lm", false);
  BOOST_TEST(param_ptr((*step)->graph(), "embedding.weight") == emb);
  check_step_and_output_match_lm(lm2, *step, *output2);
}

BOOST_AUTO_TEST_CASE(mismatched_sharing_between_real_models_fails_clearly) {
  auto step = load("lstm_step", false);
  Graph out_g = load_graph("lstm_output");
  const std::byte* before = param_ptr(out_g, "head.weight_t");

  ParamLink shape_bad[] = {{"head.weight_t", "embedding.weight"}};
  Status st = share_params(out_g, *step, shape_bad);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(
      st.message() ==
      "cannot share param 'head.weight_t' (float32 [128x256]) of the target graph with 'embedding.weight' "
      "(float32 [256x64]) of the source graph: shapes differ");

  ParamLink unknown[] = {{"head.bias", "lstm.weight_ih_l0"}};
  st = share_params(out_g, *step, unknown);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(st.message() ==
             "no param named 'lstm.weight_ih_l0' in the source graph; its params include 'embedding.weight', "
             "'lstm.B', 'lstm.R', 'lstm.W' (4 in all)");

  // A real input is not a param.
  ParamLink not_param[] = {{"head.bias", "tokens"}};
  st = share_params(out_g, *step, not_param);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(st.message() == "'tokens' in the source graph is input 'tokens', not a param");
  BOOST_TEST(param_ptr(out_g, "head.weight_t") == before);  // nothing changed

  // A stripped artifact has no names to share by.
  fs::path dir = fs::temp_directory_path() / ("weave_share_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  WriteOptions wo;
  wo.strip_names = true;
  BOOST_TEST_REQUIRE(write_artifact(step->graph(), (dir / "step.weave").string(), wo).ok());
  auto stripped = read_artifact((dir / "step.weave").string());
  BOOST_TEST_REQUIRE(stripped.ok());
  ParamLink emb[] = {{"embedding.weight", ""}};
  st = share_params(*stripped, *step, emb);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(st.message().find("the target graph has no name map (its names were stripped") == 0u);
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(dtype_mismatch_between_real_models_names_both_dtypes) {
  // The exported models have float params only: make an int32 twin of the head bias.
  auto output = load("lstm_output", false);
  Graph twin = output->graph();
  for (auto& [v, n] : twin.names.values) {
    if (n != "head.bias") continue;
    Value& val = twin.values[v];
    val.dtype = DType::int32;  // same bytes per element, so only the dtype differs
  }
  Graph out_g = load_graph("lstm_output");
  ParamLink links[] = {{"head.bias", ""}};
  Status st = share_params(out_g, twin, links);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(
      st.message() ==
      "cannot share param 'head.bias' (float32 [256]) of the target graph with 'head.bias' (int32 [256]) of "
      "the source graph: dtypes differ");
}

BOOST_AUTO_TEST_CASE(eight_factories_of_one_model_hold_params_once) {
  const auto base = ParamStore::global().stats();
  BOOST_TEST_REQUIRE(base.uses == 0u);  // nothing from earlier cases is alive
  // Content repeated inside the one model (if any) is saved already with one factory.
  std::size_t saved_one = 0, unique_one = 0;
  int64_t P = 0;
  std::size_t held = 0;  // bytes one factory holds through the store: params left + packed weights
  {
    auto one = load("resnet18");
    P = one->param_bytes();
    held = one->resident_param_bytes() + one->packed_bytes();
    saved_one = ParamStore::global().stats().bytes_saved();
    unique_one = ParamStore::global().stats().unique_bytes;
  }
  std::vector<std::shared_ptr<const Factory>> fs;
  for (int i = 0; i < 8; ++i) fs.push_back(load("resnet18"));
  const auto st = ParamStore::global().stats();
  BOOST_TEST_MESSAGE("resnet18 x8: param bytes " << P << ", unique " << st.unique_bytes << ", saved "
                                                 << st.bytes_saved() << " (" << st.unique_params
                                                 << " unique params, " << st.uses << " uses)");
  BOOST_TEST(P > 40'000'000);
  BOOST_TEST(st.unique_bytes == unique_one);
  // Every weight is held once, as a param or packed (conv biases, 0.04% here, are copied into
  // their kernels and not counted).
  BOOST_TEST(held >= static_cast<std::size_t>(P) * 99 / 100);
  BOOST_TEST(st.bytes_saved() == 7 * held + saved_one);
  BOOST_TEST(st.used_bytes == 8 * held);
  for (std::size_t p = 0; p < fs[0]->graph().params.size(); ++p)
    for (int i = 1; i < 8; ++i)
      BOOST_TEST_REQUIRE(fs[i]->graph().params[p].data.data() == fs[0]->graph().params[p].data.data());
  fs.clear();
  BOOST_TEST(ParamStore::global().stats().uses == 0u);
  BOOST_TEST(ParamStore::global().stats().unique_bytes == 0u);
}

BOOST_AUTO_TEST_CASE(fast_path_packed_weights_are_shared_between_models) {
  if (!KernelRegistry::global().has_channels_last_kernels()) {
    BOOST_TEST_MESSAGE("no fast path on this CPU: nothing is packed");
    return;
  }
  const auto before = ParamStore::global().stats();
  LoadOptions o;
  o.use_cache = false;
  auto lm = load_factory(model("lstm_lm"), o);
  auto out = load_factory(model("lstm_output"), o);
  BOOST_TEST_REQUIRE(lm.ok(), (lm.ok() ? "" : lm.message()));
  BOOST_TEST_REQUIRE(out.ok(), (out.ok() ? "" : out.message()));
  // The output model's head MatMul packs the same weights as the LM's: one packed copy.
  BOOST_TEST((*out)->packed_bytes() > 0u);
  const auto st = ParamStore::global().stats();
  BOOST_TEST(st.bytes_saved() - before.bytes_saved() >= (*out)->packed_bytes());
}
