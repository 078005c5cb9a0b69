// Fuzzes the .npy reader (weave run --input, tests, apps): any bytes -> parse_npy. A file that
// parses must survive encode_npy -> parse_npy unchanged (dtype, dims and every byte).
#include <cstring>

#include "core/common/npy.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weave;
  auto t = parse_npy(fuzz::as_bytes(data, size), "fuzz.npy");
  if (!t) {
    fuzz::check_error(t, "parse_npy");
    return 0;
  }
  const std::vector<std::byte> again = encode_npy(t->view());
  fuzz::check(!again.empty(), "encode_npy refused a tensor parse_npy produced");
  auto u = parse_npy(again, "again.npy");
  fuzz::check(bool(u), "parse_npy refused what encode_npy wrote");
  fuzz::check(u->dtype() == t->dtype() && u->dims() == t->dims(), "npy round trip changed dtype or dims");
  fuzz::check(u->raw().size() == t->raw().size() &&
                  (t->raw().empty() || std::memcmp(u->raw().data(), t->raw().data(), t->raw().size()) == 0),
              "npy round trip changed the data");
  return 0;
}
