// Opening a model file of either kind, the way the CLI, the GStreamer element and applications
// do: a `.weave` artifact is read (mmap'd, params used in place when uncompressed); anything
// else is imported as ONNX and compiled in memory. load_factory() goes through the
// process-wide FactoryCache, so every caller asking for the same file and options shares one
// Factory.
//
// This lives in the weave-import library because the ONNX path needs protobuf; a runtime-only
// application reads artifacts with read_artifact() + Factory::create() directly.
#pragma once

#include <memory>
#include <string>

#include "core/common/status.h"
#include "core/compiler/compile.h"
#include "core/graph/graph.h"
#include "core/runtime/factory.h"

namespace weave {

struct LoadOptions {
  CompileOptions compile;  // used for .onnx files
  FactoryOptions factory;
  bool use_cache = true;  // share one Factory per (file, size, mtime, options)
};

// True when the file starts with the .weave magic.
[[nodiscard]] bool is_artifact_file(const std::string& path);
[[nodiscard]] Expected<Graph> load_model_graph(const std::string& path, const CompileOptions& options = {});
[[nodiscard]] Expected<std::shared_ptr<const Factory>> load_factory(const std::string& path,
                                                                    const LoadOptions& options = {});

}  // namespace weave
