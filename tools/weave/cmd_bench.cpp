// weave bench MODEL [--threads N] [--iters N] [--shape NAME=DIMS] [--profile] [--json]
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "core/loader/model_loader.h"
#include "core/runtime/executor.h"
#include "core/runtime/thread_pool.h"
#include "tools/weave/cli.h"

namespace weave::cli {
namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

int cmd_bench(int argc, char** argv) {
  auto args = Args::parse(argc, argv, {"--profile", "--json", "--help", "-h"},
                          {"--threads", "--iters", "--warmup", "--shape"});
  const bool help = args && (args->flag("--help") || args->flag("-h"));
  if (!args || help || args->positional().size() != 1) {
    if (!args) std::fprintf(stderr, "weave bench: %s\n", args.message().c_str());
    std::fprintf(help ? stdout : stderr,
                 "usage: weave bench MODEL [--threads N] [--iters N] [--warmup N] [--shape NAME=DIMS ...]\n"
                 "                   [--profile] [--json]\n"
                 "  Loads the model (load_ms: read or import+compile, kernels, plan), runs --warmup\n"
                 "  untimed iterations, then --iters timed ones on synthetic inputs and reports the\n"
                 "  median and min latency. --profile adds a per-operator table; --json makes the\n"
                 "  last line of stdout one JSON object.\n");
    return help ? kExitOk : kExitUsage;
  }
  const std::string model = args->positional()[0];
  const int threads = std::max(1, std::atoi(args->get("--threads").value_or("1").c_str()));
  const int iters = std::max(1, std::atoi(args->get("--iters").value_or("20").c_str()));
  const int warmup = std::max(0, std::atoi(args->get("--warmup").value_or("3").c_str()));
  const bool profile = args->flag("--profile");
  std::map<std::string, Shape> shapes;
  for (const auto& s : args->all("--shape")) {
    auto ns = parse_named_shape(s);
    if (!ns) {
      std::fprintf(stderr, "weave bench: %s\n", ns.message().c_str());
      return kExitUsage;
    }
    shapes[ns->first] = ns->second;
  }

  auto t0 = Clock::now();
  LoadOptions lo;
  lo.factory.plan_shapes = shapes;
  lo.use_cache = false;
  auto factory = load_factory(model, lo);
  if (!factory) {
    std::fprintf(stderr, "weave bench: %s\n", factory.message().c_str());
    return kExitError;
  }
  const double load_ms = ms_since(t0);
  auto dims = input_dims(**factory, shapes);
  if (!dims) {
    std::fprintf(stderr, "weave bench: %s\n", dims.message().c_str());
    return kExitUsage;
  }
  ExecutorOptions eo;
  eo.threads = threads;  // 1: the calling thread only (0 would mean the whole thread budget)
  // Exactly N threads for a measurement, whatever the process-wide budget (WEAVE_NUM_THREADS).
  if (threads > 1) eo.parallel = std::make_shared<ThreadPool>(threads);
  eo.profile = profile;
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

  std::vector<double> lat;
  std::map<int32_t, double> op_ms;  // node -> total ms
  std::vector<OpProfile> rows;
  for (int i = 0; i < iters; ++i) {
    auto t = Clock::now();
    (void)ex->run();
    lat.push_back(ms_since(t));
    if (profile) {
      rows = ex->profile();
      for (const auto& r : rows) op_ms[r.node] += r.ms;
    }
  }
  const double med = median(lat);
  const double mn = *std::min_element(lat.begin(), lat.end());

  std::string dims_text;
  for (int i = 0; i < (*factory)->num_inputs(); ++i)
    dims_text += (dims_text.empty() ? "" : " ") + (*factory)->input_info(i).name + "=" + shape_str((*dims)[i].span());
  std::printf("%s  threads=%d  inputs: %s\n", model.c_str(), threads, dims_text.c_str());
  std::printf("load %.1f ms, executor %.3f ms, first run %.2f ms\n", load_ms, executor_ms, first_ms);
  std::printf("latency over %d runs: median %.3f ms, min %.3f ms\n", iters, med, mn);

  nlohmann::json j;
  j["model"] = model;
  j["threads"] = threads;
  j["iters"] = iters;
  j["inputs"] = dims_text;
  j["load_ms"] = load_ms;
  j["executor_ms"] = executor_ms;
  j["first_run_ms"] = first_ms;
  j["median_ms"] = med;
  j["min_ms"] = mn;
  j["arena_bytes"] = ex->arena_bytes();

  if (profile) {
    double total = 0;
    for (const auto& [n, ms] : op_ms) total += ms;
    std::vector<const OpProfile*> order;
    for (const auto& r : rows) order.push_back(&r);
    std::sort(order.begin(), order.end(), [&](auto* a, auto* b) { return op_ms[a->node] > op_ms[b->node]; });
    std::printf("\n%-44s %-18s %-40s %10s %7s\n", "node", "op", "shapes", "ms", "share");
    nlohmann::json pj = nlohmann::json::array();
    std::map<std::string, double> by_op;
    for (const OpProfile* r : order) {
      const double ms = op_ms[r->node] / iters;
      by_op[r->op] += ms;
      std::printf("%-44.44s %-18s %-40.40s %10.3f %6.1f%%\n", r->label.c_str(), r->op.c_str(), r->shapes.c_str(), ms,
                  total > 0 ? 100.0 * op_ms[r->node] / total : 0.0);
      pj.push_back({{"node", r->node}, {"label", r->label}, {"op", r->op}, {"shapes", r->shapes}, {"ms", ms}});
    }
    std::printf("\nby op type:\n");
    std::vector<std::pair<double, std::string>> ops;
    for (const auto& [op, ms] : by_op) ops.emplace_back(-ms, op);
    std::sort(ops.begin(), ops.end());
    for (const auto& [ms, op] : ops)
      std::printf("  %-20s %10.3f ms %6.1f%%\n", op.c_str(), -ms, total > 0 ? -100.0 * ms * iters / total : 0.0);
    j["profile"] = pj;
  }
  if (args->flag("--json")) std::printf("%s\n", j.dump().c_str());
  return kExitOk;
}

}  // namespace weave::cli
