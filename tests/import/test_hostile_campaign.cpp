// Structure-aware hostile campaign over ONNX's own test models (Debian's libonnx-testdata: every
// node test, the PyTorch-converted and the simple models). Each model is broken in the ways a
// hostile or careless file breaks one, one change at a time, and goes through the importer
// and, when the importer takes it, the compiler and a Factory (every kernel's create and plan):
//   - every attribute of every node given each other kind (an INT where the schema declares a
//     STRING, a list where it declares a scalar, a tensor, a graph, no value at all): the
//     importer must refuse it, naming the node and the attribute;
//   - every graph input given other ranks (0..7), every element type, no type, no shape;
//   - ops chained with mismatched producers: the first input of one test's graph fed by the
//     first output of another's.
// Every variant must end in a value or an Error; a crash kills the test, which is the point.
// tests/import/test_inference_sweep.cpp does the same from the schemas' side.
//
// WEAVE_CAMPAIGN_CRASHES=1 runs each test model's variants in a child process instead and goes
// on after a crash, listing every model and variant that crashed (for finding all the missing
// guards in one run).
#define BOOST_TEST_MODULE hostile_campaign
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "core/compiler/compile.h"
#include "core/import/onnx_import.h"
#include "core/import/schema_check.h"
#include "core/runtime/factory.h"
#include "onnx/onnx_pb.h"

// After libonnx: <sys/mman.h> defines MAP_TYPE, an enumerator in onnx/defs/parser.h.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace weave;
namespace fs = std::filesystem;
using A = onnx::AttributeProto;

namespace {

constexpr const char* kDefaultData = "/usr/share/libonnx-testdata/data";

struct Tally {
  long models = 0, imported = 0, planned = 0;
  long wrong_kind = 0, wrong_kind_named = 0;
};

std::vector<fs::path> test_models() {
  const char* env = std::getenv("WEAVE_ONNX_TESTDATA");
  const fs::path root = env && *env ? env : kDefaultData;
  std::vector<fs::path> out;
  if (!fs::is_directory(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().filename() == "model.onnx") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

bool load(const fs::path& p, onnx::ModelProto& m) {
  std::ifstream f(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return m.ParseFromString(bytes);
}

// What the variant running now is, where a crash-finding parent can read it.
char* g_current = nullptr;
constexpr std::size_t kCurrentSize = 1024;

// One model through the importer (every op reaches shape inference) and on to a Factory.
Expected<Graph> run_one(const onnx::ModelProto& m, Tally& t, const std::string& what) {
  BOOST_TEST_CHECKPOINT(what);
  if (g_current) std::snprintf(g_current, kCurrentSize, "%s", what.c_str());
  const std::string bytes = m.SerializeAsString();
  ImportOptions opt;
  opt.check_ops = false;
  auto g = import_onnx_bytes(std::as_bytes(std::span(bytes.data(), bytes.size())), "campaign.onnx", opt);
  ++t.models;
  if (!g) {
    BOOST_CHECK(!g.message().empty());
    return g;
  }
  ++t.imported;
  // Again with the op check, so that what a user's import takes goes on to the kernels.
  auto checked = import_onnx_bytes(std::as_bytes(std::span(bytes.data(), bytes.size())), "campaign.onnx");
  if (!checked) return g;
  auto c = compile_graph(std::move(*checked));
  if (!c) return g;
  FactoryOptions fo;
  fo.dedup_params = false;
  if (auto f = Factory::create(std::move(*c), fo)) ++t.planned;
  return g;
}

// An attribute of kind `k` holding a value of that kind.
A attribute_of_kind(const std::string& name, A::AttributeType k) {
  A a;
  a.set_name(name);
  a.set_type(k);
  switch (k) {
    case A::INT:
      a.set_i(2);
      break;
    case A::FLOAT:
      a.set_f(2.5f);
      break;
    case A::STRING:
      a.set_s("SAME_UPPER");
      break;
    case A::INTS:
      a.add_ints(2);
      a.add_ints(2);
      break;
    case A::FLOATS:
      a.add_floats(1.5f);
      break;
    case A::STRINGS:
      a.add_strings("x");
      break;
    case A::TENSOR:
      a.mutable_t()->set_data_type(onnx::TensorProto::INT64);
      a.mutable_t()->add_int64_data(2);
      break;
    case A::GRAPH:
      a.mutable_g()->set_name("empty");
      break;
    default:
      a.clear_type();  // no value at all
      break;
  }
  return a;
}

onnx_import::OpsetVersions opsets_of(const onnx::ModelProto& m) {
  onnx_import::OpsetVersions v;
  for (const auto& o : m.opset_import())
    v[o.domain() == "ai.onnx" ? std::string() : o.domain()] = static_cast<int>(o.version());
  return v;
}

void wrong_attribute_kinds(const onnx::ModelProto& base, Tally& t) {
  const auto opsets = opsets_of(base);
  for (int n = 0; n < base.graph().node_size(); ++n) {
    const onnx::NodeProto& node = base.graph().node(n);
    const onnx::OpSchema* schema = onnx_import::schema_for(node, opsets);
    for (int k = 0; k < node.attribute_size(); ++k) {
      const A& original = node.attribute(k);
      const A::AttributeType right = onnx_import::attribute_type(original);
      for (A::AttributeType kind :
           {A::INT, A::FLOAT, A::STRING, A::INTS, A::FLOATS, A::STRINGS, A::TENSOR, A::GRAPH, A::UNDEFINED}) {
        if (kind == right) continue;
        onnx::ModelProto m = base;
        *m.mutable_graph()->mutable_node(n)->mutable_attribute(k) = attribute_of_kind(original.name(), kind);
        auto g = run_one(
            m, t, node.op_type() + " attribute '" + original.name() + "' as kind " + std::to_string(kind));
        if (schema == nullptr || !schema->attributes().count(original.name())) continue;
        // A declared attribute of the wrong kind is refused by name.
        ++t.wrong_kind;
        const bool named = !g && g.message().find("node " + std::to_string(n) + " (") != std::string::npos &&
                           g.message().find("'" + original.name() + "'") != std::string::npos;
        if (named) ++t.wrong_kind_named;
        BOOST_CHECK_MESSAGE(named, node.op_type() << " attribute '" << original.name() << "' as kind " << kind
                                                  << ": " << (g ? std::string("imported") : g.message()));
      }
    }
  }
}

void wrong_inputs(const onnx::ModelProto& base, Tally& t) {
  for (int i = 0; i < base.graph().input_size(); ++i) {
    if (!base.graph().input(i).type().has_tensor_type()) continue;
    for (int rank : {0, 1, 2, 3, 5, 7}) {
      onnx::ModelProto m = base;
      auto* shape =
          m.mutable_graph()->mutable_input(i)->mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (int d = 0; d < rank; ++d) shape->add_dim()->set_dim_value(d % 2 ? 3 : 2);
      (void)run_one(m, t, "input " + std::to_string(i) + " of rank " + std::to_string(rank));
    }
    for (int type = 1; type <= 16; ++type) {
      onnx::ModelProto m = base;
      m.mutable_graph()->mutable_input(i)->mutable_type()->mutable_tensor_type()->set_elem_type(type);
      (void)run_one(m, t, "input " + std::to_string(i) + " of element type " + std::to_string(type));
    }
    onnx::ModelProto untyped = base;
    untyped.mutable_graph()->mutable_input(i)->clear_type();
    (void)run_one(untyped, t, "input " + std::to_string(i) + " untyped");
    onnx::ModelProto shapeless = base;
    shapeless.mutable_graph()->mutable_input(i)->mutable_type()->mutable_tensor_type()->clear_shape();
    (void)run_one(shapeless, t, "input " + std::to_string(i) + " without shape");
  }
}

// Every name in `g` given a prefix, so that two graphs can be joined.
void prefix_names(onnx::GraphProto& g, const std::string& p) {
  auto fix = [&p](std::string* s) {
    if (!s->empty()) *s = p + *s;
  };
  for (auto& v : *g.mutable_input()) fix(v.mutable_name());
  for (auto& v : *g.mutable_output()) fix(v.mutable_name());
  for (auto& v : *g.mutable_value_info()) fix(v.mutable_name());
  for (auto& v : *g.mutable_initializer()) fix(v.mutable_name());
  for (auto& n : *g.mutable_node()) {
    for (auto& s : *n.mutable_input()) fix(&s);
    for (auto& s : *n.mutable_output()) fix(&s);
  }
}

// b's first input fed by a's first output: whatever its type and shape.
void chain(const onnx::ModelProto& a, const onnx::ModelProto& b, Tally& t, const std::string& what) {
  if (a.graph().output_size() == 0 || b.graph().input_size() == 0) return;
  onnx::ModelProto m = a;
  onnx::GraphProto ga = a.graph(), gb = b.graph();
  prefix_names(ga, "a_");
  prefix_names(gb, "b_");
  const std::string from = ga.output(0).name(), to = gb.input(0).name();
  for (auto& n : *gb.mutable_node())
    for (auto& s : *n.mutable_input())
      if (s == to) s = from;
  gb.mutable_input()->DeleteSubrange(0, 1);
  auto* g = m.mutable_graph();
  *g = ga;
  g->clear_output();
  for (const auto& v : gb.input()) *g->add_input() = v;
  for (const auto& v : gb.initializer()) *g->add_initializer() = v;
  for (const auto& n : gb.node()) *g->add_node() = n;
  for (const auto& v : gb.output()) *g->add_output() = v;
  // The newer of the two opsets for each domain.
  for (const auto& o : b.opset_import()) {
    bool found = false;
    for (auto& mine : *m.mutable_opset_import())
      if (mine.domain() == o.domain()) {
        mine.set_version(std::max(mine.version(), o.version()));
        found = true;
      }
    if (!found) *m.add_opset_import() = o;
  }
  (void)run_one(m, t, what);
}

}  // namespace

BOOST_AUTO_TEST_CASE(test_models_broken_every_way_never_crash) {
  const std::vector<fs::path> paths = test_models();
  if (paths.empty()) {
    std::cout << "no ONNX test data (Debian package libonnx-testdata); skipped\n";
    return;
  }
  std::vector<onnx::ModelProto> models;
  for (const auto& p : paths) {
    onnx::ModelProto m;
    if (load(p, m)) models.push_back(std::move(m));
  }
  BOOST_TEST(models.size() == paths.size());
  Tally base, attrs, inputs, chains;
  const bool fork_each = std::getenv("WEAVE_CAMPAIGN_CRASHES") != nullptr;
  if (fork_each) {
    g_current = static_cast<char*>(
        mmap(nullptr, kCurrentSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    BOOST_REQUIRE(g_current != MAP_FAILED);
  }
  long crashes = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    pid_t child = -1;
    if (fork_each) {
      g_current[0] = 0;
      child = fork();
      if (child > 0) {
        int status = 0;
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          ++crashes;
          std::cout << "CRASH " << paths[i].string() << ": " << g_current << "\n" << std::flush;
        }
        continue;
      }
      for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, SIG_DFL);
    }
    BOOST_TEST_MESSAGE(paths[i].string());
    // Every valid test model imports, but for what the importer does not take, said so.
    if (auto g = run_one(models[i], base, paths[i].string()); !g) {
      const std::string& e = g.message();
      const bool unsupported =
          e.find("is not a tensor (sequence, map and optional types") != std::string::npos ||
          e.find("unsupported element type") != std::string::npos ||
          e.find("subgraphs (control flow) are not supported") != std::string::npos;
      BOOST_CHECK_MESSAGE(unsupported, paths[i].string() << " is refused: " << e);
    }
    wrong_attribute_kinds(models[i], attrs);
    wrong_inputs(models[i], inputs);
    // Three partners each, spread over the whole set.
    for (std::size_t k : {1u, 97u, 389u}) {
      const std::size_t j = (i * 7 + k) % models.size();
      chain(models[i], models[j], chains, "fed into " + paths[j].string());
    }
    if (child == 0) _exit(0);
  }
  if (fork_each) {
    std::cout << crashes << " test models crashed\n";
    BOOST_TEST(crashes == 0);
    return;
  }
  auto report = [](const char* what, const Tally& t) {
    std::cout << what << ": " << t.models << " models, " << t.imported << " imported, " << t.planned
              << " planned\n";
  };
  report("unchanged", base);
  report("attributes of the wrong kind", attrs);
  report("inputs of other ranks and types", inputs);
  report("chained with mismatched producers", chains);
  std::cout << attrs.wrong_kind_named << " of " << attrs.wrong_kind
            << " declared attributes of the wrong kind refused by name\n";
  // The campaign reaches the kernels, or it tests nothing past the importer's first checks.
  BOOST_TEST(base.imported > base.models * 9 / 10);
  BOOST_TEST(base.planned > base.models / 2);
  BOOST_TEST(inputs.planned > inputs.models / 10);
  BOOST_TEST(chains.imported > chains.models / 10);
  BOOST_TEST(attrs.wrong_kind > 2000);
  BOOST_TEST(attrs.wrong_kind_named == attrs.wrong_kind);
}
