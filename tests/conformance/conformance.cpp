#include "tests/conformance/conformance.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "core/compiler/compile.h"
#include "core/import/onnx_import.h"
#include "core/import/onnx_tensor.h"
#include "core/kernels/kernel_util.h"
#include "core/kernels/registry.h"
#include "core/runtime/executor.h"
#include "core/runtime/factory.h"
#include "onnx/onnx_pb.h"

namespace weave::conformance {
namespace fs = std::filesystem;

namespace {

const char* const kSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

std::string first_line(const std::string& s) {
  const auto nl = s.find('\n');
  std::string out = nl == std::string::npos ? s : s.substr(0, nl) + " (...)";
  if (out.size() > 400) out = out.substr(0, 400) + "...";
  return out;
}

bool contains(const std::string& s, const char* what) {
  return s.find(what) != std::string::npos;
}

// Reads the classification from an error message (see conformance.h).
Outcome classify(const std::string& msg) {
  if (contains(msg, "unsupported operators") || contains(msg, "is not supported (operator") ||
      (contains(msg, "operator '") && contains(msg, "' is not supported")))
    return Outcome::unsupported_op;
  if (contains(msg, "is not a tensor") || contains(msg, "element type") || contains(msg, "dtype") ||
      contains(msg, "string tensors"))
    return Outcome::unsupported_dtype;
  if (contains(msg, "attribute")) return Outcome::unsupported_attribute;
  return Outcome::error;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// input_0.pb, input_1.pb, ... in numeric order.
std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

Expected<NamedTensor> read_tensor(const fs::path& p) {
  onnx::TensorProto t;
  const std::string bytes = read_file(p);
  if (!t.ParseFromString(bytes))
    return make_error(p.filename().string(), ": not a TensorProto (a sequence or optional value?)");
  auto d = onnx_import::decode_tensor(t, p.filename().string());
  if (!d) return d.error();
  if (d->shape.size() > static_cast<std::size_t>(kMaxRank))
    return make_error(p.filename().string(), ": rank above ", kMaxRank);
  NamedTensor out{t.name(), Tensor(d->dtype, Dims(d->shape))};
  if (!d->bytes.empty()) std::memcpy(out.tensor.data(), d->bytes.data(), d->bytes.size());
  return out;
}

// ONNX 1.12 wrote bfloat16 test data as uint16 tensors of the same bits: read them as bfloat16
// where the model has bfloat16.
void relabel_bfloat16(Tensor& t, DType model_dtype) {
  if (t.dtype() != DType::uint16 || model_dtype != DType::bfloat16) return;
  Tensor b(DType::bfloat16, t.dims());
  if (t.bytes()) std::memcpy(b.data(), t.data(), t.bytes());
  t = std::move(b);
}

double element(const void* data, DType t, int64_t i) {
  switch (t) {
    case DType::float32:
      return static_cast<const float*>(data)[i];
    case DType::float64:
      return static_cast<const double*>(data)[i];
    case DType::float16:
      return kern::half_to_float(static_cast<const uint16_t*>(data)[i]);
    default:
      return 0;
  }
}

bool close(double got, double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= 1e-7 + 1e-3 * std::fabs(want);
}

// Empty when equal by ONNX's convention, else what differs.
std::string compare(const ConstTensorView& got, const Tensor& want) {
  if (got.dtype != want.dtype())
    return make_error("dtype ", dtype_name(got.dtype), ", expected ", dtype_name(want.dtype())).message();
  if (!(got.dims == want.dims()))
    return make_error("shape ", shape_str(got.dims.span()), ", expected ", shape_str(want.dims().span()))
        .message();
  const int64_t n = want.numel();
  const DType t = want.dtype();
  if (t == DType::float32 || t == DType::float64 || t == DType::float16) {
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; ++i)
      if (!close(element(got.data, t, i), element(want.data(), t, i))) {
        if (first < 0) first = i;
        ++bad;
      }
    if (bad == 0) return {};
    return make_error(bad, " of ", n, " elements differ, first at ", first, ": got ",
                      element(got.data, t, first), ", expected ", element(want.data(), t, first))
        .message();
  }
  const std::size_t es = dtype_size(t);
  const auto* a = static_cast<const unsigned char*>(got.data);
  const auto* b = static_cast<const unsigned char*>(want.data());
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(a + i * es, b + i * es, es) != 0)
      return make_error("element ", i, " differs (", dtype_name(t), ")").message();
  return {};
}

bool is_tensor_type(const onnx::TypeProto& t) {
  return t.has_tensor_type() || t.value_case() == onnx::TypeProto::VALUE_NOT_SET;
}

// Op types of the main graph and whether every graph input and output is a tensor.
void describe_model(const std::string& bytes, CaseResult& r) {
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes)) return;
  std::set<std::string> ops;
  for (const auto& n : m.graph().node())
    if (n.op_type() != "Constant") ops.insert(n.op_type());
  r.ops.assign(ops.begin(), ops.end());
  for (const auto& v : m.graph().input()) r.tensor_io = r.tensor_io && is_tensor_type(v.type());
  for (const auto& v : m.graph().output()) r.tensor_io = r.tensor_io && is_tensor_type(v.type());
}

// Position of `name` among `infos`, else `fallback` when in range, else -1.
int match(std::span<const TensorInfo> infos, const std::string& name, int fallback) {
  for (std::size_t i = 0; i < infos.size(); ++i)
    if (infos[i].name == name) return static_cast<int>(i);
  return fallback < static_cast<int>(infos.size()) ? fallback : -1;
}

// Runs one test_data_set_* folder; empty on success.
std::string run_data_set(Executor& ex, const fs::path& dir, const RunOptions& options, bool& skipped,
                         Outcome& outcome) {
  outcome = Outcome::fail;
  const Factory& f = ex.factory();
  const auto in_files = numbered(dir, "input_");
  const auto out_files = numbered(dir, "output_");
  std::vector<Tensor> inputs(static_cast<std::size_t>(f.num_inputs()));
  std::vector<bool> have(inputs.size(), false);
  long long elements = 0;
  for (std::size_t k = 0; k < in_files.size(); ++k) {
    auto t = read_tensor(in_files[k]);
    if (!t) {
      outcome = classify(t.message());
      return t.message();
    }
    const int i = match(f.inputs(), t->name, static_cast<int>(k));
    if (i < 0) {
      outcome = Outcome::error;
      return in_files[k].filename().string() + ": the model has no such input";
    }
    relabel_bfloat16(t->tensor, f.input_info(i).dtype);
    elements += t->tensor.numel();
    inputs[static_cast<std::size_t>(i)] = std::move(t->tensor);
    have[static_cast<std::size_t>(i)] = true;
  }
  if (options.max_input_elements > 0 && elements > options.max_input_elements) {
    skipped = true;
    return {};
  }
  std::vector<ConstTensorView> views;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!have[i]) {
      outcome = Outcome::error;
      return "no data for input '" + f.input_info(static_cast<int>(i)).name + "'";
    }
    views.push_back(inputs[i].view());
  }
  auto outs = ex.run(views);
  if (!outs) {
    outcome = classify(outs.message());
    return outs.message();
  }
  for (std::size_t k = 0; k < out_files.size(); ++k) {
    auto want = read_tensor(out_files[k]);
    if (!want) {
      outcome = classify(want.message());
      return want.message();
    }
    const int o = match(f.outputs(), want->name, static_cast<int>(k));
    if (o < 0) {
      outcome = Outcome::error;
      return out_files[k].filename().string() + ": the model has no such output";
    }
    relabel_bfloat16(want->tensor, (*outs)[static_cast<std::size_t>(o)].dtype());
    const std::string diff = compare((*outs)[static_cast<std::size_t>(o)].view(), want->tensor);
    if (!diff.empty()) return "output '" + f.output_info(o).name + "': " + diff;
  }
  return {};
}

CaseResult run_case_impl(const CaseInfo& c, const RunOptions& options) {
  CaseResult r;
  r.name = c.name;
  const fs::path dir(c.dir);
  const std::string model_bytes = read_file(dir / "model.onnx");
  describe_model(model_bytes, r);
  const KernelRegistry& reg = options.registry ? *options.registry : KernelRegistry::global();
  auto fail = [&](Outcome o, const std::string& msg) {
    r.outcome = o;
    r.detail = first_line(msg);
    return r;
  };

  ImportOptions io;
  io.registry = &reg;
  auto graph = import_onnx_bytes(std::as_bytes(std::span<const char>(model_bytes)), "model.onnx", io);
  if (!graph) return fail(classify(graph.message()), graph.message());
  auto compiled = compile_graph(std::move(*graph), CompileOptions{}, reg);
  if (!compiled) return fail(classify(compiled.message()), compiled.message());
  FactoryOptions fo;
  fo.registry = &reg;
  fo.dedup_params = false;  // nothing to share between cases
  auto factory = Factory::create(std::move(*compiled), fo);
  if (!factory) return fail(classify(factory.message()), factory.message());
  ExecutorOptions eo;
  eo.threads = 1;
  auto ex = Executor::create(*factory, eo);
  if (!ex) return fail(classify(ex.message()), ex.message());

  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return fail(Outcome::error, "no test_data_set_* folder");
  for (const auto& s : sets) {
    bool skipped = false;
    Outcome o = Outcome::fail;
    const std::string msg = run_data_set(*ex, s, options, skipped, o);
    if (!msg.empty()) return fail(o, s.filename().string() + ": " + msg);
  }
  r.outcome = Outcome::pass;
  return r;
}

}  // namespace

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::pass:
      return "pass";
    case Outcome::fail:
      return "fail";
    case Outcome::unsupported_op:
      return "unsupported-op";
    case Outcome::unsupported_dtype:
      return "unsupported-dtype";
    case Outcome::unsupported_attribute:
      return "unsupported-attribute";
    case Outcome::error:
      return "error";
  }
  return "error";
}

bool outcome_from_name(const std::string& name, Outcome& out) {
  for (Outcome o : {Outcome::pass, Outcome::fail, Outcome::unsupported_op, Outcome::unsupported_dtype,
                    Outcome::unsupported_attribute, Outcome::error})
    if (name == outcome_name(o)) {
      out = o;
      return true;
    }
  return false;
}

std::vector<CaseInfo> list_cases(const std::string& data_dir) {
  std::vector<CaseInfo> out;
  for (const char* suite : kSuites) {
    const fs::path sdir = fs::path(data_dir) / suite;
    std::error_code ec;
    if (!fs::is_directory(sdir, ec)) continue;
    for (const auto& e : fs::directory_iterator(sdir, ec))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx"))
        out.push_back(CaseInfo{std::string(suite) + "/" + e.path().filename().string(), e.path().string()});
  }
  std::sort(out.begin(), out.end(), [](const CaseInfo& a, const CaseInfo& b) { return a.name < b.name; });
  return out;
}

CaseResult run_case(const CaseInfo& c, const RunOptions& options) {
  try {
    return run_case_impl(c, options);
  } catch (const std::exception& e) {
    CaseResult r;
    r.name = c.name;
    r.outcome = Outcome::error;
    r.detail = std::string("exception escaped: ") + e.what();
    return r;
  }
}

std::vector<std::string> model_ops(const std::string& path) {
  CaseResult r;
  describe_model(read_file(path), r);
  return r.ops;
}

}  // namespace weave::conformance
