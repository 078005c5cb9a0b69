// FrameRunner: one model run per set of mapped input frames, outputs written into the caller's
// memory, copies and runs counted -- what weaveinfer's task does per frame, without GStreamer --
// and WorkTime, the per-frame time statistics of the other elements.
#define BOOST_TEST_MODULE frame_runner
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <vector>

#include "core/stream/frame_runner.h"
#include "core/stream/work_time.h"
#include "tests/runtime/runtime_graphs.h"

using weave::DType;
using weave::Expected;
using weave::stream::FrameRunner;
using weave::stream::InputFrame;

namespace {

// The error of a failed result, "" for a good one (BOOST_TEST evaluates its message either way).
template <class T>
std::string why(const weave::Expected<T>& e) {
  return e.ok() ? std::string() : e.message();
}

std::shared_ptr<const weave::Factory> add_factory() {
  auto f = weave::Factory::create(weave::test::two_input_graph());
  BOOST_TEST_REQUIRE(f.ok());
  return *f;
}

// 64-byte aligned storage with an optional byte offset, to make misaligned inputs on purpose.
struct Buf {
  explicit Buf(std::size_t floats, std::size_t offset = 0) : raw(floats * 4 + 128), offset(offset) {}
  std::byte* at() {
    auto p = reinterpret_cast<std::uintptr_t>(raw.data());
    return raw.data() + ((64 - p % 64) % 64) + offset;
  }
  std::vector<std::byte> raw;
  std::size_t offset;
};

InputFrame frame(Buf& b, const std::vector<float>& v, bool merged = false) {
  std::memcpy(b.at(), v.data(), v.size() * 4);
  const auto rows = static_cast<int64_t>(v.size() / 4);
  return InputFrame{weave::ConstTensorView{b.at(), DType::float32, weave::Dims{rows, 4}}, v.size() * 4,
                    merged};
}

// Output memory from plain vectors; remembers what it was asked for.
struct VectorSink final : weave::stream::OutputSink {
  std::vector<std::vector<float>> outs;
  std::vector<weave::Dims> asked;
  bool fail = false;
  Expected<std::span<std::byte>> allocate(int index, DType dtype, const weave::Dims& dims,
                                          std::size_t bytes) override {
    if (fail) return weave::make_error("no memory for output ", index);
    BOOST_TEST((dtype == DType::float32));
    if (outs.size() <= static_cast<std::size_t>(index)) outs.resize(static_cast<std::size_t>(index) + 1);
    asked.push_back(dims);
    outs[static_cast<std::size_t>(index)].assign(bytes / 4, -1.f);
    return std::as_writable_bytes(std::span(outs[static_cast<std::size_t>(index)]));
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(aligned_inputs_are_read_in_place_and_outputs_written_into_the_callers_memory) {
  auto runner = FrameRunner::create(add_factory(), {});
  BOOST_TEST_REQUIRE(runner.ok());
  Buf a(8), b(8);
  InputFrame in[2] = {frame(a, {1, 2, 3, 4, 5, 6, 7, 8}), frame(b, {10, 20, 30, 40, 50, 60, 70, 80})};
  VectorSink sink;
  auto dims = (*runner)->run(in, sink);
  BOOST_TEST_REQUIRE(dims.ok(), why(dims));
  BOOST_TEST(dims->size() == 1u);
  BOOST_TEST(((*dims)[0] == weave::Dims{2, 4}));
  BOOST_TEST(sink.outs[0] == (std::vector<float>{11, 22, 33, 44, 55, 66, 77, 88}));
  const auto& s = (*runner)->stats();
  BOOST_TEST(s.processed.load() == 1u);
  BOOST_TEST(s.input_copies.load() == 0u);
  BOOST_TEST(s.output_copies.load() == 0u);
  BOOST_TEST(s.mean_ms() >= 0.0);
}

BOOST_AUTO_TEST_CASE(new_dims_every_frame_get_outputs_of_their_size) {
  auto runner = FrameRunner::create(add_factory(), {});
  BOOST_TEST_REQUIRE(runner.ok());
  for (int rows = 1; rows <= 3; ++rows) {
    std::vector<float> x(static_cast<std::size_t>(rows) * 4, 1.f), y(x.size(), 2.f);
    Buf a(x.size()), b(y.size());
    InputFrame in[2] = {frame(a, x), frame(b, y)};
    VectorSink sink;
    auto dims = (*runner)->run(in, sink);
    BOOST_TEST_REQUIRE(dims.ok(), why(dims));
    BOOST_TEST(((*dims)[0] == weave::Dims{rows, 4}));
    BOOST_TEST((sink.asked[0] == weave::Dims{rows, 4}));
    BOOST_TEST(sink.outs[0] == std::vector<float>(x.size(), 3.f));
  }
}

BOOST_AUTO_TEST_CASE(misaligned_and_merged_inputs_are_counted_as_copies) {
  auto stats = std::make_shared<weave::stream::FrameStats>();
  auto runner = FrameRunner::create(add_factory(), {}, stats);
  BOOST_TEST_REQUIRE(runner.ok());
  Buf a(4, 1), b(4);  // a is one byte off
  InputFrame in[2] = {frame(a, {1, 2, 3, 4}), frame(b, {1, 1, 1, 1}, true)};
  VectorSink sink;
  auto dims = (*runner)->run(in, sink);
  BOOST_TEST_REQUIRE(dims.ok(), why(dims));
  BOOST_TEST(sink.outs[0] == (std::vector<float>{2, 3, 4, 5}));
  BOOST_TEST(stats->input_copies.load() == 2u);  // a copied by the executor, b merged by the caller
  BOOST_TEST(stats->bytes_copied.load() == 32u);
  // The statistics are the caller's: a new runner adds to them.
  auto again = FrameRunner::create(add_factory(), {}, stats);
  BOOST_TEST_REQUIRE(again.ok());
  BOOST_TEST_REQUIRE((*again)->run(in, sink).ok());
  BOOST_TEST(stats->processed.load() == 2u);
}

BOOST_AUTO_TEST_CASE(errors_name_the_problem_and_leave_nothing_bound) {
  auto runner = FrameRunner::create(add_factory(), {});
  BOOST_TEST_REQUIRE(runner.ok());
  Buf a(4), b(4);
  InputFrame in[2] = {frame(a, {1, 2, 3, 4}), frame(b, {1, 1, 1, 1})};
  auto one = (*runner)->run(std::span(in, 1), *std::make_unique<VectorSink>());
  BOOST_TEST_REQUIRE(!one.ok());
  BOOST_TEST(one.message().find("takes 2 inputs, got 1") != std::string::npos, one.message());
  VectorSink failing;
  failing.fail = true;
  auto r = (*runner)->run(in, failing);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.message().find("no memory for output 0") != std::string::npos, r.message());
  BOOST_TEST((*runner)->stats().processed.load() == 0u);
  // The inputs of the failed run were unbound: memory that changed is read afresh.
  std::vector<float> x{5, 5, 5, 5};
  Buf c(4);
  InputFrame next[2] = {frame(c, x), frame(b, {1, 1, 1, 1})};
  std::memset(a.at(), 0, 16);
  VectorSink sink;
  BOOST_TEST_REQUIRE((*runner)->run(next, sink).ok());
  BOOST_TEST(sink.outs[0] == std::vector<float>(4, 6.f));
}

BOOST_AUTO_TEST_CASE(work_time_adds_pieces_and_means_per_frame) {
  weave::stream::WorkTime w;
  BOOST_TEST(w.mean_ms() == 0.0);
  const auto start = weave::stream::WorkTime::Clock::now() - std::chrono::milliseconds(10);
  w.add_since(start);  // two pieces of work for one frame
  w.add_since(start);
  w.count_frame();
  BOOST_TEST(w.frames() == 1u);
  BOOST_TEST(w.total_ms() >= 20.0);
  BOOST_TEST(w.mean_ms() == w.total_ms());
  w.count_frame();
  BOOST_TEST(w.mean_ms() == w.total_ms() / 2);
  w.reset();
  BOOST_TEST(w.frames() == 0u);
  BOOST_TEST(w.total_ms() == 0.0);
}
