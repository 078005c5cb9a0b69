// What an element (or an application) needs to open a model the way weaveinfer does: the model
// path, the compiled-artifact cache, the params codec and the planned bounds of dynamic input
// dims, gathered in one value. The settings key says when a loaded Factory can be kept (same key)
// and the loader adds the checks every runner of a model needs (at least one input and output).
//
// Bounds ("max shapes") are written "x=1x3x960x960;y=2x8": entries separated by ';' or white
// space, each NAME=DIMS with NAME a model input's own name.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/dims.h"
#include "core/common/status.h"
#include "core/loader/compiled_cache.h"
#include "core/runtime/factory.h"

namespace weave {

using ShapeBounds = std::map<std::string, Shape>;

// Parses bounds text; empty text is no bound. Errors quote the malformed entry.
[[nodiscard]] Expected<ShapeBounds> parse_shape_bounds(std::string_view text);
// The inverse: "x=1x3x960x960;y=2x8" (names in order), "" for no bound.
[[nodiscard]] std::string shape_bounds_text(const ShapeBounds& bounds);

struct ModelSettings {
  std::string model;      // .onnx or .weave path
  std::string cache_dir;  // compiled-artifact cache; empty = compile in memory
  std::string codec = std::string(kDefaultCodec);
  ShapeBounds bounds;  // planned upper bounds of dynamic input dims

  // model|codec|cache dir|bounds: a loaded Factory serves while the key stays the same.
  [[nodiscard]] std::string key() const;
};

// Opens the model of `settings` through the compiled cache (and the process-wide FactoryCache).
// A model without inputs or outputs is an error naming the file; an empty path says which
// setting is missing (`what`, e.g. "property 'model'").
[[nodiscard]] Expected<CachedLoad> load_model(const ModelSettings& settings,
                                              std::string_view what = "model path");

// What pads (or bindings) are made for: a model's input and output names, in order.
struct ModelInterface {
  std::vector<std::string> inputs, outputs;
  friend bool operator==(const ModelInterface&, const ModelInterface&) = default;
};
[[nodiscard]] ModelInterface interface_of(const Factory& f);
// Same input and output names in the same order: pads (or bindings) made for `a` fit `b`.
[[nodiscard]] bool same_interface(const Factory& a, const Factory& b);

}  // namespace weave
