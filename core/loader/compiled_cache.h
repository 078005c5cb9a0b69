// The compiled-model cache: opening an ONNX model imports and compiles it, which costs far more
// than reading a .weave artifact. Like an inference engine cache, the first open writes the
// compiled artifact into a cache directory and later opens (this process or the next) read it
// back, as long as the ONNX file is unchanged. The key is the model's canonical path, size and
// modification time, the artifact codec and the Weave version; any change makes a new entry.
// Files are written atomically (temporary file + rename, by write_artifact), so concurrent
// processes never read a half-written artifact. Old entries are left in place.
//
// Cache problems (directory not writable, unknown codec, corrupt entry) never fail a load:
// the model is compiled in memory instead and the problem is reported in `warning`.
#pragma once

#include <memory>
#include <string>

#include "core/artifact/artifact.h"
#include "core/common/status.h"
#include "core/loader/model_loader.h"
#include "core/runtime/factory.h"

namespace weave {

struct CompiledCacheOptions {
  std::string cache_dir;                           // empty: no cache; ONNX models are compiled in memory
  std::string codec = std::string(kDefaultCodec);  // params codec of the written artifact
  LoadOptions load;                                // compile and factory options, factory sharing
};

struct CachedLoad {
  std::shared_ptr<const Factory> factory;
  // The artifact actually read: the model itself when it is a .weave file, the cache entry,
  // or empty when the model was compiled in memory.
  std::string artifact_path;
  bool compiled_now = false;  // this call wrote the cache entry
  std::string warning;        // a cache problem worked around; empty if none
};

// $XDG_CACHE_HOME/weave, else $HOME/.cache/weave, else "" (no cache).
[[nodiscard]] std::string default_cache_dir();

// Where the compiled artifact of `model` lives in `cache_dir` for `codec`:
// "<cache_dir>/<sanitized stem>-<16 hex digits>.weave". Errors if the model file is missing.
[[nodiscard]] Expected<std::string> compiled_artifact_path(const std::string& model,
                                                           const std::string& cache_dir,
                                                           const std::string& codec);

// Opens `model` (.weave or .onnx) through the cache; the Factory itself is shared through
// FactoryCache as with load_factory(). Errors name the model file.
[[nodiscard]] Expected<CachedLoad> load_factory_compiled(const std::string& model,
                                                         const CompiledCacheOptions& options);

}  // namespace weave
