// Zero-copy binding (R7) and dynamic dims within a planned bound (R8) on a small conv graph
// run by the real kernels: caller buffers are read and written in place, copies are counted,
// and every misuse is a clear error.
#define BOOST_TEST_MODULE zero_copy
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/runtime/executor.h"
#include "core/runtime/factory.h"
#include "tests/runtime/runtime_graphs.h"

using namespace weave;
using weave::test::conv_graph;
using weave::test::conv_graph_reference;
using weave::test::ramp;

namespace {

std::shared_ptr<const Factory> conv_factory(FactoryOptions o = {}) {
  if (o.plan_shapes.empty() && o.max_shapes.empty()) o.plan_shapes["x"] = {1, 2, 4, 5};
  auto f = Factory::create(conv_graph(), o);
  BOOST_TEST_REQUIRE(f.ok(), (f.ok() ? "" : f.message()));
  return *f;
}

Executor make_executor(const std::shared_ptr<const Factory>& f, ExecutorOptions eo = {}) {
  auto ex = Executor::create(f, std::move(eo));
  BOOST_TEST_REQUIRE(ex.ok(), (ex.ok() ? "" : ex.message()));
  return std::move(*ex);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

void check_close(const float* got, const std::vector<float>& want) {
  for (std::size_t i = 0; i < want.size(); ++i) BOOST_TEST_REQUIRE(std::fabs(got[i] - want[i]) < 1e-5f);
}

// 64-byte aligned float storage with room for an offset.
struct Buf {
  explicit Buf(std::size_t floats) : bytes(floats * 4 + 64), storage(bytes) {}
  float* at(std::size_t byte_offset = 0) { return reinterpret_cast<float*>(storage.data() + byte_offset); }
  std::size_t bytes;
  AlignedBuffer storage;
};

}  // namespace

BOOST_AUTO_TEST_CASE(bound_input_is_read_in_place_not_copied) {
  auto f = conv_factory();
  Executor ex = make_executor(f);
  Buf in(40);
  std::vector<float> x = ramp(40), relu, y;
  std::memcpy(in.at(), x.data(), 160);
  BOOST_TEST_REQUIRE(ex.bind_input("x", ConstTensorView{in.at(), DType::float32, Dims{1, 2, 4, 5}}).ok());
  BOOST_TEST_REQUIRE(ex.run().ok());
  conv_graph_reference(x, 4, 5, relu, y);
  check_close(ex.output("y")->as<float>(), y);
  BOOST_TEST(ex.stats().last_run.input_copies == 0u);
  BOOST_TEST(ex.stats().last_run.bytes_copied == 0u);
  // The executor reads the caller's memory on every run: change it without re-binding.
  for (std::size_t i = 0; i < 40; ++i) x[i] = -x[i] + 0.3f;
  std::memcpy(in.at(), x.data(), 160);
  BOOST_TEST_REQUIRE(ex.run().ok());
  conv_graph_reference(x, 4, 5, relu, y);
  check_close(ex.output("y")->as<float>(), y);
  BOOST_TEST(ex.stats().total.input_copies == 0u);
  // set_input replaces the binding with a copy, counted.
  BOOST_TEST_REQUIRE(ex.set_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, 4, 5}}).ok());
  std::memset(in.at(), 0, 160);  // the old binding must no longer be read
  BOOST_TEST_REQUIRE(ex.run().ok());
  check_close(ex.output("y")->as<float>(), y);
  BOOST_TEST(ex.stats().last_run.input_copies == 1u);
  BOOST_TEST(ex.stats().last_run.bytes_copied == 160u);
  BOOST_TEST(ex.stats().runs == 3u);
}

BOOST_AUTO_TEST_CASE(bound_outputs_are_written_in_place_and_read_by_later_steps) {
  auto f = conv_factory();
  Executor ex = make_executor(f);
  std::vector<float> x = ramp(40, 0.05f), relu, y;
  conv_graph_reference(x, 4, 5, relu, y);
  Buf yb(60), rb(60);
  for (int i = 0; i < 60; ++i) yb.at()[i] = rb.at()[i] = std::numeric_limits<float>::quiet_NaN();
  BOOST_TEST_REQUIRE(ex.set_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, 4, 5}}).ok());
  BOOST_TEST_REQUIRE(ex.bind_output("y", TensorView{yb.at(), DType::float32, Dims{1, 3, 4, 5}}).ok());
  BOOST_TEST_REQUIRE(ex.bind_output("relu", TensorView{rb.at(), DType::float32, Dims{1, 3, 4, 5}}).ok());
  BOOST_TEST_REQUIRE(ex.run().ok());
  check_close(rb.at(), relu);
  // Add read "relu" from the caller's buffer: the arena slot was never written.
  check_close(yb.at(), y);
  BOOST_TEST(ex.output("y")->data == static_cast<const void*>(yb.at()));
  BOOST_TEST(ex.output("relu")->data == static_cast<const void*>(rb.at()));
  BOOST_TEST(ex.stats().last_run.output_copies == 0u);
  BOOST_TEST(ex.stats().last_run.input_copies == 1u);
  // Unbound again: results go back to the executor's memory.
  ex.unbind_output(0);
  std::memset(yb.at(), 0, 240);
  BOOST_TEST_REQUIRE(ex.run().ok());
  BOOST_TEST(ex.output("y")->data != static_cast<const void*>(yb.at()));
  check_close(ex.output("y")->as<float>(), y);
  BOOST_TEST(yb.at()[0] == 0.f);
}

BOOST_AUTO_TEST_CASE(an_output_known_at_plan_time_is_copied_and_counted) {
  auto f = conv_factory();
  Executor ex = make_executor(f);
  std::vector<float> x = ramp(40);
  alignas(64) int64_t shape[4] = {-1, -1, -1, -1};
  BOOST_TEST_REQUIRE(ex.bind_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, 4, 5}}).ok());
  BOOST_TEST_REQUIRE(ex.bind_output("x_shape", TensorView{shape, DType::int64, Dims{4}}).ok());
  BOOST_TEST_REQUIRE(ex.run().ok());
  BOOST_TEST(shape[0] == 1);
  BOOST_TEST(shape[1] == 2);
  BOOST_TEST(shape[2] == 4);
  BOOST_TEST(shape[3] == 5);
  BOOST_TEST(ex.stats().last_run.output_copies == 1u);
  BOOST_TEST(ex.stats().last_run.input_copies == 0u);
  BOOST_TEST(ex.stats().last_run.bytes_copied == 32u);
  BOOST_TEST_REQUIRE(ex.run().ok());
  BOOST_TEST(ex.stats().total.output_copies == 2u);
}

BOOST_AUTO_TEST_CASE(bad_bindings_are_clear_errors) {
  auto f = conv_factory();
  Executor ex = make_executor(f);
  Buf in(40);
  const Dims d{1, 2, 4, 5};
  // Misaligned: one byte off a float.
  auto* odd = reinterpret_cast<const float*>(reinterpret_cast<const std::byte*>(in.at()) + 1);
  Status s = ex.bind_input("x", ConstTensorView{odd, DType::float32, d});
  BOOST_TEST_REQUIRE(!s.ok());
  BOOST_TEST(contains(s.message(), "bind_input 'x'"), s.message());
  BOOST_TEST(contains(s.message(), "not aligned to 4 bytes"), s.message());
  // Too small.
  s = ex.bind_input("x", ConstTensorView{in.at(), DType::float32, d}, 100);
  BOOST_TEST_REQUIRE(!s.ok());
  BOOST_TEST(contains(s.message(), "buffer of 100 bytes is too small for 160 bytes"), s.message());
  BOOST_TEST(ex.bind_input("x", ConstTensorView{in.at(), DType::float32, d}, 160).ok());
  // Null, dtype, rank, static dims, unknown name.
  s = ex.bind_input("x", ConstTensorView{nullptr, DType::float32, d});
  BOOST_TEST(contains(s.message(), "null data"), s.message());
  s = ex.bind_input("x", ConstTensorView{in.at(), DType::int32, d});
  BOOST_TEST(contains(s.message(), "expected dtype float32, got int32"), s.message());
  s = ex.bind_input("x", ConstTensorView{in.at(), DType::float32, Dims{2, 4, 5}});
  BOOST_TEST(contains(s.message(), "got shape 2x4x5"), s.message());
  s = ex.bind_input("x", ConstTensorView{in.at(), DType::float32, Dims{1, 3, 4, 5}});
  BOOST_TEST(contains(s.message(), "expected float32[1,2,h,w]"), s.message());
  s = ex.bind_input("nope", ConstTensorView{in.at(), DType::float32, d});
  BOOST_TEST(contains(s.message(), "no input named 'nope'"), s.message());
  // Outputs: static dims, dtype, alignment of an int64 output, size.
  alignas(64) std::byte raw[128] = {};
  s = ex.bind_output("x_shape", TensorView{raw, DType::int64, Dims{3}});
  BOOST_TEST(contains(s.message(), "bind_output 'x_shape': expected int64[4], got shape 3"), s.message());
  s = ex.bind_output("x_shape", TensorView{raw, DType::float32, Dims{4}});
  BOOST_TEST(contains(s.message(), "expected dtype int64, got float32"), s.message());
  s = ex.bind_output("x_shape", TensorView{raw + 4, DType::int64, Dims{4}});
  BOOST_TEST(contains(s.message(), "not aligned to 8 bytes"), s.message());
  s = ex.bind_output("x_shape", TensorView{raw, DType::int64, Dims{4}}, 31);
  BOOST_TEST(contains(s.message(), "too small"), s.message());
  s = ex.bind_output(7, TensorView{raw, DType::int64, Dims{4}});
  BOOST_TEST(contains(s.message(), "out of range"), s.message());
  // A failed bind leaves the input unbound: running reports it.
  Executor fresh = make_executor(f);
  (void)fresh.bind_input("x", ConstTensorView{odd, DType::float32, d});
  s = fresh.run();
  BOOST_TEST(contains(s.message(), "input 'x' was not set"), s.message());
}

BOOST_AUTO_TEST_CASE(new_dims_keep_bindings_but_a_bound_output_of_other_dims_must_be_rebound) {
  auto f = conv_factory();
  Executor ex = make_executor(f);
  Buf in(72), yb(108);
  std::vector<float> x = ramp(72, 0.02f), relu, y;
  std::memcpy(in.at(), x.data(), 40 * 4);
  BOOST_TEST_REQUIRE(ex.bind_input("x", ConstTensorView{in.at(), DType::float32, Dims{1, 2, 4, 5}}).ok());
  BOOST_TEST_REQUIRE(ex.bind_output("y", TensorView{yb.at(), DType::float32, Dims{1, 3, 4, 5}}).ok());
  BOOST_TEST_REQUIRE(ex.run().ok());
  // New input dims: the output binding stays, and no longer fits.
  std::memcpy(in.at(), x.data(), 72 * 4);
  BOOST_TEST_REQUIRE(ex.bind_input("x", ConstTensorView{in.at(), DType::float32, Dims{1, 2, 6, 6}}).ok());
  Status s = ex.run();
  BOOST_TEST_REQUIRE(!s.ok());
  BOOST_TEST(contains(s.message(), "output 'y' is bound to a float32[1x3x4x5] buffer"), s.message());
  BOOST_TEST(contains(s.message(), "x=1x2x6x6 make it float32[1x3x6x6]"), s.message());
  auto od = ex.output_dims(0);
  BOOST_TEST_REQUIRE(od.ok());
  BOOST_TEST(*od == (Dims{1, 3, 6, 6}));
  BOOST_TEST_REQUIRE(ex.bind_output("y", TensorView{yb.at(), DType::float32, Dims{1, 3, 6, 6}}).ok());
  BOOST_TEST_REQUIRE(ex.run().ok());
  conv_graph_reference(std::vector<float>(x.begin(), x.begin() + 72), 6, 6, relu, y);
  check_close(yb.at(), y);
  BOOST_TEST(ex.stats().total.input_copies == 0u);
  // unbind_input: the input must be given again.
  ex.unbind_input(0);
  s = ex.run();
  BOOST_TEST(contains(s.message(), "input 'x' was not set"), s.message());
}

BOOST_AUTO_TEST_CASE(set_input_copies_are_counted_honestly) {
  // One input: new dims switch plans at once, one copy.
  auto f = conv_factory();
  Executor ex = make_executor(f);
  std::vector<float> x = ramp(36), relu, y;
  BOOST_TEST_REQUIRE(ex.set_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, 3, 6}}).ok());
  BOOST_TEST_REQUIRE(ex.run().ok());
  conv_graph_reference(x, 3, 6, relu, y);
  check_close(ex.output("y")->as<float>(), y);
  BOOST_TEST(ex.stats().last_run.input_copies == 1u);
  BOOST_TEST(ex.stats().last_run.bytes_copied == 144u);
  BOOST_TEST(ex.stats().plan_switches == 1u);
  // Stateless run: the owning output copies are counted too.
  std::vector<ConstTensorView> ins{ConstTensorView{x.data(), DType::float32, Dims{1, 2, 3, 6}}};
  auto outs = ex.run(ins);
  BOOST_TEST_REQUIRE(outs.ok());
  BOOST_TEST(ex.stats().last_run.input_copies == 1u);
  BOOST_TEST(ex.stats().last_run.output_copies == 3u);

  // Two inputs sharing a dim, changed one at a time: both wait (parked) until run() plans for
  // the pair, then are placed: two copies each.
  auto f2 = Factory::create(weave::test::two_input_graph());
  BOOST_TEST_REQUIRE(f2.ok());
  Executor ex2 = make_executor(*f2);
  std::vector<float> a{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, b(12, 0.5f);
  for (int round = 0; round < 2; ++round) {
    BOOST_TEST_REQUIRE(ex2.set_input("a", ConstTensorView{a.data(), DType::float32, Dims{3, 4}}).ok());
    BOOST_TEST_REQUIRE(ex2.set_input("b", ConstTensorView{b.data(), DType::float32, Dims{3, 4}}).ok());
    BOOST_TEST_REQUIRE(ex2.run().ok());
    BOOST_TEST(ex2.output("y")->as<float>()[11] == 12.5f);
    // Second round: "a" alone (3x4 beside b's 1x4) is still an unknown pair and waits; with
    // "b" the pair is known, so the plan switches at once and "b" is copied once: 2 + 1.
    BOOST_TEST(ex2.stats().last_run.input_copies == (round == 0 ? 4u : 3u));
    // Back to batch 1 (the default plan) for the next round.
    BOOST_TEST_REQUIRE(ex2.set_input("a", ConstTensorView{a.data(), DType::float32, Dims{1, 4}}).ok());
    BOOST_TEST_REQUIRE(ex2.set_input("b", ConstTensorView{b.data(), DType::float32, Dims{1, 4}}).ok());
    BOOST_TEST_REQUIRE(ex2.run().ok());
    BOOST_TEST(ex2.output("y")->as<float>()[3] == 4.5f);
  }
}

// ---------------------------------------------------------------- bounds (R8)

BOOST_AUTO_TEST_CASE(max_shapes_are_validated) {
  FactoryOptions o;
  o.max_shapes["q"] = {1, 2, 8, 8};
  auto f = Factory::create(conv_graph(), o);
  BOOST_TEST_REQUIRE(!f.ok());
  BOOST_TEST(contains(f.message(), "max_shapes: no input named 'q'"), f.message());
  o.max_shapes.clear();
  o.max_shapes["x"] = {1, 2, 8};
  f = Factory::create(conv_graph(), o);
  BOOST_TEST(contains(f.message(), "has another rank"), f.message());
  o.max_shapes["x"] = {1, 3, 8, 8};
  f = Factory::create(conv_graph(), o);
  BOOST_TEST(contains(f.message(), "changes a static dim"), f.message());
  o.max_shapes["x"] = {1, 2, 0, 8};
  f = Factory::create(conv_graph(), o);
  BOOST_TEST(contains(f.message(), "below 1"), f.message());
  o.max_shapes["x"] = {1, 2, 4, 4};
  o.plan_shapes["x"] = {1, 2, 5, 5};
  f = Factory::create(conv_graph(), o);
  BOOST_TEST(contains(f.message(), "default dims 1x2x5x5 exceed the bound 1x2x4x4"), f.message());
  // Found by fuzz/fuzz_shape_text: dims whose product overflows int64 (this one used to be
  // signed overflow in the Conv shape arithmetic) and merely huge ones are refused before any
  // kernel computes with them.
  o.plan_shapes.clear();
  o.max_shapes["x"] = {1, 2, 222220652383477, 213474684248283589};
  f = Factory::create(conv_graph(), o);
  BOOST_TEST(contains(f.message(), "input 'x': shape 1x2x222220652383477x213474684248283589 is larger than"),
             f.message());
  o.max_shapes["x"] = {1, 2, 1 << 20, 1 << 20};  // 8 TiB of float32
  f = Factory::create(conv_graph(), o);
  BOOST_TEST(contains(f.message(), "is larger than the 1099511627776 bytes a plan admits"), f.message());
  // Found by fuzz/fuzz_onnx: an empty tensor has 0 bytes whatever its other dims, and a dim of
  // 2^63-1 next to a 0 overflowed the Conv padding arithmetic. The dims, zeros counted as ones,
  // obey the bound a full tensor's do: no dim alone, and no two together (2 x 0 x 2^40).
  o.max_shapes.clear();
  o.plan_shapes["x"] = {1, 2, 0, std::numeric_limits<int64_t>::max()};
  f = Factory::create(conv_graph(), o);
  BOOST_TEST(contains(f.message(),
                      "input 'x': shape 1x2x0x9223372036854775807 has dims whose product (zeros "
                      "aside) exceeds the 1099511627776 a plan admits"),
             f.message());
  o.plan_shapes["x"] = {1, 2, 0, int64_t{1} << 40};
  f = Factory::create(conv_graph(), o);
  BOOST_TEST(contains(f.message(), "has dims whose product (zeros aside) exceeds"), f.message());
}

BOOST_AUTO_TEST_CASE(in_bound_shapes_share_the_bound_layout_and_beyond_is_an_error) {
  FactoryOptions o;
  o.max_shapes["x"] = {1, 2, 8, 8};
  auto f = conv_factory(o);
  BOOST_TEST_REQUIRE(f->bound_plan() != nullptr);
  BOOST_TEST(f->default_plan() == nullptr);  // h and w have no default
  Executor ex = make_executor(f);
  const std::size_t arena = ex.arena_bytes();
  BOOST_TEST(arena == f->bound_plan()->arena_bytes);
  std::vector<float> x = ramp(128), relu, y;
  for (auto [h, w] : {std::pair<int64_t, int64_t>{8, 8}, {3, 7}, {1, 1}, {8, 2}}) {
    BOOST_TEST_REQUIRE(ex.set_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, h, w}}).ok());
    BOOST_TEST_REQUIRE(ex.run().ok());
    BOOST_TEST((ex.plan()->layout_from_bound || ex.plan() == f->bound_plan().get()));
    conv_graph_reference(std::vector<float>(x.begin(), x.begin() + 2 * h * w), h, w, relu, y);
    check_close(ex.output("y")->as<float>(), y);
    BOOST_TEST(ex.arena_bytes() == arena);
  }
  BOOST_TEST(ex.stats().arena_growths == 0u);
  Status s = ex.set_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, 9, 8}});
  BOOST_TEST_REQUIRE(!s.ok());
  BOOST_TEST(contains(s.message(), "set_input: input 'x': dims 1x2x9x8 exceed the planned bound 1x2x8x8"),
             s.message());
  s = ex.bind_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, 2, 9}});
  BOOST_TEST(contains(s.message(), "bind_input: input 'x': dims 1x2x2x9 exceed"), s.message());
}

BOOST_AUTO_TEST_CASE(replan_beyond_bound_is_explicit_and_logged) {
  FactoryOptions o;
  o.max_shapes["x"] = {1, 2, 4, 4};
  o.replan_beyond_bound = true;
  auto f = conv_factory(o);
  std::vector<std::string> logged;
  ExecutorOptions eo;
  eo.log = [&](std::string_view m) { logged.emplace_back(m); };
  Executor ex = make_executor(f, eo);
  std::vector<float> x = ramp(2 * 6 * 7), relu, y;
  BOOST_TEST_REQUIRE(ex.set_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, 6, 7}}).ok());
  BOOST_TEST_REQUIRE(ex.run().ok());
  conv_graph_reference(x, 6, 7, relu, y);
  check_close(ex.output("y")->as<float>(), y);
  BOOST_TEST(!ex.plan()->layout_from_bound);
  BOOST_TEST(ex.stats().arena_growths >= 1u);
  BOOST_TEST_REQUIRE(logged.size() == 1u);
  BOOST_TEST(contains(logged[0], "x=1x2x6x7 exceed the planned bound"), logged[0]);
  // Back within the bound: the bound layout again, logged as a first run of those dims.
  BOOST_TEST_REQUIRE(ex.set_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, 3, 3}}).ok());
  BOOST_TEST_REQUIRE(ex.run().ok());
  BOOST_TEST(ex.plan()->layout_from_bound);
  BOOST_TEST_REQUIRE(logged.size() == 2u);
  BOOST_TEST(contains(logged[1], "first run with these dims"), logged[1]);
  // Seen dims again: nothing logged.
  BOOST_TEST_REQUIRE(ex.set_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, 6, 7}}).ok());
  BOOST_TEST_REQUIRE(ex.run().ok());
  BOOST_TEST(logged.size() == 2u);
}

// Outputs belong to the run that made them. After new input dims are planned (which may grow
// or move the memory they live in) or after a failed run, output() is an error, not a view of
// the wrong size; for owning and lending executors alike.
BOOST_AUTO_TEST_CASE(outputs_are_refused_once_new_dims_are_planned_or_a_run_failed) {
  FactoryOptions o;
  o.max_shapes["x"] = {1, 2, 4, 4};
  o.replan_beyond_bound = true;
  auto f = conv_factory(o);
  for (bool lend : {false, true}) {
    BOOST_TEST_CONTEXT("lend_arena " << lend) {
      ExecutorOptions eo;
      eo.lend_arena = lend;
      Executor ex = make_executor(f, eo);
      BOOST_TEST(!ex.output("y").ok());  // nothing ran yet
      std::vector<float> x = ramp(2 * 6 * 7), relu, y;
      BOOST_TEST_REQUIRE(ex.set_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, 2, 2}}).ok());
      BOOST_TEST_REQUIRE(ex.run().ok());
      BOOST_TEST_REQUIRE(ex.output("y").ok());
      // Bigger dims, beyond the bound: output_dims plans for them (memory grows).
      BOOST_TEST_REQUIRE(
          ex.bind_input("x", ConstTensorView{x.data(), DType::float32, Dims{1, 2, 6, 7}}).ok());
      BOOST_TEST_REQUIRE(ex.output_dims(0).ok());
      auto stale = ex.output("y");
      BOOST_TEST_REQUIRE(!stale.ok());
      BOOST_TEST(contains(stale.message(), "input dims changed"), stale.message());
      BOOST_TEST_REQUIRE(ex.run().ok());
      conv_graph_reference(x, 6, 7, relu, y);
      BOOST_TEST_REQUIRE(ex.output("y").ok());
      check_close(ex.output("y")->as<float>(), y);
      // A failed run (a bound output of the wrong dims) leaves nothing to read.
      Buf out(12);
      BOOST_TEST_REQUIRE(ex.bind_output("y", TensorView{out.at(), DType::float32, Dims{1, 3, 2, 2}}).ok());
      BOOST_TEST(!ex.run().ok());
      BOOST_TEST(!ex.output("y").ok());
    }
  }
}
