// BatchGroup: frames of several streams (threads) run as one batch and each gets back what a run
// of its frame alone gives; partial batches after the timeout, frames that cannot batch run alone,
// a model whose outputs do not keep the batch stops the group batching, one member's failure is
// its own. Checks run on the test's thread (never in the workers, whose results are collected).
#define BOOST_TEST_MODULE batch_group
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/stream/batch_group.h"
#include "tests/runtime/runtime_graphs.h"

using weave::Dims;
using weave::DType;
using weave::Expected;
using weave::stream::BatchGroup;
using weave::stream::FrameRunner;
using weave::stream::FrameStats;
using weave::stream::InputFrame;
using namespace std::chrono_literals;

namespace {

// The error of a failed result, "" for a good one (BOOST_TEST evaluates its message either way).
template <class T>
std::string why(const Expected<T>& e) {
  return e.ok() ? std::string() : e.message();
}

std::shared_ptr<const weave::Factory> factory_of(weave::Graph g, weave::FactoryOptions options = {}) {
  auto f = weave::Factory::create(std::move(g), options);
  BOOST_TEST_REQUIRE(f.ok());
  return *f;
}

// y = relu(x), x and y [batch, n]: frames of other widths cannot join each other.
weave::Graph relu_graph() {
  using namespace weave;
  Graph g;
  Value in;
  in.kind = ValueKind::input;
  in.dtype = DType::float32;
  in.shape = {kDynamic, kDynamic};
  const int32_t x = g.add_value(in);
  g.inputs = {x};
  g.input_infos = {TensorInfo{"x", DType::float32, {kDynamic, kDynamic}, {}}};
  Value f;
  f.dtype = DType::float32;
  f.shape = {kDynamic, kDynamic};
  const int32_t y = g.add_value(f);
  Node r;
  r.op = "Relu";
  r.inputs = {x};
  r.outputs = {y};
  g.nodes = {r};
  g.outputs = {y};
  g.output_infos = {TensorInfo{"y", DType::float32, {kDynamic, kDynamic}, {}}};
  return g;
}

// y = transpose(x): its output's first dim is not the batch. `declared`: what the model says of
// y, [4, ?] (the truth) or [?, ?] (a model whose declared shape hides it).
weave::Graph transpose_graph(weave::Shape declared = {4, weave::kDynamic}) {
  using namespace weave;
  Graph g;
  Value in;
  in.kind = ValueKind::input;
  in.dtype = DType::float32;
  in.shape = {kDynamic, 4};
  const int32_t x = g.add_value(in);
  g.inputs = {x};
  g.input_infos = {TensorInfo{"x", DType::float32, {kDynamic, 4}, {}}};
  Value f;
  f.dtype = DType::float32;
  f.shape = {4, kDynamic};
  const int32_t y = g.add_value(f);
  Node t;
  t.op = "Transpose";
  t.inputs = {x};
  t.outputs = {y};
  t.attrs.set("perm", std::vector<int64_t>{1, 0});
  g.nodes = {t};
  g.outputs = {y};
  g.output_infos = {TensorInfo{"y", DType::float32, declared, {}}};
  return g;
}

// Output memory from plain vectors.
struct VectorSink final : weave::stream::OutputSink {
  std::vector<std::vector<float>> outs;
  bool fail = false, throws = false;
  Expected<std::span<std::byte>> allocate(int index, DType, const Dims&, std::size_t bytes) override {
    if (fail) return weave::make_error("no memory for output ", index);
    if (throws) throw std::runtime_error("the sink threw");
    if (outs.size() <= static_cast<std::size_t>(index)) outs.resize(static_cast<std::size_t>(index) + 1);
    outs[static_cast<std::size_t>(index)].assign(bytes / 4, -1.f);
    return std::as_writable_bytes(std::span(outs[static_cast<std::size_t>(index)]));
  }
};

// One stream: its runner, statistics and the frame it sends (inputs a and b of `rows` x 4).
struct Stream {
  Stream(const std::shared_ptr<const weave::Factory>& f, int rows, float seed)
      : stats(std::make_shared<FrameStats>()) {
    auto r = FrameRunner::create(f, {}, stats);
    BOOST_TEST_REQUIRE(r.ok());
    runner = std::move(*r);
    for (int i = 0; i < rows * 4; ++i) {
      a.push_back(seed + static_cast<float>(i));
      b.push_back(seed * 100 + static_cast<float>(i) * 0.5f);
    }
    const int n_in = f->num_inputs();
    frames.push_back(view(a, rows));
    if (n_in == 2) frames.push_back(view(b, rows));
  }
  static InputFrame view(std::vector<float>& v, int rows) {
    return InputFrame{weave::ConstTensorView{v.data(), DType::float32, Dims{rows, 4}}, v.size() * 4, false};
  }
  // What this stream's frame gives alone.
  std::vector<float> alone() {
    VectorSink s;
    auto d = runner->run(frames, s, nullptr);
    BOOST_TEST_REQUIRE(d.ok());
    stats->processed = stats->processed - 1;  // not one of the stream's frames
    return s.outs[0];
  }
  void send(BatchGroup& group, std::chrono::microseconds timeout) {
    result = group.run(*runner, frames, sink, timeout, *stats, &batch_frames);
  }

  std::shared_ptr<FrameStats> stats;
  std::unique_ptr<FrameRunner> runner;
  std::vector<float> a, b;
  std::vector<InputFrame> frames;
  VectorSink sink;
  Expected<std::vector<Dims>> result = weave::make_error("not run");
  int batch_frames = 0;
};

void send_all(std::vector<std::unique_ptr<Stream>>& streams, BatchGroup& group,
              std::chrono::microseconds timeout) {
  std::vector<std::thread> threads;
  for (auto& s : streams) threads.emplace_back([&s, &group, timeout] { s->send(group, timeout); });
  for (auto& t : threads) t.join();
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_full_batch_gives_every_stream_what_its_frame_gives_alone) {
  auto f = factory_of(weave::test::two_input_graph());
  auto group = BatchGroup::join(f, 4);
  BOOST_TEST(BatchGroup::join(f, 4) == group);  // one group per model and size
  BOOST_TEST(BatchGroup::join(f, 2) != group);
  std::vector<std::unique_ptr<Stream>> streams;
  const int rows[] = {1, 3, 1, 2};  // crops of several regions batch too
  for (int i = 0; i < 4; ++i)
    streams.push_back(std::make_unique<Stream>(f, rows[i], 10.f * static_cast<float>(i + 1)));
  std::vector<std::vector<float>> expected;
  for (auto& s : streams) expected.push_back(s->alone());
  send_all(streams, *group, 10s);  // full before the timeout: it does not wait for it
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const Stream& s = *streams[i];
    BOOST_TEST_REQUIRE(s.result.ok(), why(s.result));
    BOOST_TEST(((*s.result)[0] == Dims{rows[i], 4}));
    BOOST_TEST(s.sink.outs[0] == expected[i]);
    BOOST_TEST(s.batch_frames == 4);
    BOOST_TEST(s.stats->processed.load() == 1u);
    BOOST_TEST(s.stats->input_copies.load() == 2u);   // each input into the batch
    BOOST_TEST(s.stats->output_copies.load() == 1u);  // its rows out of it
  }
  BOOST_TEST(group->counts().batches == 1u);
  BOOST_TEST(group->counts().frames == 4u);
  BOOST_TEST(group->unbatchable().empty());
}

BOOST_AUTO_TEST_CASE(a_lone_frame_runs_after_the_timeout_and_batches_keep_coming) {
  auto f = factory_of(weave::test::two_input_graph());
  auto group = BatchGroup::join(f, 4);
  Stream s(f, 1, 5.f);
  const auto expected = s.alone();
  const auto t0 = std::chrono::steady_clock::now();
  s.send(*group, 30ms);
  const auto waited = std::chrono::steady_clock::now() - t0;
  BOOST_TEST_REQUIRE(s.result.ok(), why(s.result));
  BOOST_TEST(s.batch_frames == 1);
  BOOST_TEST(s.sink.outs[0] == expected);
  BOOST_TEST((waited >= 30ms));
  BOOST_TEST(group->counts().batches == 0u);
  // Two streams with a batch size of 2, many frames each: every frame right, in batches of 2.
  auto pairs = BatchGroup::join(f, 2);
  std::vector<std::unique_ptr<Stream>> streams;
  streams.push_back(std::make_unique<Stream>(f, 1, 1.f));
  streams.push_back(std::make_unique<Stream>(f, 2, 2.f));
  std::vector<std::vector<float>> want{streams[0]->alone(), streams[1]->alone()};
  std::vector<int> wrong(2, 0), alone(2, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      Stream& me = *streams[static_cast<std::size_t>(i)];
      for (int n = 0; n < 50; ++n) {
        me.sink.outs.clear();
        me.send(*pairs, 10s);
        if (!me.result.ok() || me.sink.outs[0] != want[static_cast<std::size_t>(i)])
          ++wrong[static_cast<std::size_t>(i)];
        if (me.batch_frames != 2) ++alone[static_cast<std::size_t>(i)];
      }
    });
  for (auto& t : threads) t.join();
  BOOST_TEST(wrong == std::vector<int>(2, 0));
  BOOST_TEST(alone == std::vector<int>(2, 0));  // with a long timeout every frame finds its pair
  BOOST_TEST(pairs->counts().batches == 50u);
  BOOST_TEST(streams[0]->stats->processed.load() == 50u);
}

BOOST_AUTO_TEST_CASE(frames_of_other_dims_run_alone_at_once) {
  auto f = factory_of(relu_graph());
  auto group = BatchGroup::join(f, 2);
  BOOST_TEST(group->unbatchable().empty(), group->unbatchable());
  auto frame = [](std::vector<float>& v, int n) {
    v.assign(static_cast<std::size_t>(n), 0.5f);
    return InputFrame{weave::ConstTensorView{v.data(), DType::float32, Dims{1, n}}, v.size() * 4, false};
  };
  std::vector<float> xa, xb;
  InputFrame a = frame(xa, 4), b = frame(xb, 6);
  auto ra = FrameRunner::create(f, {});
  auto rb = FrameRunner::create(f, {});
  BOOST_TEST_REQUIRE((ra.ok() && rb.ok()));
  FrameStats sa, sb;
  VectorSink oa, ob;
  Expected<std::vector<Dims>> da = weave::make_error("not run"), db = weave::make_error("not run");
  int na = 0, nb = 0;
  std::thread first([&] { da = group->run(**ra, std::span(&a, 1), oa, 2s, sa, &na); });
  std::this_thread::sleep_for(50ms);  // a has most likely opened a batch that b cannot join
  const auto t0 = std::chrono::steady_clock::now();
  db = group->run(**rb, std::span(&b, 1), ob, 2s, sb, &nb);
  const auto b_took = std::chrono::steady_clock::now() - t0;
  first.join();
  BOOST_TEST_REQUIRE(da.ok(), why(da));
  BOOST_TEST_REQUIRE(db.ok(), why(db));
  BOOST_TEST(((*da)[0] == Dims{1, 4}));
  BOOST_TEST(((*db)[0] == Dims{1, 6}));
  BOOST_TEST(na == 1);
  BOOST_TEST(nb == 1);
  BOOST_TEST((b_took < 1s));              // b did not wait for a batch it could not join
  BOOST_TEST(sa.processed.load() == 1u);  // each frame counted in its own stream's statistics
  BOOST_TEST(sb.processed.load() == 1u);
}

BOOST_AUTO_TEST_CASE(a_model_without_a_batch_first_never_batches) {
  // Declared: output [4, ?] of input [?, 4]; input [1, 2, ?, ?].
  for (auto g : {transpose_graph(), weave::test::conv_graph()}) {
    auto f = factory_of(std::move(g));
    auto group = BatchGroup::join(f, 2);
    const std::string why_not = group->unbatchable();
    BOOST_TEST((why_not.find("has shape 4x?") != std::string::npos ||
                why_not.find("input 'x' has shape 1x2x") != std::string::npos),
               why_not);
  }
}

BOOST_AUTO_TEST_CASE(outputs_without_the_batch_first_stop_batching_and_still_come_out_right) {
  // The model declares y [?, ?]: only the first batch's dims show that y is [4, rows].
  auto f = factory_of(transpose_graph({weave::kDynamic, weave::kDynamic}));
  auto group = BatchGroup::join(f, 2);
  std::vector<std::unique_ptr<Stream>> streams;
  streams.push_back(std::make_unique<Stream>(f, 1, 1.f));
  streams.push_back(std::make_unique<Stream>(f, 2, 7.f));
  std::vector<std::vector<float>> expected{streams[0]->alone(), streams[1]->alone()};
  send_all(streams, *group, 10s);
  for (std::size_t i = 0; i < 2; ++i) {
    BOOST_TEST_REQUIRE(streams[i]->result.ok(), why(streams[i]->result));
    BOOST_TEST(streams[i]->sink.outs[0] == expected[i]);
    BOOST_TEST(streams[i]->stats->processed.load() == 1u);
  }
  const std::string why = group->unbatchable();
  BOOST_TEST(why.find("output 'y' has dims 4x3 for a batch of 3 rows") != std::string::npos, why);
  // From now on frames run alone at once, not after the timeout.
  const auto t0 = std::chrono::steady_clock::now();
  streams[0]->send(*group, 10s);
  BOOST_TEST((std::chrono::steady_clock::now() - t0 < 5s));
  BOOST_TEST(streams[0]->result.ok());
  BOOST_TEST(streams[0]->batch_frames == 1);
}

BOOST_AUTO_TEST_CASE(one_members_failure_is_its_own) {
  auto f = factory_of(weave::test::two_input_graph());
  auto group = BatchGroup::join(f, 3);
  std::vector<std::unique_ptr<Stream>> streams;
  for (int i = 0; i < 3; ++i) streams.push_back(std::make_unique<Stream>(f, 1, static_cast<float>(i)));
  std::vector<std::vector<float>> expected;
  for (auto& s : streams) expected.push_back(s->alone());
  streams[1]->sink.fail = true;
  send_all(streams, *group, 10s);
  BOOST_TEST_REQUIRE(!streams[1]->result.ok());
  BOOST_TEST(streams[1]->result.message().find("no memory for output 0") != std::string::npos);
  BOOST_TEST(streams[1]->stats->processed.load() == 0u);
  for (std::size_t i : {0u, 2u}) {
    BOOST_TEST_REQUIRE(streams[i]->result.ok(), why(streams[i]->result));
    BOOST_TEST(streams[i]->sink.outs[0] == expected[i]);
  }
}

BOOST_AUTO_TEST_CASE(a_batch_that_fails_runs_its_frames_alone_and_the_group_stops_batching) {
  // Planned for 2 rows: a batch of two 2-row frames is beyond the bound, each frame is not.
  weave::FactoryOptions options;
  options.max_shapes = {{"a", {2, 4}}, {"b", {2, 4}}};
  auto f = factory_of(weave::test::two_input_graph(), options);
  auto group = BatchGroup::join(f, 2);
  std::vector<std::unique_ptr<Stream>> streams;
  streams.push_back(std::make_unique<Stream>(f, 2, 1.f));
  streams.push_back(std::make_unique<Stream>(f, 2, 5.f));
  std::vector<std::vector<float>> expected{streams[0]->alone(), streams[1]->alone()};
  send_all(streams, *group, 10s);
  for (std::size_t i = 0; i < 2; ++i) {
    BOOST_TEST_REQUIRE(streams[i]->result.ok(), why(streams[i]->result));
    BOOST_TEST(streams[i]->sink.outs[0] == expected[i]);
    BOOST_TEST(streams[i]->batch_frames == 1);  // not counted as batched
    BOOST_TEST(streams[i]->stats->processed.load() == 1u);
  }
  BOOST_TEST(group->counts().batches == 0u);
  const std::string why_not = group->unbatchable();
  BOOST_TEST(why_not.find("a batch of 2 frames failed") != std::string::npos, why_not);
}

BOOST_AUTO_TEST_CASE(a_sink_that_throws_fails_the_batch_and_wakes_every_member) {
  auto f = factory_of(weave::test::two_input_graph());
  auto group = BatchGroup::join(f, 2);
  std::vector<std::unique_ptr<Stream>> streams;
  streams.push_back(std::make_unique<Stream>(f, 1, 1.f));
  streams.push_back(std::make_unique<Stream>(f, 1, 2.f));
  streams[1]->sink.throws = true;
  send_all(streams, *group, 10s);  // returns: nobody is left waiting
  BOOST_TEST_REQUIRE(!streams[1]->result.ok());
  BOOST_TEST(streams[1]->result.message().find("frames failed: the sink threw") != std::string::npos,
             streams[1]->result.message());
}

BOOST_AUTO_TEST_CASE(a_batch_runs_when_its_shortest_timeout_is_up_or_when_woken) {
  auto f = factory_of(weave::test::two_input_graph());
  // Size 3, two members: the leader would wait 10 s, the second member 100 ms.
  auto group = BatchGroup::join(f, 3);
  Stream leader(f, 1, 1.f), quick(f, 1, 2.f);
  const auto t0 = std::chrono::steady_clock::now();
  std::thread lead([&] { leader.send(*group, 10s); });
  std::this_thread::sleep_for(50ms);
  quick.send(*group, 100ms);
  lead.join();
  BOOST_TEST((std::chrono::steady_clock::now() - t0 < 5s));
  BOOST_TEST_REQUIRE(leader.result.ok(), why(leader.result));
  BOOST_TEST_REQUIRE(quick.result.ok(), why(quick.result));
  BOOST_TEST(leader.batch_frames == 2);  // one batch of both, run after 100 ms, not 10 s
  BOOST_TEST(quick.batch_frames == 2);
  // wake(): a lone member's batch runs at once, whatever its timeout.
  Stream lone(f, 1, 3.f);
  const auto t1 = std::chrono::steady_clock::now();
  std::thread wait([&] { lone.send(*group, 10s); });
  std::this_thread::sleep_for(100ms);
  group->wake();
  wait.join();
  BOOST_TEST((std::chrono::steady_clock::now() - t1 < 5s));
  BOOST_TEST_REQUIRE(lone.result.ok(), why(lone.result));
  BOOST_TEST(lone.batch_frames == 1);
}
