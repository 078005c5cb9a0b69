// weave run MODEL --input NAME=FILE.npy ... --output-dir DIR [--max-shape NAME=DIMS ...]
#include <cstdio>
#include <filesystem>

#include "core/common/npy.h"
#include "core/loader/model_loader.h"
#include "core/runtime/executor.h"
#include "tools/weave/cli.h"

namespace weave::cli {

int cmd_run(int argc, char** argv) {
  auto args = Args::parse(argc, argv, {"--help", "-h", "--replan-beyond-bound"},
                          {"--input", "-i", "--output-dir", "-o", "--max-shape"});
  const bool help = args && (args->flag("--help") || args->flag("-h"));
  if (!args || help || args->positional().size() != 1) {
    if (!args) std::fprintf(stderr, "weave run: %s\n", args.message().c_str());
    std::fprintf(help ? stdout : stderr,
                 "usage: weave run MODEL --input NAME=FILE.npy ... --output-dir DIR\n"
                 "                 [--max-shape NAME=DIMS ...] [--replan-beyond-bound]\n"
                 "  Runs the model once on the given .npy inputs and writes every output as\n"
                 "  DIR/<output name>.npy (characters other than [A-Za-z0-9] become '_').\n"
                 "  --max-shape plans memory once for the upper bound of each dim of that input;\n"
                 "  inputs beyond it are an error unless --replan-beyond-bound.\n");
    return help ? kExitOk : kExitUsage;
  }
  const std::string model = args->positional()[0];
  std::string out_dir = args->get("--output-dir").value_or(args->get("-o").value_or(""));
  auto inputs = args->all("--input");
  for (auto& s : args->all("-i")) inputs.push_back(s);

  auto max_shapes = named_shapes(*args, "--max-shape");
  if (!max_shapes) {
    std::fprintf(stderr, "weave run: %s\n", max_shapes.message().c_str());
    return kExitUsage;
  }
  LoadOptions lo;
  lo.factory.max_shapes = *max_shapes;
  lo.factory.replan_beyond_bound = args->flag("--replan-beyond-bound");
  auto factory = load_factory(model, lo);
  if (!factory) {
    std::fprintf(stderr, "weave run: %s\n", factory.message().c_str());
    return kExitError;
  }
  ExecutorOptions eo;
  // With a bound, say when a shape is planned (once) or re-planned beyond the bound.
  if (!lo.factory.max_shapes.empty())
    eo.log = [](std::string_view m) {
      std::fprintf(stderr, "weave run: %.*s\n", static_cast<int>(m.size()), m.data());
    };
  auto ex = Executor::create(*factory, eo);
  if (!ex) {
    std::fprintf(stderr, "weave run: %s\n", ex.message().c_str());
    return kExitError;
  }
  std::vector<bool> given((*factory)->num_inputs(), false);
  for (const auto& spec : inputs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "weave run: --input expects NAME=FILE.npy, got '%s'\n", spec.c_str());
      return kExitUsage;
    }
    std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    auto idx = (*factory)->input_index(name);
    if (!idx) {
      // Accept the sanitized spelling too ("x_0" for "x:0").
      for (int i = 0; i < (*factory)->num_inputs(); ++i)
        if (sanitize((*factory)->input_info(i).name) == name) idx = i;
    }
    if (!idx) {
      std::fprintf(stderr, "weave run: %s\n", idx.message().c_str());
      return kExitError;
    }
    auto t = read_npy(file);
    if (!t) {
      std::fprintf(stderr, "weave run: %s\n", t.message().c_str());
      return kExitError;
    }
    if (Status st = ex->set_input(*idx, t->view()); !st) {
      std::fprintf(stderr, "weave run: %s: %s\n", file.c_str(), st.message().c_str());
      return kExitError;
    }
    given[*idx] = true;
  }
  for (int i = 0; i < (*factory)->num_inputs(); ++i)
    if (!given[i]) {
      std::fprintf(stderr, "weave run: missing --input %s=FILE.npy (%s)\n",
                   (*factory)->input_info(i).name.c_str(), (*factory)->input_info(i).str().c_str());
      return kExitUsage;
    }
  if (Status st = ex->run(); !st) {
    std::fprintf(stderr, "weave run: %s\n", st.message().c_str());
    return kExitError;
  }
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) {
      std::fprintf(stderr, "weave run: %s: %s\n", out_dir.c_str(), ec.message().c_str());
      return kExitError;
    }
  }
  for (int i = 0; i < (*factory)->num_outputs(); ++i) {
    const TensorInfo& info = (*factory)->output_info(i);
    auto v = ex->output(i);
    if (!v) {
      std::fprintf(stderr, "weave run: %s\n", v.message().c_str());
      return kExitError;
    }
    std::printf("%-24s %s[%s]\n", info.name.c_str(), std::string(dtype_name(v->dtype)).c_str(),
                shape_str(v->dims.span()).c_str());
    if (out_dir.empty()) continue;
    std::string path = (std::filesystem::path(out_dir) / (sanitize(info.name) + ".npy")).string();
    if (Status st = write_npy(path, *v); !st) {
      std::fprintf(stderr, "weave run: %s\n", st.message().c_str());
      return kExitError;
    }
  }
  return kExitOk;
}

}  // namespace weave::cli
