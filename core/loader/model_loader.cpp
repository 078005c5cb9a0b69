#include "core/loader/model_loader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/artifact/artifact.h"
#include "core/artifact/format.h"
#include "core/import/onnx_import.h"
#include "core/runtime/factory_cache.h"

namespace weave {

bool is_artifact_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const auto& want = artifact_format::kMagic;
  unsigned char magic[sizeof want] = {};
  if (!f.read(reinterpret_cast<char*>(magic), sizeof magic)) return false;
  return std::equal(want.begin(), want.end(), magic);
}

Expected<std::string> model_file_stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return make_error(path, ": ", std::strerror(errno));
  auto ns = [](const timespec& t) { return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec); };
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) +
         ":" + ns(st.st_mtim) + ":" + ns(st.st_ctim);
}

Expected<Graph> load_model_graph(const std::string& path, const CompileOptions& options,
                                 const ReadOptions& read) {
  if (is_artifact_file(path)) return read_artifact(path, read);
  auto g = import_onnx(path);
  if (!g) return g.error();
  auto c = compile_graph(std::move(*g), options);
  if (!c) return c.error().context(path);
  return c;
}

Expected<std::shared_ptr<const Factory>> load_factory(const std::string& path, const LoadOptions& options) {
  auto load = [&]() -> Expected<std::shared_ptr<const Factory>> {
    auto g = load_model_graph(path, options.compile, options.read);
    if (!g) return g.error();
    auto f = Factory::create(std::move(*g), options.factory);
    if (!f) return f.error().context(path);
    return f;
  };
  if (!options.use_cache) return load();
  std::ostringstream opts;
  opts << "fold=" << options.compile.fold_constants << options.compile.fold_batchnorm;
  for (const auto& [name, shape] : options.factory.plan_shapes)
    opts << ";" << name << "=" << shape_str(shape);
  for (const auto& [name, shape] : options.factory.max_shapes)
    opts << ";max:" << name << "=" << shape_str(shape);
  if (options.factory.replan_beyond_bound) opts << ";replan";
  // Where the params live differs (store vs. as loaded), so the two are different factories.
  if (!options.factory.dedup_params) opts << ";no-dedup";
  if (!options.read.use_mmap) opts << ";read";
  // Size and mtime (in the key already) miss a file renamed over another with the same ones.
  auto stamp = model_file_stamp(path);
  if (!stamp) return stamp.error();
  opts << ";file=" << *stamp;
  auto key = model_cache_key(path, opts.str());
  if (!key) return key.error();
  return FactoryCache::global().get(*key, load);
}

}  // namespace weave
