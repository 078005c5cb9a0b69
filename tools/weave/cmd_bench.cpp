// weave bench MODEL [--threads N] [--iters N] [--warmup N] [--repeat N] [--number N] [--min-time MS]
//                   [--shape NAME=DIMS] [--max-shape NAME=DIMS] [--profile] [--json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "core/loader/model_loader.h"
#ifdef WEAVE_HAVE_FAST
#include "core/kernels/fast/cpu.h"
#endif
#include "core/runtime/executor.h"
#include "core/runtime/time_evaluator.h"
#include "core/threads/thread_pool.h"
#include "tools/weave/cli.h"

namespace weave::cli {
namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A positive integer option; false (message printed) when malformed.
bool int_option(const Args& args, const char* name, int fallback, int lo, int& out) {
  const auto v = args.get(name);
  if (!v) {
    out = fallback;
    return true;
  }
  char* end = nullptr;
  const long n = std::strtol(v->c_str(), &end, 10);
  if (end == v->c_str() || *end != '\0' || n < lo || n > (1 << 24)) {
    std::fprintf(stderr, "weave bench: %s expects an integer >= %d, got '%s'\n", name, lo, v->c_str());
    return false;
  }
  out = static_cast<int>(n);
  return true;
}
}  // namespace

int cmd_bench(int argc, char** argv) {
  auto args = Args::parse(
      argc, argv, {"--profile", "--json", "--help", "-h", "--replan-beyond-bound"},
      {"--threads", "--iters", "--warmup", "--shape", "--max-shape", "--repeat", "--number", "--min-time"});
  const bool help = args && (args->flag("--help") || args->flag("-h"));
  if (!args || help || args->positional().size() != 1) {
    if (!args) std::fprintf(stderr, "weave bench: %s\n", args.message().c_str());
    std::fprintf(
        help ? stdout : stderr,
        "usage: weave bench MODEL [--threads N] [--iters N] [--warmup N] [--shape NAME=DIMS ...]\n"
        "                   [--repeat N] [--number N] [--min-time MS]\n"
        "                   [--max-shape NAME=DIMS ...] [--replan-beyond-bound] [--profile] [--json]\n"
        "  Loads the model (load_ms: read or import+compile, kernels, plan), runs --warmup\n"
        "  untimed iterations, then times --repeat measurements (default --iters), each the\n"
        "  mean of --number runs (default 1; raised until one measurement lasts --min-time ms)\n"
        "  on synthetic inputs, and reports the median and min latency per run. --max-shape\n"
        "  plans memory once for the upper bound of that input's dims (inputs without --shape\n"
        "  then run at the bound). --profile adds a per-operator table summed over the timed\n"
        "  runs; --json makes the last line of stdout one JSON object.\n");
    return help ? kExitOk : kExitUsage;
  }
  const std::string model = args->positional()[0];
  int threads = 1, iters = 20, warmup = 3, repeat = 0, number = 1;
  if (!int_option(*args, "--threads", 1, 1, threads) || !int_option(*args, "--iters", 20, 1, iters) ||
      !int_option(*args, "--warmup", 3, 0, warmup) || !int_option(*args, "--repeat", iters, 1, repeat) ||
      !int_option(*args, "--number", 1, 1, number))
    return kExitUsage;
  double min_time = 0;
  if (auto v = args->get("--min-time")) {
    char* end = nullptr;
    min_time = std::strtod(v->c_str(), &end);
    if (end == v->c_str() || *end != '\0' || !(min_time >= 0) || min_time > 1e7) {
      std::fprintf(stderr, "weave bench: --min-time expects milliseconds >= 0, got '%s'\n", v->c_str());
      return kExitUsage;
    }
  }
  const bool profile = args->flag("--profile");
  auto shapes = named_shapes(*args, "--shape");
  auto max_shapes = named_shapes(*args, "--max-shape");
  if (!shapes || !max_shapes) {
    std::fprintf(stderr, "weave bench: %s\n", (!shapes ? shapes.message() : max_shapes.message()).c_str());
    return kExitUsage;
  }

  auto t0 = Clock::now();
  LoadOptions lo;
  lo.factory.plan_shapes = *shapes;
  lo.factory.max_shapes = *max_shapes;
  lo.factory.replan_beyond_bound = args->flag("--replan-beyond-bound");
  lo.use_cache = false;
  auto factory = load_factory(model, lo);
  if (!factory) {
    std::fprintf(stderr, "weave bench: %s\n", factory.message().c_str());
    return kExitError;
  }
  const double load_ms = ms_since(t0);
  // Inputs without --shape run at their bound when they have one.
  std::map<std::string, Shape> run_shapes = *shapes;
  for (const auto& [name, s] : *max_shapes) run_shapes.emplace(name, s);
  auto dims = input_dims(**factory, run_shapes);
  if (!dims) {
    std::fprintf(stderr, "weave bench: %s\n", dims.message().c_str());
    return kExitUsage;
  }
  ExecutorOptions eo;
  eo.threads = threads;  // 1: the calling thread only (0 would mean the whole thread budget)
  // Exactly N threads for a measurement, whatever the process-wide budget (WEAVE_NUM_THREADS).
  if (threads > 1) eo.parallel = std::make_shared<ThreadPool>(threads);
  eo.profile = profile;
  if (!max_shapes->empty())
    eo.log = [](std::string_view m) {
      std::fprintf(stderr, "weave bench: %.*s\n", static_cast<int>(m.size()), m.data());
    };
  auto t1 = Clock::now();
  auto ex = Executor::create(*factory, eo);
  if (!ex) {
    std::fprintf(stderr, "weave bench: %s\n", ex.message().c_str());
    return kExitError;
  }
  const double executor_ms = ms_since(t1);
  std::vector<Tensor> inputs;
  for (int i = 0; i < (*factory)->num_inputs(); ++i) {
    inputs.push_back(synthetic_input((*factory)->input_info(i), (*dims)[i], 17u + i));
    if (Status st = ex->set_input(i, inputs.back().view()); !st) {
      std::fprintf(stderr, "weave bench: %s\n", st.message().c_str());
      return kExitError;
    }
  }
  auto t2 = Clock::now();
  if (Status st = ex->run(); !st) {
    std::fprintf(stderr, "weave bench: %s\n", st.message().c_str());
    return kExitError;
  }
  const double first_ms = ms_since(t2);
  for (int i = 1; i < warmup; ++i) (void)ex->run();

  TimeEvaluator te;
  te.repeat = repeat;
  te.number = number;
  te.min_repeat_ms = min_time;
  auto timed = te.measure(*ex);
  if (!timed) {
    std::fprintf(stderr, "weave bench: %s\n", timed.message().c_str());
    return kExitError;
  }
  const double med = timed->median_ms;
  const double mn = timed->min_ms;

  std::string dims_text;
  for (int i = 0; i < (*factory)->num_inputs(); ++i)
    dims_text +=
        (dims_text.empty() ? "" : " ") + (*factory)->input_info(i).name + "=" + shape_str((*dims)[i].span());
  std::printf("%s  threads=%d  inputs: %s\n", model.c_str(), threads, dims_text.c_str());
  std::printf("load %.1f ms, executor %.3f ms, first run %.2f ms\n", load_ms, executor_ms, first_ms);
  if (timed->number == 1)
    std::printf("latency over %d runs: median %.3f ms, min %.3f ms\n", repeat, med, mn);
  else
    std::printf("latency over %d repeats of %d runs: median %.3f ms, min %.3f ms (per run)\n", repeat,
                timed->number, med, mn);
  if (!max_shapes->empty()) {
    std::string bound;
    for (const auto& [name, s] : *max_shapes)
      bound += (bound.empty() ? "" : " ") + name + "<=" + shape_str(s);
    std::printf("bound: %s, arena %s planned once\n", bound.c_str(),
                human_bytes(static_cast<double>(ex->arena_bytes())).c_str());
  }

  nlohmann::json j;
  j["model"] = model;
  j["threads"] = threads;
  j["iters"] = repeat;
  j["repeat"] = repeat;
  j["number"] = timed->number;
  j["inputs"] = dims_text;
  j["load_ms"] = load_ms;
  j["executor_ms"] = executor_ms;
  j["first_run_ms"] = first_ms;
  j["median_ms"] = med;
  j["min_ms"] = mn;
  j["max_ms"] = timed->max_ms;
  j["mean_ms"] = timed->mean_ms;
  j["repeat_ms"] = timed->repeat_ms;
  j["arena_bytes"] = ex->arena_bytes();
  // The SIMD instruction set the fast kernels run with (WEAVE_ISA caps it), "none" without them.
#ifdef WEAVE_HAVE_FAST
  j["isa"] = std::string(fast::isa_name(fast::active_isa()));
#else
  j["isa"] = "none";
#endif

  if (profile) {
    double total = 0;
    std::map<std::string, double> by_op;
    for (const auto& r : timed->operators) {
      total += r.total_ms;
      by_op[r.op] += r.mean_ms();
    }
    std::printf("\n%-44s %-18s %-40s %10s %7s\n", "node", "op", "shapes", "ms", "share");
    nlohmann::json pj = nlohmann::json::array();
    for (const OpTotals& r : timed->operators) {
      std::printf("%-44.44s %-18s %-40.40s %10.3f %6.1f%%\n", r.label.c_str(), r.op.c_str(), r.shapes.c_str(),
                  r.mean_ms(), total > 0 ? 100.0 * r.total_ms / total : 0.0);
      pj.push_back(
          {{"node", r.node}, {"label", r.label}, {"op", r.op}, {"shapes", r.shapes}, {"ms", r.mean_ms()}});
    }
    double per_run_total = 0;
    for (const auto& [op, ms] : by_op) per_run_total += ms;
    std::printf("\nby op type:\n");
    std::vector<std::pair<double, std::string>> ops;
    for (const auto& [op, ms] : by_op) ops.emplace_back(-ms, op);
    std::sort(ops.begin(), ops.end());
    for (const auto& [ms, op] : ops)
      std::printf("  %-20s %10.3f ms %6.1f%%\n", op.c_str(), -ms,
                  per_run_total > 0 ? -100.0 * ms / per_run_total : 0.0);
    j["profile"] = pj;
  }
  if (args->flag("--json")) std::printf("%s\n", j.dump().c_str());
  return kExitOk;
}

}  // namespace weave::cli
