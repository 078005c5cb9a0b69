// bench_instances: "many instances, one set of weights" in one process, through the public API.
//
//   bench_instances mem MODEL N [--shape NAME=DIMS ...] [--lend] [--bind]
//       N executors of MODEL, each obtained the normal way (load_factory -> FactoryCache, then
//       Executor::create), each run once, all alive at once; prints one JSON line with the
//       process's peak and current RSS. N = 0 loads nothing: the baseline of this binary.
//       Run each N in a fresh process so peaks do not carry over. --lend creates the executors
//       with ExecutorOptions::lend_arena (no arena each; the slots lend theirs). --bind runs
//       them the way weaveinfer does: every executor binds the same caller-owned inputs (one
//       frame teed to N models) and a fresh caller-owned output buffer (a PageBuffer, like
//       weaveinfer's output frames of 256 KiB and more) that is dropped after the run (a sink
//       consumed it), so the executors need no input/output buffers of their own. All run on
//       this thread (weaveinfer: one streaming thread per element).
//
//   bench_instances setup MODEL [--shape NAME=DIMS ...] [--reps R] [--run-reps K]
//       Time to first output of the first instance (cold: load + read/compile + plan + first
//       run) and of the k-th (load_factory hit + Executor::create + first run), and the median
//       Executor::create time over R repetitions while other executors stay alive.
#include <cstring>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>

#include "bench/bench_util.h"
#include "core/loader/model_loader.h"
#include "core/runtime/executor.h"
#include "core/runtime/factory_cache.h"
#include "core/threads/thread_budget.h"

namespace weave::bench {
namespace {

struct Args {
  std::string cmd, model;
  int n = 1;
  int reps = 500, run_reps = 5;
  bool lend = false;  // ExecutorOptions::lend_arena: executors lease their compute slot's arena
  bool bind = false;  // bind_input / bind_output instead of set_input / output()
  std::map<std::string, Shape> shapes;
};

Args parse(int argc, char** argv) {
  if (argc < 3)
    die("usage: bench_instances mem MODEL N [--shape NAME=DIMS] [--lend] [--bind] | setup MODEL [--shape "
        "NAME=DIMS] [--reps R] "
        "[--run-reps K]");
  Args a;
  a.cmd = argv[1];
  a.model = argv[2];
  int i = 3;
  if (a.cmd == "mem") {
    if (argc < 4) die("bench_instances mem: missing N");
    a.n = std::atoi(argv[3]);
    i = 4;
  }
  for (; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--lend" || k == "--bind") {
      (k == "--lend" ? a.lend : a.bind) = true;
      continue;
    }
    if (i + 1 >= argc) die("bench_instances: " + k + " needs a value");
    const std::string v = argv[++i];
    if (k == "--shape") {
      auto s = parse_shape_arg(v);
      if (!s) die(s.message());
      a.shapes[s->first] = s->second;
    } else if (k == "--reps") {
      a.reps = std::max(1, std::atoi(v.c_str()));
    } else if (k == "--run-reps") {
      a.run_reps = std::max(1, std::atoi(v.c_str()));
    } else {
      die("bench_instances: unknown option " + k);
    }
  }
  return a;
}

LoadOptions load_options(const Args& a) {
  LoadOptions lo;
  lo.factory.plan_shapes = a.shapes;
  lo.use_cache = true;  // the normal path: every instance asks the process-wide FactoryCache
  return lo;
}

std::shared_ptr<const Factory> load_or_die(const Args& a) {
  auto f = load_factory(a.model, load_options(a));
  if (!f) die("bench_instances: " + f.message());
  return *f;
}

// Binds the inputs and runs once; the executor's arena pages are touched by this first run.
void first_run(Executor& ex, const std::vector<Tensor>& inputs) {
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i)
    if (Status s = ex.set_input(i, inputs[i].view()); !s) die("bench_instances: " + s.message());
  if (Status s = ex.run(); !s) die("bench_instances: " + s.message());
}

// The --bind path: inputs bound in place, outputs written into caller buffers that are gone
// after the run.
void first_run_bound(Executor& ex, const std::vector<Tensor>& inputs) {
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i)
    if (Status s = ex.bind_input(i, inputs[i].view()); !s) die("bench_instances: " + s.message());
  // Pages of their own, like weaveinfer's large output frames: gone from the process once dropped.
  std::vector<PageBuffer> outputs;
  for (int k = 0; k < ex.factory().num_outputs(); ++k) {
    auto dims = ex.output_dims(k);
    if (!dims) die("bench_instances: " + dims.message());
    const DType dtype = ex.factory().output_info(k).dtype;
    const std::size_t bytes = static_cast<std::size_t>(dims->numel()) * dtype_size(dtype);
    outputs.push_back(PageBuffer::map(std::max<std::size_t>(bytes, 1)));
    if (outputs.back().data() == nullptr) die("bench_instances: cannot map an output buffer");
    if (Status s = ex.bind_output(k, TensorView{outputs.back().data(), dtype, *dims}); !s)
      die("bench_instances: " + s.message());
  }
  if (Status s = ex.run(); !s) die("bench_instances: " + s.message());
  ex.unbind_all();
}

int run_mem(const Args& a) {
  nlohmann::json j;
  j["bench"] = "instances_mem";
  j["model"] = a.model;
  j["n"] = a.n;
  j["start"] = memory_json(read_proc_memory());
  std::vector<Executor> executors;
  std::vector<Tensor> inputs;
  std::shared_ptr<const Factory> first;
  for (int k = 0; k < a.n; ++k) {
    auto f = load_or_die(a);  // a cache hit for every k > 0
    if (k == 0) {
      first = f;
      auto dims = default_dims(*f);
      if (!dims) die("bench_instances: " + a.model + ": " + dims.message());
      inputs = make_inputs(*f, *dims);
      j["after_load"] = memory_json(read_proc_memory());
      j["param_bytes"] = f->param_bytes();
    }
    ExecutorOptions eo;
    eo.lend_arena = a.lend;
    auto ex = Executor::create(f, eo);
    if (!ex) die("bench_instances: " + ex.message());
    if (a.bind)
      first_run_bound(*ex, inputs);
    else
      first_run(*ex, inputs);
    executors.push_back(std::move(*ex));
  }
  j["end"] = memory_json(read_proc_memory());
  if (!executors.empty()) {
    j["arena_bytes"] = executors.front().arena_bytes();
    // Own input/output buffers of one executor (0 with --bind --lend: everything was bound).
    j["io_bytes"] = executors.front().io_bytes();
    // Kernel scratch (e.g. im2col) the executor owns: 0, it uses its compute slot's.
    j["workspace_bytes"] = executors.front().workspace_bytes();
    j["plan_workspace_bytes"] = executors.front().plan() ? executors.front().plan()->workspace_bytes : 0;
  }
  // The budget's scratch, once per slot whatever N is (pages touched only by slots that ran).
  j["slot_workspace_bytes"] = ThreadBudget::global().workspace_total_bytes();
  j["slot_workspace_buffers"] = ThreadBudget::global().workspace_buffers();
  // With --lend: the arenas the slots lend (executors own none, arena_bytes is 0).
  j["lend"] = a.lend;
  j["bind"] = a.bind;
  j["slot_arena_bytes"] = ThreadBudget::global().arena_total_bytes();
  j["slot_arena_buffers"] = ThreadBudget::global().arena_buffers();
  j["cache_hits"] = FactoryCache::global().hits();
  j["cache_misses"] = FactoryCache::global().misses();
  j["factories_alive"] = FactoryCache::global().live();
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

int run_setup(const Args& a) {
  nlohmann::json j;
  j["bench"] = "instances_setup";
  j["model"] = a.model;
  // Cold: the first instance in this process.
  auto t0 = Clock::now();
  auto f = load_or_die(a);
  const double load_ms = ms_since(t0);
  auto dims = default_dims(*f);
  if (!dims) die("bench_instances: " + a.model + ": " + dims.message());
  auto inputs = make_inputs(*f, *dims);
  auto t1 = Clock::now();
  auto first = Executor::create(f);
  if (!first) die("bench_instances: " + first.message());
  const double create_ms = ms_since(t1);
  auto t2 = Clock::now();
  first_run(*first, inputs);
  const double run_ms = ms_since(t2);
  j["cold"] = {{"load_ms", load_ms},
               {"create_ms", create_ms},
               {"first_run_ms", run_ms},
               {"total_ms", load_ms + create_ms + run_ms},
               {"input_prep_excluded", true}};
  j["arena_bytes"] = first->arena_bytes();
  j["workspace_bytes"] = first->workspace_bytes();
  j["plan_workspace_bytes"] = first->plan() ? first->plan()->workspace_bytes : 0;

  // k-th instance, the whole path: load_factory (a cache hit) + create + first run.
  std::vector<double> hit_ms, kcreate_ms, krun_ms, ktotal_ms;
  for (int r = 0; r < a.run_reps; ++r) {
    auto ta = Clock::now();
    auto fk = load_or_die(a);
    auto tb = Clock::now();
    auto ex = Executor::create(fk);
    if (!ex) die("bench_instances: " + ex.message());
    auto tc = Clock::now();
    first_run(*ex, inputs);
    auto td = Clock::now();
    auto ms = [](auto x, auto y) { return std::chrono::duration<double, std::milli>(y - x).count(); };
    hit_ms.push_back(ms(ta, tb));
    kcreate_ms.push_back(ms(tb, tc));
    krun_ms.push_back(ms(tc, td));
    ktotal_ms.push_back(ms(ta, td));
  }
  j["kth"] = {{"load_factory_hit_ms", median(hit_ms)},
              {"create_ms", median(kcreate_ms)},
              {"first_run_ms", median(krun_ms)},
              {"total_ms", median(ktotal_ms)},
              {"reps", a.run_reps}};

  // Executor::create alone, many times, with up to 8 other executors alive (as when several
  // elements share the model); each is destroyed when it leaves the ring.
  std::deque<Executor> ring;
  std::vector<double> create_only, hit_only;
  for (int r = 0; r < a.reps; ++r) {
    auto ta = Clock::now();
    auto fk = load_factory(a.model, load_options(a));
    auto tb = Clock::now();
    if (!fk) die("bench_instances: " + fk.message());
    auto ex = Executor::create(*fk);
    auto tc = Clock::now();
    if (!ex) die("bench_instances: " + ex.message());
    hit_only.push_back(std::chrono::duration<double, std::milli>(tb - ta).count());
    create_only.push_back(std::chrono::duration<double, std::milli>(tc - tb).count());
    ring.push_back(std::move(*ex));
    if (ring.size() > 8) ring.pop_front();
  }
  std::sort(create_only.begin(), create_only.end());
  j["create"] = {{"median_ms", median(create_only)},
                 {"p90_ms", create_only[create_only.size() * 9 / 10]},
                 {"min_ms", create_only.front()},
                 {"load_factory_hit_median_ms", median(hit_only)},
                 {"reps", a.reps}};
  j["cache_hits"] = FactoryCache::global().hits();
  j["cache_misses"] = FactoryCache::global().misses();
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace
}  // namespace weave::bench

int main(int argc, char** argv) {
  using namespace weave::bench;
  Args a = parse(argc, argv);
  if (a.cmd == "mem") return run_mem(a);
  if (a.cmd == "setup") return run_setup(a);
  die("bench_instances: unknown command '" + a.cmd + "' (mem or setup)");
}
