// One Factory shared by many threads (R3, R9): eight threads each create their own Executor
// from one shared Factory of a real model and run it repeatedly on different inputs (and
// different input shapes, so that plans are made and cached concurrently); every output must be
// bit-identical to the single-threaded result for the same input. Also: concurrent first loads
// of one file give one Factory. Run under ThreadSanitizer by scripts/tsan.sh.
//
// WEAVE_THREAD_TEST_ITERS sets the runs per thread (default 3; the TSAN job uses fewer).
#define BOOST_TEST_MODULE factory_threads
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/loader/model_loader.h"
#include "core/runtime/executor.h"
#include "core/threads/thread_budget.h"

namespace fs = std::filesystem;
using namespace weave;

namespace {

constexpr int kThreads = 8;

int iterations() {
  const char* v = std::getenv("WEAVE_THREAD_TEST_ITERS");
  const int n = v ? std::atoi(v) : 0;
  return n > 0 ? n : 3;
}

std::string model_path(const char* file) {
  const char* dir = std::getenv("WEAVE_MODELS_DIR");
  return (fs::path(dir && *dir ? dir : "models") / file).string();
}

std::shared_ptr<const Factory> load(const char* file) {
  const std::string path = model_path(file);
  BOOST_TEST_REQUIRE(fs::exists(path), path << " is missing (exported by the build)");
  auto f = load_factory(path);
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  return *f;
}

// Deterministic pseudo-random values in [-1, 1).
Tensor random_floats(Dims dims, uint32_t seed) {
  Tensor t(DType::float32, dims);
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.as<float>()[i] = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.f;
  }
  return t;
}

Tensor random_tokens(Dims dims, uint32_t seed, int64_t vocab) {
  Tensor t(DType::int64, dims);
  uint32_t s = seed * 2246822519u + 7;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.as<int64_t>()[i] = static_cast<int64_t>((s >> 8) % static_cast<uint32_t>(vocab));
  }
  return t;
}

using Case = std::vector<Tensor>;  // one tensor per model input

Case one_input(Tensor t) {
  Case c;
  c.push_back(std::move(t));
  return c;
}

std::vector<ConstTensorView> views(const Case& c) {
  std::vector<ConstTensorView> v;
  for (const Tensor& t : c) v.push_back(t.view());
  return v;
}

bool same(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].dtype() != b[i].dtype() || !(a[i].dims() == b[i].dims()) || a[i].bytes() != b[i].bytes())
      return false;
    if (std::memcmp(a[i].data(), b[i].data(), a[i].bytes()) != 0) return false;
  }
  return true;
}

// The references: every case run alone on one thread with a fresh executor.
std::vector<std::vector<Tensor>> references(const std::shared_ptr<const Factory>& f,
                                            const std::vector<Case>& cases) {
  std::vector<std::vector<Tensor>> refs;
  for (const Case& c : cases) {
    ExecutorOptions eo;
    eo.threads = 1;
    auto ex = Executor::create(f, eo);
    BOOST_TEST_REQUIRE(ex.ok(), (ex.ok() ? "" : ex.message()));
    auto outs = ex->run(views(c));
    BOOST_TEST_REQUIRE(outs.ok(), (outs.ok() ? "" : outs.message()));
    for (const Tensor& t : *outs)
      if (t.dtype() == DType::float32)
        for (int64_t i = 0; i < t.numel(); ++i) BOOST_TEST_REQUIRE(std::isfinite(t.as<float>()[i]));
    refs.push_back(std::move(*outs));
  }
  return refs;
}

struct Tally {
  std::atomic<int> runs{0};
  std::atomic<int> wrong{0};
  std::atomic<int> errors{0};
};

// kThreads threads, each with its own Executor of the one Factory; thread t runs case
// (t + r) % cases on run r, alternating the stateless and the stateful API.
void hammer(const std::shared_ptr<const Factory>& f, const std::vector<Case>& cases,
            const std::vector<std::vector<Tensor>>& refs, Tally& tally) {
  const int iters = iterations();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto ex = Executor::create(f);  // default options: a share of the process-wide budget
      if (!ex) {
        ++tally.errors;
        return;
      }
      for (int r = 0; r < iters; ++r) {
        const std::size_t k = static_cast<std::size_t>(t + r) % cases.size();
        std::vector<Tensor> outs;
        if (r % 2 == 0) {
          auto o = ex->run(views(cases[k]));
          if (!o) {
            ++tally.errors;
            continue;
          }
          outs = std::move(*o);
        } else {
          bool ok = true;
          for (std::size_t i = 0; i < cases[k].size(); ++i)
            ok = ok && ex->set_input(static_cast<int>(i), cases[k][i].view()).ok();
          ok = ok && ex->run().ok();
          for (int i = 0; ok && i < f->num_outputs(); ++i) {
            auto v = ex->output(i);
            ok = v.ok();
            if (ok) outs.push_back(Tensor::copy_of(*v));
          }
          if (!ok) {
            ++tally.errors;
            continue;
          }
        }
        ++tally.runs;
        if (!same(outs, refs[k])) ++tally.wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
}

}  // namespace

BOOST_AUTO_TEST_CASE(eight_threads_share_one_squeezenet_factory) {
  auto f = load("squeezenet1_1.onnx");
  // Two batch-1 images and one batch of two: two shapes, planned once each and shared.
  std::vector<Case> cases;
  cases.push_back(one_input(random_floats(Dims{1, 3, 224, 224}, 1)));
  cases.push_back(one_input(random_floats(Dims{2, 3, 224, 224}, 2)));
  cases.push_back(one_input(random_floats(Dims{1, 3, 224, 224}, 3)));
  auto refs = references(f, cases);
  BOOST_TEST_REQUIRE(refs[0][0].numel() == 1000);
  BOOST_TEST_REQUIRE(refs[1][0].numel() == 2000);
  BOOST_TEST(!same(refs[0], refs[2]));  // different inputs really give different outputs
  Tally tally;
  hammer(f, cases, refs, tally);
  BOOST_TEST(tally.errors.load() == 0);
  BOOST_TEST(tally.runs.load() == kThreads * iterations());
  BOOST_TEST(tally.wrong.load() == 0);
  BOOST_TEST(ThreadBudget::global().busy() == 0);
}

BOOST_AUTO_TEST_CASE(eight_threads_share_one_lstm_factory_across_many_shapes) {
  auto f = load("lstm_lm.onnx");
  BOOST_TEST_REQUIRE(f->num_inputs() == 3);
  // More distinct (batch, seq) shapes than the Factory's small plan cache keeps, so plans are
  // made, shared and evicted while other threads use them.
  const int64_t shapes[][2] = {{1, 3}, {2, 5}, {1, 7}, {3, 2}, {2, 1},
                               {1, 4}, {4, 3}, {2, 6}, {3, 3}, {1, 1}};
  std::vector<Case> cases;
  uint32_t seed = 10;
  for (auto [batch, seq] : shapes) {
    Case c;
    c.push_back(random_tokens(Dims{batch, seq}, seed++, 64));
    c.push_back(random_floats(Dims{1, batch, 128}, seed++));
    c.push_back(random_floats(Dims{1, batch, 128}, seed++));
    cases.push_back(std::move(c));
  }
  auto refs = references(f, cases);
  BOOST_TEST_REQUIRE(refs[0].size() == 3u);
  Tally tally;
  hammer(f, cases, refs, tally);
  BOOST_TEST(tally.errors.load() == 0);
  BOOST_TEST(tally.runs.load() == kThreads * iterations());
  BOOST_TEST(tally.wrong.load() == 0);
}

BOOST_AUTO_TEST_CASE(concurrent_first_loads_of_one_file_give_one_factory) {
  const std::string path = model_path("lstm_lm.onnx");
  std::vector<std::shared_ptr<const Factory>> got(kThreads);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto f = load_factory(path);
      if (f)
        got[t] = *f;
      else
        ++errors;
    });
  for (auto& th : threads) th.join();
  BOOST_TEST(errors.load() == 0);
  for (int t = 1; t < kThreads; ++t) BOOST_TEST(got[t].get() == got[0].get());
}
