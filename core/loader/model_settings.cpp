#include "core/loader/model_settings.h"

namespace weave {

Expected<ShapeBounds> parse_shape_bounds(std::string_view text) {
  ShapeBounds out;
  std::string entry;
  auto flush = [&]() -> Status {
    if (entry.empty()) return {};
    const auto eq = entry.rfind('=');
    Shape shape;
    if (eq == std::string::npos || eq == 0 || !parse_shape(entry.substr(eq + 1), shape) || shape.empty())
      return make_error("expected NAME=DIMS (e.g. x=1x3x960x960), got '", entry, "'");
    out[entry.substr(0, eq)] = shape;
    entry.clear();
    return {};
  };
  for (char c : text) {
    if (c == ';' || c == ' ' || c == '\t' || c == '\n') {
      WEAVE_TRY(flush());
    } else {
      entry += c;
    }
  }
  WEAVE_TRY(flush());
  return out;
}

std::string shape_bounds_text(const ShapeBounds& bounds) {
  std::string s;
  for (const auto& [name, shape] : bounds) s += (s.empty() ? "" : ";") + name + "=" + shape_str(shape);
  return s;
}

std::string ModelSettings::key() const {
  return model + "|" + codec + "|" + cache_dir + "|" + shape_bounds_text(bounds);
}

Expected<CachedLoad> load_model(const ModelSettings& settings, std::string_view what) {
  if (settings.model.empty()) return make_error("no model set (", what, ")");
  CompiledCacheOptions opts;
  opts.cache_dir = settings.cache_dir;
  opts.codec = settings.codec;
  opts.load.factory.max_shapes = settings.bounds;
  auto loaded = load_factory_compiled(settings.model, opts);
  if (!loaded) return loaded.error();
  if (loaded->factory->num_inputs() == 0 || loaded->factory->num_outputs() == 0)
    return make_error(settings.model, ": the model needs at least one input and one output");
  return loaded;
}

ModelInterface interface_of(const Factory& f) {
  ModelInterface m;
  for (const TensorInfo& i : f.inputs()) m.inputs.push_back(i.name);
  for (const TensorInfo& o : f.outputs()) m.outputs.push_back(o.name);
  return m;
}

bool same_interface(const Factory& a, const Factory& b) {
  return interface_of(a) == interface_of(b);
}

}  // namespace weave
