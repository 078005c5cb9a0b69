// What the importer refuses before and during ONNX shape inference, and how it says so:
// attributes against the op's schema (core/import/schema_check.h), the preconditions of
// libonnx's inference functions (core/import/guarded_inference.h), model-local functions, and
// every input of the fuzzers' regression corpus with every op reaching inference.
#define BOOST_TEST_MODULE guard
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/import/onnx_import.h"
#include "onnx/onnx_pb.h"
#include "tests/import/onnx_build.h"

using namespace weave;
using namespace weave::test;
namespace fs = std::filesystem;

namespace {

std::string source_root() {
  const char* v = std::getenv("WEAVE_SOURCE_ROOT");
  return v && *v ? v : ".";
}

// The error of importing `m` (every op reaches inference), or "" when it imports.
std::string error_of(const onnx::ModelProto& m) {
  auto g = import_proto(m, "m.onnx", no_op_check());
  return g ? std::string() : g.message();
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// x (float [1,1,8,8]) -> Conv with weight w [1,1,3,3] -> y.
onnx::ModelProto conv_model() {
  onnx::ModelProto m = base_model(13);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 1, 8, 8});
  set_tensor_type(g->add_input(), "w", onnx::TensorProto::FLOAT, {1, 1, 3, 3});
  add_node(g, "Conv", "conv", {"x", "w"}, {"y"});
  set_tensor_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {});
  return m;
}

onnx::NodeProto* conv(onnx::ModelProto& m) {
  return m.mutable_graph()->mutable_node(0);
}

// Graph input i retyped.
void retype(onnx::ModelProto& m, int i, int elem, std::vector<int64_t> dims) {
  auto* vi = m.mutable_graph()->mutable_input(i);
  vi->clear_type();
  set_tensor_type(vi, vi->name(), elem, std::move(dims));
}

void add_string_attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_model_that_crashed_ci_is_a_clear_error) {
  const std::string path =
      source_root() + "/tests/fuzz/onnx/convinteger-float-input-rank1-weight-int-auto-pad";
  auto g = import_onnx(path);
  BOOST_REQUIRE(!g);
  BOOST_TEST(contains(g.message(), path + ": node 2 (ConvInteger): attribute 'auto_pad' is of kind INT"));
  BOOST_TEST(contains(g.message(), "ConvInteger-10 declares STRING"));
}

BOOST_AUTO_TEST_CASE(attributes_of_the_wrong_kind_name_node_op_and_attribute) {
  onnx::ModelProto m = conv_model();
  add_int_attr(conv(m), "auto_pad", 0);
  BOOST_TEST(error_of(m) ==
             "m.onnx: node 0 (Conv 'conv'): attribute 'auto_pad' is of kind INT, but Conv-11 "
             "declares STRING");
  m = conv_model();
  add_float_attr(conv(m), "strides", 2.f);
  BOOST_TEST(contains(error_of(m), "attribute 'strides' is of kind FLOAT, but Conv-11 declares INTS"));
  m = conv_model();
  add_ints_attr(conv(m), "group", {1});
  BOOST_TEST(contains(error_of(m), "attribute 'group' is of kind INTS, but Conv-11 declares INT"));
  // An attribute with no value at all.
  m = conv_model();
  conv(m)->add_attribute()->set_name("auto_pad");
  BOOST_TEST(contains(error_of(m), "attribute 'auto_pad' has no value (Conv-11 declares STRING)"));
  // Given twice.
  m = conv_model();
  add_ints_attr(conv(m), "strides", {1, 1});
  add_ints_attr(conv(m), "strides", {2, 2});
  BOOST_TEST(contains(error_of(m), "attribute 'strides' is given twice"));
}

BOOST_AUTO_TEST_CASE(an_old_exporters_untyped_attribute_takes_its_kind_from_its_value) {
  onnx::ModelProto m = conv_model();
  auto* a = conv(m)->add_attribute();
  a->set_name("strides");
  a->add_ints(1);
  a->add_ints(1);  // type left UNDEFINED
  BOOST_TEST(error_of(m).empty());
}

BOOST_AUTO_TEST_CASE(required_attributes_and_inputs_are_there) {
  onnx::ModelProto m = base_model(13);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2});
  add_node(g, "Cast", "c", {"x"}, {"y"});
  set_tensor_type(g->add_output(), "y", 0, {});
  BOOST_TEST(error_of(m) == "m.onnx: node 0 (Cast 'c'): attribute 'to' is required by Cast-13 and missing");
  // Conv's X is a Single input: it cannot be left empty.
  m = conv_model();
  conv(m)->set_input(0, "");
  BOOST_TEST(
      contains(error_of(m), "node 0 (Conv 'conv'): input 0 ('X' of Conv-11) is required but left empty"));
  m = conv_model();
  conv(m)->add_input("x");
  conv(m)->add_input("x");
  BOOST_TEST(contains(error_of(m), "node 0 (Conv 'conv'): 4 inputs, Conv-11 takes 2 to 3"));
}

BOOST_AUTO_TEST_CASE(window_attributes_hold_what_the_operators_allow) {
  struct Case {
    std::function<void(onnx::NodeProto*)> set;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](onnx::NodeProto* n) { add_string_attr(n, "auto_pad", "SAME"); },
       "attribute 'auto_pad' is 'SAME', not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID"},
      {[](onnx::NodeProto* n) {
         add_ints_attr(n, "strides", {1, 0});
       },
       "attribute 'strides' holds 0, outside 1..2147483648"},
      {[](onnx::NodeProto* n) {
         add_ints_attr(n, "pads", {0, 0, -1, 0});
       },
       "attribute 'pads' holds -1, outside 0..2147483648"},
      {[](onnx::NodeProto* n) {
         add_ints_attr(n, "pads", {0, 0, 0});
       },
       "attribute 'pads' has 3 values, not two (begin and end) per spatial dim"},
      {[](onnx::NodeProto* n) {
         add_ints_attr(n, "kernel_shape", {3, 3});
         add_ints_attr(n, "strides", {1, 1, 1});
       },
       "attribute 'strides' has 3 values, but 'kernel_shape' gives 2 spatial dims"},
      {[](onnx::NodeProto* n) { add_int_attr(n, "group", 0); },
       "attribute 'group' is 0, not a positive group count"},
  };
  for (const Case& c : cases) {
    onnx::ModelProto m = conv_model();
    c.set(conv(m));
    const std::string e = error_of(m);
    BOOST_TEST(contains(e, "node 0 (Conv 'conv'): " + c.error), e);
  }
  onnx::ModelProto m = conv_model();
  add_string_attr(conv(m), "auto_pad", "SAME_LOWER");
  add_ints_attr(conv(m), "strides", {2, 2});
  add_ints_attr(conv(m), "dilations", {1, 1});
  BOOST_TEST(error_of(m).empty());
  // What the kernels and ONNX Runtime read as defaults: an empty auto_pad, empty lists.
  m = conv_model();
  add_string_attr(conv(m), "auto_pad", "");
  add_ints_attr(conv(m), "dilations", {});
  add_ints_attr(conv(m), "pads", {});
  BOOST_TEST(error_of(m).empty());
}

BOOST_AUTO_TEST_CASE(what_libonnx_does_not_know_is_not_refused) {
  // Opset 18, newer than libonnx 1.12 knows: ReduceMean takes its axes as an input there (a
  // second input ReduceMean-13's schema does not have).
  onnx::ModelProto m = base_model(18);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  auto* axes = g->add_initializer();
  axes->set_name("axes");
  axes->set_data_type(onnx::TensorProto::INT64);
  axes->add_dims(1);
  axes->add_int64_data(1);
  add_node(g, "ReduceMean", "mean", {"x", "axes"}, {"y"});
  set_tensor_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {});
  auto r = import_proto(m, "m.onnx");
  BOOST_TEST(r.ok(), (r ? "" : r.message()));
  // A dynamic dim written as -1 by some converters.
  m = conv_model();
  retype(m, 0, onnx::TensorProto::FLOAT, {-1, 1, 8, 8});
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(-1);
  BOOST_TEST(error_of(m).empty(), error_of(m));
}

BOOST_AUTO_TEST_CASE(inference_preconditions_are_errors_naming_the_node) {
  // The weight's rank against the data's, for each conv: ConvInteger's was the CI crash.
  onnx::ModelProto m = conv_model();
  retype(m, 1, onnx::TensorProto::FLOAT, {3, 3});
  BOOST_TEST(error_of(m) == "m.onnx: node 0 (Conv 'conv'): the weight (input 1) has rank 2, the data rank 4");
  m = conv_model();
  conv(m)->set_op_type("ConvInteger");
  retype(m, 0, onnx::TensorProto::UINT8, {1, 1, 8, 8});
  retype(m, 1, onnx::TensorProto::UINT8, {9});
  BOOST_TEST(
      contains(error_of(m), "node 0 (ConvInteger 'conv'): the weight (input 1) has rank 1, the data rank 4"));
  // Element types the schema does not take: a float input to ConvInteger.
  m = conv_model();
  conv(m)->set_op_type("ConvInteger");
  BOOST_TEST(contains(error_of(m),
                      "node 0 (ConvInteger 'conv'): input 0 ('x') is tensor(float), which ConvInteger "
                      "does not take for T1"));
  // One type parameter, two types.
  m = conv_model();
  retype(m, 1, onnx::TensorProto::DOUBLE, {1, 1, 3, 3});
  BOOST_TEST(contains(error_of(m),
                      "input 1 ('W') is tensor(double), but an earlier input of type T is tensor(float)"));
  // A huge dim that libonnx would walk one stride at a time.
  m = conv_model();
  retype(m, 0, onnx::TensorProto::FLOAT, {1, 1, 8, int64_t{1} << 34});
  add_string_attr(conv(m), "auto_pad", "SAME_UPPER");
  add_ints_attr(conv(m), "strides", {2, 2});
  BOOST_TEST(contains(error_of(m), "spatial dim 1 of 17179869184 is more than 2^24 strides of 2"));
}

BOOST_AUTO_TEST_CASE(a_node_whose_input_lost_its_type_is_skipped_not_refused) {
  // Concat of inputs of different ranks fails inference, so EyeLike's input has no type:
  // EyeLike's inference would read it (generator/defs.cc:304); it is skipped, the model imports.
  onnx::ModelProto m = base_model(13);
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "a", onnx::TensorProto::FLOAT, {2, 2});
  set_tensor_type(g->add_input(), "b", onnx::TensorProto::FLOAT, {2});
  add_int_attr(add_node(g, "Concat", "cat", {"a", "b"}, {"c"}), "axis", 0);
  add_int_attr(add_node(g, "EyeLike", "eye", {"c"}, {"y"}), "dtype", onnx::TensorProto::FLOAT);
  set_tensor_type(g->add_output(), "y", 0, {});
  BOOST_TEST(error_of(m).empty());
}

BOOST_AUTO_TEST_CASE(model_local_functions_are_not_inferred) {
  // A function that calls itself: libonnx's inference recursed until the stack overflowed.
  onnx::ModelProto m = base_model(13);
  auto* op = m.add_opset_import();
  op->set_domain("local");
  op->set_version(1);
  auto* f = m.add_functions();
  f->set_name("F");
  f->set_domain("local");
  f->add_input("i");
  f->add_output("o");
  *f->add_opset_import() = *op;
  auto* call = f->add_node();
  call->set_op_type("F");
  call->set_domain("local");
  call->add_input("i");
  call->add_output("o");
  auto* g = m.mutable_graph();
  set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2});
  *g->add_node() = *call;
  g->mutable_node(0)->set_input(0, "x");
  g->mutable_node(0)->set_output(0, "y");
  set_tensor_type(g->add_output(), "y", 0, {});
  auto r = import_proto(m, "m.onnx");
  BOOST_REQUIRE(!r);
  BOOST_TEST(contains(r.message(), "unsupported operators: local::F"));
  BOOST_TEST(error_of(m).empty());  // every op taken: imported, the function never inferred
}

BOOST_AUTO_TEST_CASE(every_regression_input_with_every_op_reaching_inference) {
  // The fuzzers' regression corpus (tests/fuzz/onnx) replays through the full fuzz target with
  // the op check on, which stops models of ops without kernels before inference; here every op
  // reaches libonnx's inference and the guard.
  const fs::path dir = source_root() + "/tests/fuzz/onnx";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  BOOST_REQUIRE(files.size() > 50u);
  int refused = 0;
  for (const auto& p : files) {
    BOOST_TEST_CHECKPOINT(p.string());
    auto g = import_onnx(p.string(), no_op_check());
    if (!g) {
      ++refused;
      BOOST_TEST(contains(g.message(), p.string() + ": "));
    }
  }
  BOOST_TEST(refused > static_cast<int>(files.size()) / 2);
}
