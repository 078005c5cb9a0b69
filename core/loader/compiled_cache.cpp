#include "core/loader/compiled_cache.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

#include "core/artifact/artifact.h"
#include "core/runtime/factory_cache.h"
#include "core/runtime/tensor_names.h"

#ifndef WEAVE_VERSION
#define WEAVE_VERSION "unknown"
#endif

namespace weave {

namespace {

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// One compile at a time per process: two elements opening the same new model must not both
// write (and rename over) the entry, which would change its mtime under the first reader.
std::mutex& compile_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::string default_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/weave";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/weave";
  return {};
}

Expected<std::string> compiled_artifact_path(const std::string& model, const std::string& cache_dir,
                                             const std::string& codec) {
  auto key = model_cache_key(model, "codec=" + codec + ";weave=" WEAVE_VERSION);
  if (!key) return key.error();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a64(*key)));
  std::string stem = sanitize_tensor_name(std::filesystem::path(model).stem().string(), 48);
  return (std::filesystem::path(cache_dir) / (stem + "-" + hex + ".weave")).string();
}

Expected<CachedLoad> load_factory_compiled(const std::string& model, const CompiledCacheOptions& options) {
  namespace fs = std::filesystem;
  CachedLoad out;
  std::error_code ec;
  if (!fs::is_regular_file(model, ec)) {
    return make_error(model, ": ", ec ? ec.message() : std::string("no such model file"));
  }
  auto stamp = model_file_stamp(model);
  if (!stamp) return stamp.error();
  out.stamp = *stamp;
  if (is_artifact_file(model) || options.cache_dir.empty()) {
    LoadOptions load = options.load;
    load.read.use_mmap = false;  // a private copy: the user may rewrite the file in place
    auto f = load_factory(model, load);
    if (!f) return f.error();
    out.factory = *f;
    if (is_artifact_file(model)) out.artifact_path = model;
    return out;
  }
  auto entry = compiled_artifact_path(model, options.cache_dir, options.codec);
  if (!entry) return entry.error();

  std::lock_guard<std::mutex> lock(compile_mutex());
  if (fs::is_regular_file(*entry, ec) && is_artifact_file(*entry)) {
    auto f = load_factory(*entry, options.load);
    if (f) {
      out.factory = *f;
      out.artifact_path = *entry;
      return out;
    }
    out.warning = "cache entry " + *entry + " is unreadable (" + f.message() + "); recompiling";
  }
  auto graph = load_model_graph(model, options.load.compile);
  if (!graph) return graph.error();
  std::string problem;
  fs::create_directories(options.cache_dir, ec);
  if (ec) {
    problem = "cannot create cache directory " + options.cache_dir + ": " + ec.message();
  } else {
    WriteOptions wo;
    wo.codec = options.codec;
    Status st = write_artifact(*graph, *entry, wo);
    if (!st) problem = "cannot write cache entry " + *entry + ": " + st.message();
  }
  if (problem.empty()) {
    auto f = load_factory(*entry, options.load);
    if (f) {
      out.factory = *f;
      out.artifact_path = *entry;
      out.compiled_now = true;
      return out;
    }
    problem = "cannot read back cache entry " + *entry + ": " + f.message();
  }
  // The cache failed; run from the graph compiled in memory.
  if (!out.warning.empty()) out.warning += "; ";
  out.warning += problem + "; using the model compiled in memory";
  auto f = Factory::create(std::move(*graph), options.load.factory);
  if (!f) return f.error().context(model);
  out.factory = *f;
  return out;
}

}  // namespace weave
