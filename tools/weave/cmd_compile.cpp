// weave compile MODEL.onnx -o MODEL.weave
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "core/artifact/artifact.h"
#include "core/loader/model_loader.h"
#include "core/runtime/factory.h"
#include "tools/weave/cli.h"

namespace weave::cli {

int cmd_compile(int argc, char** argv) {
  auto args = Args::parse(argc, argv, {"--strip-names", "--help", "-h"},
                          {"-o", "--output", "--compression", "--level", "--shape"});
  if (!args || args->flag("--help") || args->flag("-h") || args->positional().size() != 1 ||
      !(args->get("-o") || args->get("--output"))) {
    if (!args) std::fprintf(stderr, "weave compile: %s\n", args.message().c_str());
    std::fprintf(args && (args->flag("--help") || args->flag("-h")) ? stdout : stderr,
                 "usage: weave compile MODEL.onnx -o MODEL.weave [--compression "
                 "none|zlib|lz4|zstd|zlib-shuffle|zlib-planes|zstd-planes]\n"
                 "                     [--level N] [--strip-names] [--shape NAME=DIMS ...]\n"
                 "  Imports the ONNX model, turns constants into params, removes Identity/Dropout,\n"
                 "  folds BatchNorm into Conv, infers shapes, plans memory and writes the artifact.\n"
                 "  --shape records the dims to plan for (dynamic dims otherwise plan at first run).\n");
    return args && (args->flag("--help") || args->flag("-h")) ? kExitOk : kExitUsage;
  }
  const std::string in = args->positional()[0];
  const std::string out = args->get("-o") ? *args->get("-o") : *args->get("--output");
  WriteOptions wo;
  wo.codec = args->get("--compression").value_or(std::string(kDefaultCodec));
  wo.strip_names = args->flag("--strip-names");
  if (auto lv = args->get("--level")) wo.level = std::atoi(lv->c_str());

  auto t0 = std::chrono::steady_clock::now();
  auto graph = load_model_graph(in);
  if (!graph) {
    std::fprintf(stderr, "weave compile: %s\n", graph.message().c_str());
    return kExitError;
  }
  FactoryOptions fo;
  for (const auto& s : args->all("--shape")) {
    auto ns = parse_named_shape(s);
    if (!ns) {
      std::fprintf(stderr, "weave compile: %s\n", ns.message().c_str());
      return kExitUsage;
    }
    graph->metadata["plan_shape." + ns->first] = shape_str(ns->second);
    fo.plan_shapes[ns->first] = ns->second;
  }
  // Creating the factory checks that every kernel accepts its node and plans memory, so a
  // model that compiles also loads.
  Graph copy = *graph;
  auto factory = Factory::create(std::move(copy), fo);
  if (!factory) {
    std::fprintf(stderr, "weave compile: %s: %s\n", in.c_str(), factory.message().c_str());
    return kExitError;
  }
  if (Status st = write_artifact(*graph, out, wo); !st) {
    std::fprintf(stderr, "weave compile: %s\n", st.message().c_str());
    return kExitError;
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::error_code ec;
  auto in_size = std::filesystem::file_size(in, ec);
  auto out_size = std::filesystem::file_size(out, ec);
  std::printf("compiled %s -> %s in %.0f ms\n", in.c_str(), out.c_str(), ms);
  std::printf("  nodes %zu, params %zu (%s), codec %s%s\n", graph->nodes.size(), graph->params.size(),
              human_bytes(static_cast<double>(graph->param_bytes())).c_str(), wo.codec.c_str(),
              wo.strip_names ? ", names stripped" : "");
  if (auto plan = (*factory)->default_plan())
    std::printf("  arena %s (planned for the default input dims)\n",
                human_bytes(static_cast<double>(plan->arena_bytes)).c_str());
  std::printf("  size %s -> %s (%.2fx)\n", human_bytes(static_cast<double>(in_size)).c_str(),
              human_bytes(static_cast<double>(out_size)).c_str(),
              in_size ? static_cast<double>(out_size) / static_cast<double>(in_size) : 0.0);
  return kExitOk;
}

}  // namespace weave::cli
