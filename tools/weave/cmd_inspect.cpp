// weave inspect FILE [--json]
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/artifact/artifact.h"
#include "core/compiler/layout_nhwc.h"
#include "core/kernels/registry.h"
#include "core/loader/model_loader.h"
#include "core/runtime/factory.h"
#include "tools/weave/cli.h"

namespace weave::cli {
namespace {

nlohmann::json tensor_json(const TensorInfo& t) {
  nlohmann::json shape = nlohmann::json::array();
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i] >= 0)
      shape.push_back(t.shape[i]);
    else
      shape.push_back(i < t.dim_names.size() && !t.dim_names[i].empty() ? t.dim_names[i] : "?");
  }
  return {{"name", t.name}, {"dtype", std::string(dtype_name(t.dtype))}, {"shape", shape}};
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  auto args = Args::parse(argc, argv, {"--json", "--help", "-h"}, {"--shape"});
  if (!args || args->flag("--help") || args->flag("-h") || args->positional().size() != 1) {
    if (!args) std::fprintf(stderr, "weave inspect: %s\n", args.message().c_str());
    std::fprintf(args && (args->flag("--help") || args->flag("-h")) ? stdout : stderr,
                 "usage: weave inspect FILE [--json] [--shape NAME=DIMS ...]\n"
                 "  FILE is .onnx or .weave (a .weave needs no protobuf). Shows the real inputs,\n"
                 "  the outputs, the params, the arena size, the op histogram and the size on disk.\n");
    return args && (args->flag("--help") || args->flag("-h")) ? kExitOk : kExitUsage;
  }
  const std::string path = args->positional()[0];
  const bool artifact = is_artifact_file(path);
  auto graph = load_model_graph(path);
  if (!graph) {
    std::fprintf(stderr, "weave inspect: %s\n", graph.message().c_str());
    return kExitError;
  }
  std::map<std::string, Shape> shapes;
  for (const auto& s : args->all("--shape")) {
    auto ns = parse_named_shape(s);
    if (!ns) {
      std::fprintf(stderr, "weave inspect: %s\n", ns.message().c_str());
      return kExitUsage;
    }
    shapes[ns->first] = ns->second;
  }
  const Graph g = *graph;  // the factory takes its own copy; params are shared, not copied
  FactoryOptions fo;
  fo.plan_shapes = shapes;
  auto factory = Factory::create(std::move(*graph), fo);
  if (!factory) {
    std::fprintf(stderr, "weave inspect: %s: %s\n", path.c_str(), factory.message().c_str());
    return kExitError;
  }
  const Factory& f = **factory;
  std::error_code ec;
  const auto disk = std::filesystem::file_size(path, ec);

  nlohmann::json j;
  j["file"] = path;
  j["format"] = artifact ? "weave" : "onnx";
  j["size_on_disk"] = disk;
  j["inputs"] = nlohmann::json::array();
  for (const auto& t : f.inputs()) j["inputs"].push_back(tensor_json(t));
  j["outputs"] = nlohmann::json::array();
  for (const auto& t : f.outputs()) j["outputs"].push_back(tensor_json(t));
  j["num_inputs"] = f.num_inputs();
  j["num_outputs"] = f.num_outputs();
  j["num_params"] = f.num_params();
  j["param_bytes"] = f.param_bytes();
  j["num_nodes"] = g.nodes.size();
  j["ops"] = g.op_histogram();
  j["metadata"] = g.metadata;
  j["has_name_map"] = !g.names.empty();
  // What runs the model here: the fast path (its instruction set, nodes it took, channels-last
  // nodes, layout reorders, packed weights) or the reference kernels.
  int fast_nodes = 0, nhwc_nodes = 0, reorders = 0;
  const Graph& fg = f.graph();
  for (std::size_t n = 0; n < fg.nodes.size(); ++n) {
    fast_nodes += f.kernel_impl(static_cast<int>(n)) == "fast";
    nhwc_nodes += fg.nodes[n].attrs.get_string("weave_layout") == "NHWC";
  }
  reorders = count_layout_transposes(fg);
  j["kernels"] = {{"fast_isa", std::string(fast_path_isa())},
                  {"nodes", fg.nodes.size()},
                  {"fast_nodes", fast_nodes},
                  {"nhwc_nodes", nhwc_nodes},
                  {"layout_reorders", reorders},
                  {"packed_bytes", f.packed_bytes()},
                  {"resident_param_bytes", f.resident_param_bytes()}};
  auto plan = f.default_plan();
  if (plan) {
    j["arena_bytes"] = plan->arena_bytes;
    j["workspace_bytes"] = plan->workspace_bytes;
    nlohmann::json pd;
    for (int i = 0; i < f.num_inputs(); ++i) pd[f.input_info(i).name] = shape_str(plan->input_dims[i].span());
    j["planned_for"] = pd;
  } else {
    j["arena_bytes"] = nullptr;
  }
  if (artifact) {
    if (auto info = inspect_artifact(path)) {
      j["artifact_version"] = info->version;
      nlohmann::json codecs;
      for (const auto& [codec, use] : info->codecs)
        codecs[codec] = {{"params", use.params}, {"stored", use.stored_bytes}, {"raw", use.raw_bytes}};
      j["param_codecs"] = codecs;
    }
  }

  if (args->flag("--json")) {
    std::printf("%s\n", j.dump().c_str());
    return kExitOk;
  }
  std::printf("%s  (%s, %s on disk)\n", path.c_str(), artifact ? "weave artifact" : "ONNX model",
              human_bytes(static_cast<double>(disk)).c_str());
  for (const char* key : {"producer", "opset"})
    if (auto it = g.metadata.find(key); it != g.metadata.end() && !it->second.empty())
      std::printf("%-9s %s\n", (std::string(key) + ":").c_str(), it->second.c_str());
  std::printf("inputs (%d):\n", f.num_inputs());
  for (const auto& t : f.inputs()) std::printf("  %-24s %s\n", t.name.c_str(), t.str().c_str());
  std::printf("outputs (%d):\n", f.num_outputs());
  for (const auto& t : f.outputs()) std::printf("  %-24s %s\n", t.name.c_str(), t.str().c_str());
  std::printf("params:   %d (%s)\n", f.num_params(),
              human_bytes(static_cast<double>(f.param_bytes())).c_str());
  if (j.contains("param_codecs"))
    for (const auto& [codec, v] : j["param_codecs"].items())
      std::printf("          %-12s %4d params, %s stored for %s raw\n", codec.c_str(), v["params"].get<int>(),
                  human_bytes(v["stored"].get<double>()).c_str(),
                  human_bytes(v["raw"].get<double>()).c_str());
  if (plan) {
    std::string dims;
    for (int i = 0; i < f.num_inputs(); ++i)
      dims += (dims.empty() ? "" : ", ") + f.input_info(i).name + "=" + shape_str(plan->input_dims[i].span());
    std::printf("arena:    %s + %s scratch, planned for %s\n",
                human_bytes(static_cast<double>(plan->arena_bytes)).c_str(),
                human_bytes(static_cast<double>(plan->workspace_bytes)).c_str(), dims.c_str());
  } else {
    std::printf("arena:    depends on the input dims (pass --shape NAME=DIMS to plan)\n");
  }
  if (fast_path_isa().empty()) {
    std::printf("kernels:  reference (no fast CPU path in this build or on this CPU)\n");
  } else {
    std::printf(
        "kernels:  fast CPU path (%s): %d of %zu nodes, %d channels-last, %d layout reorders; "
        "weights packed %s, params kept %s\n",
        std::string(fast_path_isa()).c_str(), fast_nodes, fg.nodes.size(), nhwc_nodes, reorders,
        human_bytes(static_cast<double>(f.packed_bytes())).c_str(),
        human_bytes(static_cast<double>(f.resident_param_bytes())).c_str());
  }
  std::printf("names:    %s\n", g.names.empty() ? "stripped" : "present (name map)");
  std::printf("ops (%zu nodes):", g.nodes.size());
  std::vector<std::pair<int, std::string>> ops;
  for (const auto& [op, n] : g.op_histogram()) ops.emplace_back(-n, op);
  std::sort(ops.begin(), ops.end());
  for (const auto& [n, op] : ops) std::printf(" %s %d", op.c_str(), -n);
  std::printf("\n");
  return kExitOk;
}

}  // namespace weave::cli
