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

#include "core/artifact/artifact.h"
#include "core/common/status.h"
#include "core/compiler/compile.h"
#include "core/graph/graph.h"
#include "core/runtime/factory.h"

namespace weave {

struct LoadOptions {
  CompileOptions compile;  // used for .onnx files
  FactoryOptions factory;
  // How a .weave file is read. The default maps it and uses "none" (uncompressed) params in
  // place: the file must then never be rewritten in place while the Factory lives (a truncated
  // mapping faults: SIGBUS); replace it by writing a new file and renaming it over the old one.
  // use_mmap = false reads a private copy, whatever happens to the file afterwards.
  ReadOptions read;
  bool use_cache = true;  // share one Factory per (file as it is now, options)
};

// True when the file starts with the .weave magic.
[[nodiscard]] bool is_artifact_file(const std::string& path);
// The identity of a model file as it is now: device, inode, size, modification and status
// change times. It changes when the file is rewritten in place or another file is renamed over
// it (even one with the same size and modification time). Errors name a missing file.
[[nodiscard]] Expected<std::string> model_file_stamp(const std::string& path);
[[nodiscard]] Expected<Graph> load_model_graph(const std::string& path, const CompileOptions& options = {},
                                               const ReadOptions& read = {});
[[nodiscard]] Expected<std::shared_ptr<const Factory>> load_factory(const std::string& path,
                                                                    const LoadOptions& options = {});

}  // namespace weave
