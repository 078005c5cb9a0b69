// The model a long-lived runner keeps between starts (weaveinfer keeps one per element): what it
// loaded with which settings, whether the next start must load again, and why a load failed.
//
//  - A load replaces the held model; after a failure none is held and error() says why.
//  - With keep_interface, whatever was made for the last model loaded (an element's pads) stays,
//    so a model whose input or output names differ from it is refused, also after a load in
//    between failed (the pads are still those of the last good one).
//  - The running model stays while its file changes; the next start loads again when the file
//    was replaced, rewritten or deleted since it was read, or when the settings changed.
//  - Cache problems never fail a load (the model is compiled in memory): the warning is kept
//    until the caller can tell someone (an element has no bus while its properties are set).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/loader/model_settings.h"
#include "core/runtime/factory.h"

namespace weave {

// Why a ModelSlot holds no model after load().
enum class LoadFailure {
  none,
  no_model,           // the settings name no file
  unreadable,         // the file could not be read, compiled or planned
  interface_changed,  // it loaded, but its inputs or outputs differ from the model it replaces
};

// What the next start must do with the model a slot holds.
enum class Reload {
  none,              // it serves as it is
  not_loaded,        // nothing is held
  settings_changed,  // other model path, codec, cache directory or bounds
  file_changed,      // the file was replaced, rewritten or deleted since it was read
};

class ModelSlot {
 public:
  // Loads settings.model, replacing the held model. `what` names the setting that holds the path
  // in the error for an empty one (e.g. "property 'model'").
  LoadFailure load(const ModelSettings& settings, bool keep_interface, std::string_view what = "model path");
  [[nodiscard]] Reload reload_needed(const ModelSettings& settings) const;

  // Safe from any thread while another one loads: a property may be read at any time.
  [[nodiscard]] std::shared_ptr<const Factory> factory() const;
  // The .weave file read: the model itself, its cache entry, or "" (compiled in memory, or none).
  [[nodiscard]] std::string artifact_path() const;

  // The rest belongs to the thread that loads.
  [[nodiscard]] LoadFailure failure() const { return failure_; }
  [[nodiscard]] const std::string& error() const { return error_; }  // "" after a good load
  [[nodiscard]] bool compiled_now() const { return compiled_now_; }  // the load wrote the cache entry
  // The cache problem the last good load worked around ("" if none); take_warning() hands it
  // out once.
  [[nodiscard]] const std::string& warning() const { return warning_; }
  [[nodiscard]] std::string take_warning();

 private:
  void publish(std::shared_ptr<const Factory> factory, std::string artifact);

  mutable std::mutex published_;  // factory_ and artifact_
  std::shared_ptr<const Factory> factory_;
  std::string artifact_;
  // The input and output names of the last model loaded: what keep_interface holds loads to.
  std::optional<ModelInterface> interface_;
  std::string key_;    // ModelSettings::key() of the load
  std::string stamp_;  // model_file_stamp() of the file as it was read
  LoadFailure failure_ = LoadFailure::none;
  std::string error_;
  std::string warning_;
  bool compiled_now_ = false;
};

}  // namespace weave
