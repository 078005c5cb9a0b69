// Throughput of E executors of one model on E threads under different thread policies (R12).
// Report only (not a test): prints inferences per second for each policy, interleaved over a
// few rounds, median of the rounds.
//
//   build/tests/threads/bench_thread_budget [MODEL] [EXECUTORS=4] [CAP=2] [RUNS=10] [ROUNDS=3]
//
// Policies, each executor asking for CAP threads:
//   budget          the process-wide budget sized to the cores (the default)
//   no-budget       a budget of EXECUTORS * CAP slots: every executor gets its CAP threads at
//                   once, as with private per-executor pools
//   private-pools   a ThreadPool(CAP) per executor (EXECUTORS * CAP threads)
//   one-shared-pool one ThreadPool(CAP) for all (the former shared_thread_pool(CAP)): parallel
//                   sections of different executors take turns, and the budget is bypassed
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/loader/model_loader.h"
#include "core/runtime/executor.h"
#include "core/threads/thread_budget.h"
#include "core/threads/thread_pool.h"

using namespace weave;

namespace {

struct Policy {
  const char* name;
  int budget;                                                    // 0 = cores
  std::function<std::shared_ptr<const Parallel>(int)> parallel;  // per executor; nullptr = budget
};

double run_policy(const std::shared_ptr<const Factory>& f, const Policy& p, int executors, int cap, int runs,
                  const std::vector<Tensor>& inputs) {
  if (!ThreadBudget::global().set_threads(p.budget).ok()) std::abort();
  std::vector<Executor> exs;
  for (int e = 0; e < executors; ++e) {
    ExecutorOptions eo;
    eo.threads = cap;
    if (p.parallel) eo.parallel = p.parallel(e);
    auto ex = Executor::create(f, eo);
    if (!ex) {
      std::fprintf(stderr, "%s\n", ex.message().c_str());
      std::exit(1);
    }
    exs.push_back(std::move(*ex));
  }
  std::vector<ConstTensorView> views;
  for (const Tensor& t : inputs) views.push_back(t.view());
  for (auto& ex : exs)  // warm up: plans, workers
    if (!ex.run(views)) std::exit(1);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (auto& ex : exs)
    threads.emplace_back([&] {
      for (int r = 0; r < runs; ++r)
        if (!ex.run(views)) std::exit(1);
    });
  for (auto& t : threads) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return executors * runs / s;
}

}  // namespace

int main(int argc, char** argv) {
  const char* dir = std::getenv("WEAVE_MODELS_DIR");
  const std::string model =
      argc > 1 ? argv[1] : std::string(dir ? dir : "build/tests") + "/squeezenet1_1.onnx";
  const int executors = argc > 2 ? std::atoi(argv[2]) : 4;
  const int cap = argc > 3 ? std::atoi(argv[3]) : 2;
  const int runs = argc > 4 ? std::atoi(argv[4]) : 10;
  const int rounds = argc > 5 ? std::atoi(argv[5]) : 3;
  auto f = load_factory(model);
  if (!f) {
    std::fprintf(stderr, "%s\n", f.message().c_str());
    return 1;
  }
  std::vector<Tensor> inputs;
  for (const TensorInfo& info : (*f)->inputs()) {
    std::vector<int64_t> shape(info.shape.begin(), info.shape.end());
    for (auto& v : shape) v = v < 0 ? 1 : v;
    inputs.emplace_back(info.dtype, Dims(std::span<const int64_t>(shape)));
  }
  auto shared = std::make_shared<ThreadPool>(cap);
  const std::vector<Policy> policies = {
      {"budget", 0, nullptr},
      {"no-budget", executors * cap, nullptr},
      {"private-pools", executors * cap, [cap](int) { return std::make_shared<ThreadPool>(cap); }},
      {"one-shared-pool", executors * cap, [shared](int) { return shared; }},
  };
  std::printf("%s: %d executors x %d runs, cap %d, %d cores, %d rounds\n", model.c_str(), executors, runs,
              cap, hardware_threads(), rounds);
  std::vector<std::vector<double>> ips(policies.size());
  for (int r = 0; r < rounds; ++r)
    for (std::size_t p = 0; p < policies.size(); ++p)
      ips[p].push_back(run_policy(*f, policies[p], executors, cap, runs, inputs));
  std::printf("%-16s %8s %12s\n", "policy", "budget", "inferences/s");
  for (std::size_t p = 0; p < policies.size(); ++p) {
    std::sort(ips[p].begin(), ips[p].end());
    const int b = policies[p].budget ? policies[p].budget : hardware_threads();
    std::printf("%-16s %8d %12.2f\n", policies[p].name, b, ips[p][ips[p].size() / 2]);
  }
  return 0;
}
