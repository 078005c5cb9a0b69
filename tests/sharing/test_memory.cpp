// Memory evidence for R6, measured by the kernel rather than inferred:
//  - a Factory made from an uncompressed ("none") .weave uses its params straight from the mmap
//    (every param pointer lies inside the file's mapping in /proc/self/maps);
//  - two processes running the same artifact share those pages through the page cache: per
//    /proc/self/smaps, each process's Pss for the mapping is half its Rss;
//  - eight factories of one model loaded without the FactoryCache cost ~1x params of resident
//    memory with dedup and ~8x without (each count taken in a fresh child process, after
//    malloc_trim).
// The numbers are printed (run with --log_level=message) and quoted in docs/cpp-api.md.
#define BOOST_TEST_MODULE memory
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "core/artifact/artifact.h"
#include "core/kernels/registry.h"
#include "core/loader/model_loader.h"
#include "core/params/param_store.h"
#include "core/runtime/executor.h"

namespace fs = std::filesystem;
using namespace weave;

namespace {

std::string model(const std::string& name) {
  const char* dir = std::getenv("WEAVE_MODELS_DIR");
  return (fs::path(dir && *dir ? dir : "models") / (name + ".onnx")).string();
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("weave_memory_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// Address ranges mapping `file` in this process.
std::vector<std::pair<uintptr_t, uintptr_t>> mappings_of(const fs::path& file) {
  const std::string want = fs::canonical(file).string();
  std::vector<std::pair<uintptr_t, uintptr_t>> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos || line.substr(slash) != want) continue;
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream(line) >> std::hex >> lo >> dash >> hi;
    out.emplace_back(lo, hi);
  }
  return out;
}

bool inside(const std::vector<std::pair<uintptr_t, uintptr_t>>& ranges, const SharedBytes& b) {
  const auto p = reinterpret_cast<uintptr_t>(b.data());
  for (auto [lo, hi] : ranges)
    if (p >= lo && p + b.size() <= hi) return true;
  return false;
}

// kB figures from /proc/self/smaps for the mappings of one file, and the whole-process rollup.
struct Memory {
  long map_rss = 0, map_pss = 0, map_shared = 0, map_private = 0;
  long rss = 0, pss = 0;
};

long field_kb(const std::string& line, const char* key) {
  if (line.rfind(key, 0) != 0) return -1;
  return std::strtol(line.c_str() + std::strlen(key), nullptr, 10);
}

Memory measure(const std::string& file = "") {
  Memory m;
  std::string want = file.empty() ? "" : fs::canonical(file).string();
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_file = false;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') < 16) {
      auto slash = line.find('/');
      in_file = !want.empty() && slash != std::string::npos && line.substr(slash) == want;
      continue;
    }
    if (!in_file) continue;
    long v;
    if ((v = field_kb(line, "Rss:")) >= 0) m.map_rss += v;
    if ((v = field_kb(line, "Pss:")) >= 0) m.map_pss += v;
    if ((v = field_kb(line, "Shared_Clean:")) >= 0) m.map_shared += v;
    if ((v = field_kb(line, "Shared_Dirty:")) >= 0) m.map_shared += v;
    if ((v = field_kb(line, "Private_Clean:")) >= 0) m.map_private += v;
    if ((v = field_kb(line, "Private_Dirty:")) >= 0) m.map_private += v;
  }
  std::ifstream rollup("/proc/self/smaps_rollup");
  while (std::getline(rollup, line)) {
    long v;
    if ((v = field_kb(line, "Rss:")) >= 0) m.rss = v;
    if ((v = field_kb(line, "Pss:")) >= 0) m.pss = v;
  }
  return m;
}

// Runs `work` in `n` child processes at once. Each child does its work, says so, waits until
// every child is done (so that all hold their memory together), measures with `probe` and
// exits. Children never return into Boost.Test; a failure in a child shows as ok == false.
struct ChildResult {
  bool ok = false;
  Memory memory;
  long extra = 0;  // a child-defined number
};
std::vector<ChildResult> in_children(int n, const std::function<bool(long& extra)>& work,
                                     const std::function<Memory()>& probe) {
  struct Pipes {
    int up[2];    // child -> parent
    int down[2];  // parent -> child
    pid_t pid;
  };
  std::vector<Pipes> kids(n);
  for (int i = 0; i < n; ++i) {
    Pipes& k = kids[i];
    BOOST_TEST_REQUIRE(::pipe(k.up) == 0);
    BOOST_TEST_REQUIRE(::pipe(k.down) == 0);
    k.pid = ::fork();
    BOOST_TEST_REQUIRE(k.pid >= 0);
    if (k.pid == 0) {
      ::close(k.up[0]);
      ::close(k.down[1]);
      // The parent's ends of earlier children's pipes: holding them would keep those children
      // from ever seeing EOF.
      for (int j = 0; j < i; ++j) {
        ::close(kids[j].up[0]);
        ::close(kids[j].down[1]);
      }
      ChildResult r;
      r.ok = work(r.extra);
      char c = 'R';
      (void)!::write(k.up[1], &c, 1);
      (void)!::read(k.down[0], &c, 1);  // every child is done
      r.memory = probe();
      (void)!::write(k.up[1], &r, sizeof r);
      (void)!::read(k.down[0], &c, 1);  // EOF: the parent has read everyone
      ::_exit(0);
    }
    ::close(k.up[1]);
    ::close(k.down[0]);
  }
  char c;
  for (auto& k : kids) BOOST_TEST(::read(k.up[0], &c, 1) == 1);
  for (auto& k : kids) BOOST_TEST(::write(k.down[1], "M", 1) == 1);
  std::vector<ChildResult> out(n);
  for (int i = 0; i < n; ++i)
    BOOST_TEST(::read(kids[i].up[0], &out[i], sizeof(ChildResult)) == sizeof(ChildResult));
  for (auto& k : kids) {
    ::close(k.down[1]);
    ::close(k.up[0]);
    int status = 0;
    ::waitpid(k.pid, &status, 0);
    BOOST_TEST((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  return out;
}

// Loads the artifact and runs one inference on zeros, touching every param.
// The mmap cases run the reference kernels, which read params in place from the mapping (the
// fast path packs weights into memory of its own and lets the mapping go).
bool run_artifact(const std::string& path) {
  auto g = read_artifact(path);
  if (!g) return false;
  FactoryOptions fo;
  fo.registry = &KernelRegistry::reference();
  auto f = Factory::create(std::move(*g), fo);
  if (!f) return false;
  auto ex = Executor::create(*f);
  if (!ex) return false;
  const TensorInfo& in = (*f)->input_info(0);
  Shape s = in.shape;
  s[0] = 1;
  Tensor x(in.dtype, Dims(s));
  if (!ex->set_input(0, ConstTensorView{x.data(), x.dtype(), x.dims()}).ok() || !ex->run().ok()) return false;
  // Stay alive (with the mapping) until measured: the factory lives in a leaked holder.
  static std::shared_ptr<const Factory> keep;
  keep = *f;
  return true;
}

std::shared_ptr<const Factory> factory_from(const std::string& artifact, bool dedup) {
  auto a = read_artifact(artifact);
  BOOST_TEST_REQUIRE(a.ok(), (a.ok() ? "" : a.message()));
  FactoryOptions fo;
  fo.dedup_params = dedup;
  fo.registry = &KernelRegistry::reference();
  auto f = Factory::create(std::move(*a), fo);
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  return *f;
}

}  // namespace

BOOST_AUTO_TEST_CASE(none_artifact_params_are_used_from_the_mmap) {
  TempDir dir;
  auto g = load_model_graph(model("lstm_lm"));
  BOOST_TEST_REQUIRE(g.ok(), (g.ok() ? "" : g.message()));
  const std::string none = (dir.path / "lm_none.weave").string(),
                    zlib = (dir.path / "lm_zlib.weave").string();
  WriteOptions wo;
  wo.codec = "none";
  BOOST_TEST_REQUIRE(write_artifact(*g, none, wo).ok());
  wo.codec = "zlib";
  BOOST_TEST_REQUIRE(write_artifact(*g, zlib, wo).ok());
  for (bool dedup : {false, true}) {
    auto f = factory_from(none, dedup);
    const auto ranges = mappings_of(none);
    BOOST_TEST_REQUIRE(ranges.size() >= 1u);
    // Params of 64 KiB and more are used in place; smaller ones are copied by the reader so
    // that no mapping is kept resident for a few bytes.
    int in_place = 0;
    for (const Param& p : f->graph().params) {
      const bool big = p.data.size() >= 64 * 1024;
      BOOST_TEST(inside(ranges, p.data) == big,
                 "dedup=" << dedup << " param " << p.value << " of " << p.data.size() << " bytes");
      in_place += big;
      BOOST_TEST(reinterpret_cast<uintptr_t>(p.data.data()) % kAlignment == 0u);
    }
    BOOST_TEST(in_place >= 3);  // embedding, LSTM W/R, head weights
  }
  // The compressed artifact's params are decoded into heap blocks, outside its mapping (if the
  // reader keeps one at all).
  auto f = factory_from(zlib, false);
  const auto ranges = mappings_of(zlib);
  int outside = 0;
  for (const Param& p : f->graph().params) outside += !inside(ranges, p.data);
  BOOST_TEST(outside >= 5);  // the big ones at least (small params may stay "none")
}

BOOST_AUTO_TEST_CASE(two_processes_share_the_artifact_pages) {
  TempDir dir;
  const std::string path = (dir.path / "resnet18_none.weave").string();
  int64_t param_bytes = 0;
  {
    auto g = load_model_graph(model("resnet18"));
    BOOST_TEST_REQUIRE(g.ok(), (g.ok() ? "" : g.message()));
    param_bytes = g->param_bytes();
    WriteOptions wo;
    wo.codec = "none";
    BOOST_TEST_REQUIRE(write_artifact(*g, path, wo).ok());
  }
  const long param_kb = static_cast<long>(param_bytes / 1024);
  const long file_kb = static_cast<long>(fs::file_size(path) / 1024);
  auto work = [&](long&) { return run_artifact(path); };
  auto probe = [&] { return measure(path); };

  // One process alone: Pss == Rss (nobody to share with).
  auto one = in_children(1, work, probe);
  BOOST_TEST_REQUIRE(one[0].ok);
  const Memory& m1 = one[0].memory;
  BOOST_TEST_MESSAGE("artifact " << file_kb << " kB (params " << param_kb << " kB); 1 process: mapping Rss "
                                 << m1.map_rss << " kB, Pss " << m1.map_pss << " kB; process Rss " << m1.rss
                                 << " kB, Pss " << m1.pss << " kB");
  BOOST_TEST(m1.map_rss >= param_kb * 95 / 100);  // every param was read from the mapping
  BOOST_TEST(m1.map_rss <= file_kb + 4);
  BOOST_TEST(m1.map_pss >= m1.map_rss - 4);

  // Two processes: each is charged half of the pages both map.
  auto two = in_children(2, work, probe);
  for (int i = 0; i < 2; ++i) {
    BOOST_TEST_REQUIRE(two[i].ok);
    const Memory& m = two[i].memory;
    BOOST_TEST_MESSAGE("2 processes, #" << i << ": mapping Rss " << m.map_rss << " kB, Pss " << m.map_pss
                                        << " kB, Shared " << m.map_shared << " kB, Private " << m.map_private
                                        << " kB; process Rss " << m.rss << " kB, Pss " << m.pss << " kB");
    BOOST_TEST(m.map_rss >= param_kb * 95 / 100);
    BOOST_TEST(m.map_pss * 2 <= m.map_rss + m.map_rss / 20);  // ~Rss/2
    BOOST_TEST(m.map_pss * 2 >= m.map_rss - m.map_rss / 20);
    BOOST_TEST(m.map_shared >= m.map_rss * 95 / 100);
    BOOST_TEST(m.map_private <= m.map_rss / 20);
  }
}

BOOST_AUTO_TEST_CASE(eight_factories_cost_one_set_of_params_with_dedup) {
  // What one factory holds of the weights: params left plus packed weights (the fast path packs
  // convolutions, Winograd's transformed 3x3 weights at 4x the bytes, and drops the params).
  long param_kb = 0, weights_kb = 0;
  {
    LoadOptions o;
    o.use_cache = false;
    auto f = load_factory(model("resnet18"), o);
    BOOST_TEST_REQUIRE(f.ok());
    param_kb = static_cast<long>((*f)->param_bytes() / 1024);
    weights_kb = static_cast<long>(((*f)->resident_param_bytes() + (*f)->packed_bytes()) / 1024);
  }
  // Each child: load 8 factories from the .onnx (no FactoryCache), report the Rss growth.
  auto load8 = [&](bool dedup) {
    return [dedup](long& grown_kb) {
      // malloc_trim hands freed heap back to the kernel, so Rss counts live blocks only (not
      // import transients glibc keeps, nor meson's MALLOC_PERTURB_ fills).
      ::malloc_trim(0);
      const long before = measure().rss;
      static std::vector<std::shared_ptr<const Factory>> keep;
      for (int i = 0; i < 8; ++i) {
        LoadOptions o;
        o.use_cache = false;
        o.factory.dedup_params = dedup;
        auto f = load_factory(model("resnet18"), o);
        if (!f) return false;
        keep.push_back(*f);
      }
      ::malloc_trim(0);
      grown_kb = measure().rss - before;
      // The store shared bytes (params or packed weights) exactly when deduplicating.
      const std::size_t saved = ParamStore::global().stats().bytes_saved();
      return dedup ? saved > 0 : saved == 0;
    };
  };
  auto probe = [] { return measure(); };
  auto with = in_children(1, load8(true), probe);
  auto without = in_children(1, load8(false), probe);
  BOOST_TEST_REQUIRE(with[0].ok);
  BOOST_TEST_REQUIRE(without[0].ok);
  BOOST_TEST_MESSAGE("resnet18 params " << param_kb << " kB, held by one factory as " << weights_kb
                                        << " kB; 8 factories grow Rss by " << with[0].extra
                                        << " kB with dedup, " << without[0].extra << " kB without");
  // Eight resident copies without, one with (plus graphs, kernels and plans, which are small).
  BOOST_TEST(weights_kb >= param_kb * 99 / 100);
  BOOST_TEST(without[0].extra >= 8 * weights_kb * 95 / 100);
  BOOST_TEST(with[0].extra <= weights_kb * 3 / 2);
  BOOST_TEST(with[0].extra * 5 < without[0].extra);
}
