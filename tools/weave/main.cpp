// weave: compile, inspect, run and benchmark models from the command line.
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/weave/cli.h"

namespace {
void usage(FILE* out) {
  std::fprintf(out,
               "usage: weave <command> [options]\n"
               "\n"
               "commands:\n"
               "  compile MODEL.onnx -o MODEL.weave [--compression "
               "none|zlib|lz4|zstd|zlib-shuffle|zlib-planes|zstd-planes]\n"
               "          [--level N] [--strip-names] [--shape NAME=DIMS ...]\n"
               "                      compile an ONNX model into a .weave artifact\n"
               "  inspect FILE [--json] [--shape NAME=DIMS ...]\n"
               "                      inputs, outputs, params, arena size, op histogram\n"
               "  run MODEL --input NAME=FILE.npy ... --output-dir DIR\n"
               "                      run once; writes DIR/<output name>.npy\n"
               "  bench MODEL [--threads N] [--iters N] [--warmup N] [--shape NAME=DIMS ...]\n"
               "          [--profile] [--json]\n"
               "                      load time and latency (median, min); per-op profile\n"
               "\n"
               "MODEL is a .onnx file (compiled in memory) or a .weave artifact.\n"
               "Run 'weave <command> --help' for details.\n");
}
}  // namespace

int main(int argc, char** argv) {
  using namespace weave::cli;
  if (argc < 2) {
    usage(stderr);
    return kExitUsage;
  }
  std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(stdout);
    return kExitOk;
  }
  if (cmd == "--version" || cmd == "version") {
    std::printf("weave %s\n", WEAVE_VERSION);
    return kExitOk;
  }
  if (cmd == "compile") return cmd_compile(argc - 2, argv + 2);
  if (cmd == "inspect") return cmd_inspect(argc - 2, argv + 2);
  if (cmd == "run") return cmd_run(argc - 2, argv + 2);
  if (cmd == "bench") return cmd_bench(argc - 2, argv + 2);
  std::fprintf(stderr, "weave: unknown command '%s'\n\n", cmd.c_str());
  usage(stderr);
  return kExitUsage;
}
