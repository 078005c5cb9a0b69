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
  std::string stamp;          // model_file_stamp() of the model before it was read
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
//
// Files that may change under a running model: an ONNX model is read once (its compiled entry
// is what stays in use). A .weave model is read into private memory (options.load.read is
// ignored): users rewrite model files in place, and a mapping of a file truncated under it
// faults. Cache entries are mapped ("none" params used in place): they are only ever written to
// a temporary file renamed into place, so a mapping keeps the old file alive and intact.
[[nodiscard]] Expected<CachedLoad> load_factory_compiled(const std::string& model,
                                                         const CompiledCacheOptions& options);

}  // namespace weave
