#include "core/loader/model_slot.h"

#include <utility>

#include "core/loader/model_loader.h"

namespace weave {

LoadFailure ModelSlot::load(const ModelSettings& settings, bool keep_interface, std::string_view what) {
  publish(nullptr, "");
  key_.clear();
  stamp_.clear();
  error_.clear();
  compiled_now_ = false;
  auto loaded = load_model(settings, what);
  if (!loaded) {
    error_ = loaded.message();
    failure_ = settings.model.empty() ? LoadFailure::no_model : LoadFailure::unreadable;
    return failure_;
  }
  warning_ = loaded->warning;
  ModelInterface names = interface_of(*loaded->factory);
  if (keep_interface && interface_ && names != *interface_) {
    error_ = settings.model + ": the model's inputs or outputs changed";
    failure_ = LoadFailure::interface_changed;
    return failure_;
  }
  key_ = settings.key();
  stamp_ = loaded->stamp;
  compiled_now_ = loaded->compiled_now;
  failure_ = LoadFailure::none;
  interface_ = std::move(names);
  publish(loaded->factory, loaded->artifact_path);
  return failure_;
}

Reload ModelSlot::reload_needed(const ModelSettings& settings) const {
  if (!factory()) return Reload::not_loaded;
  if (key_ != settings.key()) return Reload::settings_changed;
  auto stamp = model_file_stamp(settings.model);
  if (!stamp || *stamp != stamp_) return Reload::file_changed;
  return Reload::none;
}

std::shared_ptr<const Factory> ModelSlot::factory() const {
  std::lock_guard lock(published_);
  return factory_;
}

std::string ModelSlot::artifact_path() const {
  std::lock_guard lock(published_);
  return artifact_;
}

std::string ModelSlot::take_warning() {
  return std::exchange(warning_, std::string());
}

void ModelSlot::publish(std::shared_ptr<const Factory> factory, std::string artifact) {
  std::lock_guard lock(published_);
  factory_ = std::move(factory);
  artifact_ = std::move(artifact);
}

}  // namespace weave
