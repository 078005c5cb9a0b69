// Fuzzes the shape text users type: weaveinfer's `max-shape` entries and `weave compile --shape`
// ("1x3x224x224", also comma separated). Text that parses must print and parse back the same,
// and, used as the planned bound of a small model with dynamic height and width (what
// weaveinfer does with max-shape), must give a Factory or a clean error: a hostile bound never
// overflows the planner or crashes it.
#include <string>

#include "core/common/dims.h"
#include "core/runtime/factory.h"
#include "fuzz/fuzz_util.h"
#include "tests/runtime/runtime_graphs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weave;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Shape shape;
  if (!parse_shape(text, shape)) return 0;
  fuzz::check(shape.size() <= static_cast<std::size_t>(kMaxRank),
              "parse_shape accepted a rank above kMaxRank");
  Shape again;
  fuzz::check(parse_shape(shape_str(shape), again), "parse_shape refused what shape_str printed");
  fuzz::check(again == shape, "shape text round trip changed the shape");

  FactoryOptions opt;
  opt.dedup_params = false;
  opt.max_shapes["x"] = shape;
  auto f = Factory::create(test::conv_graph(), opt);
  if (!f) fuzz::check_error(f, "Factory::create with a max-shape bound");
  return 0;
}
