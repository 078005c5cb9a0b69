// Fuzzes the .weave reader: any bytes -> inspect_artifact_bytes and read_artifact_bytes (header,
// section table, metadata, graph, params and names tables, every codec's decoder, blob
// checksums, Graph::validate), then Factory::create on what it reads (kernel create/validate for
// every node, shape planning). A graph that reads back must also serialize and read again.
//
// The custom mutator rewrites the checksums after most mutations (fuzz/artifact_fixup.h), so
// that mutated tables and blobs get past the CRCs; one mutation in eight keeps them as they are
// so the checksum paths stay covered too.
#include <cstring>

#include "core/artifact/artifact.h"
#include "core/runtime/factory.h"
#include "fuzz/artifact_fixup.h"
#include "fuzz/fuzz_util.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed % 8 != 0) weave::fuzz::fix_artifact_checksums(data, size);
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weave;
  const auto bytes = fuzz::as_bytes(data, size);
  auto info = inspect_artifact_bytes(bytes, "fuzz.weave");
  if (!info) fuzz::check_error(info, "inspect_artifact_bytes");

  auto g = read_artifact_bytes(SharedBytes::copy_of(bytes), "fuzz.weave");
  if (!g) {
    fuzz::check_error(g, "read_artifact_bytes");
    return 0;
  }
  fuzz::check(bool(info), "read_artifact_bytes accepted what inspect_artifact_bytes refused");

  WriteOptions wo;
  wo.codec = "none";
  auto again = serialize_artifact(*g, wo);
  fuzz::check(bool(again), "serialize_artifact refused a graph read from an artifact");
  auto g2 = read_artifact_bytes(SharedBytes::copy_of(*again), "again.weave");
  fuzz::check(bool(g2), "read_artifact_bytes refused what serialize_artifact wrote");
  fuzz::check(g2->values.size() == g->values.size() && g2->nodes.size() == g->nodes.size() &&
                  g2->params.size() == g->params.size(),
              "artifact round trip changed the graph");

  FactoryOptions opt;
  opt.dedup_params = false;  // no process-wide state carried from one input to the next
  auto f = Factory::create(std::move(*g), opt);
  if (!f) fuzz::check_error(f, "Factory::create");
  return 0;
}
