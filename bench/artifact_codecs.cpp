// bench_artifact: artifact size and load time per params codec.
//
//   bench_artifact MODEL.onnx OUTDIR [--shape NAME=DIMS ...] [--reps R] CODEC[:LEVEL] ...
//
// Compiles the model once (load_model_graph), writes one artifact per codec spec into OUTDIR,
// then measures loading (read_artifact + Factory::create) R times per artifact, interleaved
// across codecs (A B C A B C ...) so machine noise hits all of them alike; the page cache is
// warm (every file is read once before timing). Prints one JSON line per codec.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bench/bench_util.h"
#include "core/artifact/artifact.h"
#include "core/loader/model_loader.h"

namespace weave::bench {
namespace {

struct Spec {
  std::string label, codec;
  int level = -1;
  std::string path;
  uint64_t size = 0;
  double write_ms = 0;
  std::vector<double> read_ms, create_ms, total_ms;
};

int run(int argc, char** argv) {
  if (argc < 4)
    die("usage: bench_artifact MODEL.onnx OUTDIR [--shape NAME=DIMS] [--reps R] CODEC[:LEVEL] ...");
  const std::string model = argv[1], outdir = argv[2];
  int reps = 7;
  FactoryOptions fo;
  std::vector<Spec> specs;
  for (int i = 3; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--shape" || k == "--reps") {
      if (i + 1 >= argc) die("bench_artifact: " + k + " needs a value");
      const std::string v = argv[++i];
      if (k == "--reps") {
        reps = std::max(1, std::atoi(v.c_str()));
      } else {
        auto s = parse_shape_arg(v);
        if (!s) die(s.message());
        fo.plan_shapes[s->first] = s->second;
      }
      continue;
    }
    Spec s;
    s.label = k;
    const auto colon = k.find(':');
    s.codec = k.substr(0, colon);
    if (colon != std::string::npos) s.level = std::atoi(k.c_str() + colon + 1);
    specs.push_back(s);
  }
  std::error_code ec;
  std::filesystem::create_directories(outdir, ec);
  auto graph = load_model_graph(model);
  if (!graph) die("bench_artifact: " + graph.message());
  const std::string stem = std::filesystem::path(model).stem().string();
  for (auto& s : specs) {
    WriteOptions wo;
    wo.codec = s.codec;
    wo.level = s.level;
    std::string tag = s.label;
    for (char& c : tag)
      if (c == ':') c = '-';
    s.path = outdir + "/" + stem + "." + tag + ".weave";
    auto t0 = Clock::now();
    if (Status st = write_artifact(*graph, s.path, wo); !st) die("bench_artifact: " + st.message());
    s.write_ms = ms_since(t0);
    s.size = std::filesystem::file_size(s.path);
    // Warm the page cache and check the file loads.
    auto g = read_artifact(s.path);
    if (!g) die("bench_artifact: " + g.message());
  }
  for (int r = 0; r < reps; ++r) {
    for (auto& s : specs) {
      auto t0 = Clock::now();
      auto g = read_artifact(s.path);
      if (!g) die("bench_artifact: " + g.message());
      auto t1 = Clock::now();
      auto f = Factory::create(std::move(*g), fo);
      if (!f) die("bench_artifact: " + f.message());
      auto t2 = Clock::now();
      s.read_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      s.create_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
      s.total_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
    }
  }
  const auto onnx_size = std::filesystem::file_size(model);
  for (const auto& s : specs) {
    auto info = inspect_artifact(s.path);
    if (!info) die("bench_artifact: " + info.message());
    uint64_t raw = 0, stored = 0;
    for (const auto& [name, u] : info->codecs) {
      raw += u.raw_bytes;
      stored += u.stored_bytes;
    }
    nlohmann::json j{{"bench", "artifact"},
                     {"model", model},
                     {"codec", s.label},
                     {"onnx_bytes", onnx_size},
                     {"artifact_bytes", s.size},
                     {"params_raw_bytes", raw},
                     {"params_stored_bytes", stored},
                     {"write_ms", s.write_ms},
                     {"read_ms", median(s.read_ms)},
                     {"factory_create_ms", median(s.create_ms)},
                     {"load_ms", median(s.total_ms)},
                     {"reps", reps}};
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}

}  // namespace
}  // namespace weave::bench

int main(int argc, char** argv) {
  return weave::bench::run(argc, argv);
}
