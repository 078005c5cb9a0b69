// The streaming side of weaveinfer without a pipeline: StreamRunner (bounded queue, leaky
// modes, gathering by timestamp, events in their place, EOS, flush and stop) driven by producer
// threads and one consumer, the way the element's sink pads and task drive it.
#define BOOST_TEST_MODULE stream_runner
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/stream/stream_runner.h"

using weave::stream::Leaky;
using weave::stream::Push;

namespace {

// A buffer that counts how many of its kind are alive, so drops can be seen to destroy them.
struct Tracked {
  static inline std::atomic<int> alive{0};  // producers construct, the consumer destroys
  int value = 0;
  explicit Tracked(int v) : value(v) { ++alive; }
  Tracked(Tracked&& o) noexcept : value(o.value) { ++alive; }
  Tracked& operator=(Tracked&& o) noexcept {
    value = o.value;
    return *this;
  }
  Tracked(const Tracked&) = delete;
  ~Tracked() { --alive; }
};

using Runner = weave::stream::StreamRunner;
using weave::stream::Payload;

Payload buf(int v) {
  return Payload(Tracked(v));
}
Payload ev(const char* text) {
  return Payload(std::string(text));
}
const std::string& event_of(const Runner::Step& s) {
  return s.event.get<std::string>();
}

Runner::Options opts(int inputs, int capacity = 8, Leaky leaky = Leaky::none) {
  Runner::Options o;
  o.inputs = inputs;
  o.capacity = capacity;
  o.leaky = leaky;
  return o;
}

std::vector<int> values(const Runner::Step& s) {
  std::vector<int> v;
  for (const auto& b : s.buffers) v.push_back(b.get<Tracked>().value);
  return v;
}

}  // namespace

BOOST_AUTO_TEST_CASE(refuses_everything_until_started) {
  Runner r(opts(1));
  BOOST_TEST((r.accepting(0) == Push::flushing));
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::flushing));
  BOOST_TEST(!r.push_event(ev("segment")));
  BOOST_TEST(Tracked::alive == 0);
  r.start();
  BOOST_TEST((r.accepting(0) == Push::queued));
  BOOST_TEST((r.accepting(1) == Push::eos));  // no such input
}

BOOST_AUTO_TEST_CASE(single_input_sets_come_out_in_order_with_events_in_their_place) {
  Runner r(opts(1));
  r.start();
  BOOST_TEST((r.push(0, 0, buf(10)) == Push::queued));
  BOOST_TEST(r.push_event(ev("tag")));
  BOOST_TEST((r.push(0, 40, buf(11)) == Push::queued));
  BOOST_TEST(r.queued() == 2);
  auto s = r.next();
  BOOST_TEST((s.kind == Runner::StepKind::set));
  BOOST_TEST(values(s) == std::vector<int>{10});
  BOOST_TEST(s.key == 0u);
  s = r.next();
  BOOST_TEST((s.kind == Runner::StepKind::event));
  BOOST_TEST(event_of(s) == "tag");
  s = r.next();
  BOOST_TEST(values(s) == std::vector<int>{11});
  BOOST_TEST(s.key == 40u);
  BOOST_TEST(r.queued() == 0);
}

BOOST_AUTO_TEST_CASE(one_input_runs_every_buffer_even_with_repeated_or_older_timestamps) {
  Runner r(opts(1));
  r.start();
  for (int v : {1, 2, 3}) BOOST_TEST((r.push(0, 80, buf(v)) == Push::queued));  // one frame's batches
  BOOST_TEST((r.push(0, 40, buf(4)) == Push::queued));                          // out of order
  for (int v : {1, 2, 3, 4}) BOOST_TEST(values(r.next()) == std::vector<int>{v});
  BOOST_TEST(r.dropped() == 0u);
}

BOOST_AUTO_TEST_CASE(two_inputs_gather_by_timestamp_and_drop_the_partnerless) {
  Runner r(opts(2));
  r.start();
  BOOST_TEST((r.push(1, 100, buf(201)) == Push::queued));  // b@100 first
  BOOST_TEST((r.push(0, 0, buf(100)) == Push::queued));    // a@0: never gets a partner
  BOOST_TEST((r.push(0, 100, buf(101)) == Push::queued));  // a@100 completes 100
  auto s = r.next();
  BOOST_TEST((s.kind == Runner::StepKind::set));
  BOOST_TEST(s.key == 100u);
  BOOST_TEST(values(s) == (std::vector<int>{101, 201}));  // input order, not arrival order
  BOOST_TEST(r.dropped() == 1u);                          // a@0 went when 100 completed
  s = Runner::Step{};
  BOOST_TEST(Tracked::alive == 0);
  // A late buffer for a completed key is dropped at once.
  BOOST_TEST((r.push(1, 0, buf(200)) == Push::queued));
  BOOST_TEST((r.push(0, 200, buf(102)) == Push::queued));
  BOOST_TEST((r.push(1, 200, buf(202)) == Push::queued));
  s = r.next();
  BOOST_TEST(values(s) == (std::vector<int>{102, 202}));
  BOOST_TEST(r.dropped() == 2u);
}

BOOST_AUTO_TEST_CASE(untimed_buffers_pair_by_arrival_order) {
  Runner r(opts(2));
  r.start();
  BOOST_TEST((r.push(0, std::nullopt, buf(1)) == Push::queued));
  BOOST_TEST((r.push(0, std::nullopt, buf(2)) == Push::queued));
  BOOST_TEST((r.push(1, std::nullopt, buf(11)) == Push::queued));
  BOOST_TEST((r.push(1, std::nullopt, buf(12)) == Push::queued));
  BOOST_TEST(values(r.next()) == (std::vector<int>{1, 11}));
  BOOST_TEST(values(r.next()) == (std::vector<int>{2, 12}));
  BOOST_TEST(r.dropped() == 0u);
}

BOOST_AUTO_TEST_CASE(leaky_upstream_drops_the_incoming_buffer) {
  Runner r(opts(1, 2, Leaky::upstream));
  r.start();
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::queued));
  BOOST_TEST((r.push(0, 1, buf(2)) == Push::queued));
  BOOST_TEST(r.push_event(ev("events do not count")));
  BOOST_TEST((r.push(0, 2, buf(3)) == Push::dropped));
  BOOST_TEST(r.dropped() == 1u);
  BOOST_TEST(Tracked::alive == 2);
  BOOST_TEST(values(r.next()) == std::vector<int>{1});
  BOOST_TEST(values(r.next()) == std::vector<int>{2});
}

BOOST_AUTO_TEST_CASE(leaky_downstream_drops_the_oldest_buffer_but_keeps_events) {
  Runner r(opts(1, 2, Leaky::downstream));
  r.start();
  BOOST_TEST(r.push_event(ev("first")));
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::queued));
  BOOST_TEST((r.push(0, 1, buf(2)) == Push::queued));
  BOOST_TEST((r.push(0, 2, buf(3)) == Push::queued));
  BOOST_TEST(r.dropped() == 1u);
  BOOST_TEST(event_of(r.next()) == "first");
  BOOST_TEST(values(r.next()) == std::vector<int>{2});
  BOOST_TEST(values(r.next()) == std::vector<int>{3});
}

BOOST_AUTO_TEST_CASE(a_full_queue_blocks_the_producer_until_a_flush_wakes_it) {
  Runner r(opts(1, 1));
  r.start();
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::queued));
  Push second = Push::queued;
  // The producer can only return once the queue has room or the runner flushes; it flushes.
  std::thread producer([&] { second = r.push(0, 1, buf(2)); });
  r.flush(-2);
  producer.join();
  BOOST_TEST((second == Push::flushing));
  BOOST_TEST(r.code() == -2);
  BOOST_TEST((r.next().kind == Runner::StepKind::flushing));
  r.reset();
  BOOST_TEST(Tracked::alive == 0);  // the queued buffer went with the reset
  BOOST_TEST(r.dropped() == 0u);    // and a flush is not a drop
}

BOOST_AUTO_TEST_CASE(a_blocked_producer_goes_on_when_the_consumer_takes_a_buffer) {
  Runner r(opts(1, 1));
  r.start();
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::queued));
  Push second = Push::flushing;
  std::thread producer([&] { second = r.push(0, 1, buf(2)); });
  BOOST_TEST(values(r.next()) == std::vector<int>{1});
  BOOST_TEST(values(r.next()) == std::vector<int>{2});  // waits for the producer's buffer
  producer.join();
  BOOST_TEST((second == Push::queued));
}

BOOST_AUTO_TEST_CASE(a_larger_capacity_releases_a_blocked_producer) {
  Runner r(opts(1, 1));
  r.start();
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::queued));
  Push second = Push::flushing;
  std::thread producer([&] { second = r.push(0, 1, buf(2)); });
  r.set_capacity(2);
  producer.join();
  BOOST_TEST((second == Push::queued));
  BOOST_TEST(r.queued() == 2);
  BOOST_TEST(r.capacity() == 2);
}

BOOST_AUTO_TEST_CASE(eos_when_every_input_ended_drops_what_cannot_complete) {
  Runner r(opts(2));
  r.start();
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::queued));
  BOOST_TEST((r.push(1, 0, buf(11)) == Push::queued));
  BOOST_TEST((r.push(0, 40, buf(2)) == Push::queued));  // never completes
  BOOST_TEST(r.push_eos(0));
  BOOST_TEST((r.push(0, 80, buf(3)) == Push::eos));
  BOOST_TEST((r.accepting(1) == Push::queued));
  BOOST_TEST(r.push_eos(1));
  BOOST_TEST(values(r.next()) == (std::vector<int>{1, 11}));
  auto s = r.next();
  BOOST_TEST((s.kind == Runner::StepKind::eos));
  BOOST_TEST(r.dropped() == 1u);
  BOOST_TEST(Tracked::alive == 0);
  // After a reset (flush-stop) the inputs take buffers again.
  r.reset();
  BOOST_TEST((r.push(0, 0, buf(4)) == Push::queued));
}

BOOST_AUTO_TEST_CASE(stop_hands_the_consumers_code_to_producers_until_start) {
  Runner r(opts(1));
  r.start();
  r.stop(-4);  // e.g. GST_FLOW_NOT_NEGOTIATED downstream
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::stopped));
  BOOST_TEST(r.code() == -4);
  r.start();
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::queued));
  BOOST_TEST(r.code() == 0);
}

BOOST_AUTO_TEST_CASE(producers_on_threads_feed_one_consumer_without_loss) {
  constexpr int kFrames = 200;
  Runner r(opts(2, 3));
  r.start();
  // Free-running producers: one may run far ahead of the other; it must block (its buffers
  // wait for partners within the queue's capacity) rather than push the gather past its bound.
  auto produce = [&](int input) {
    for (int f = 0; f < kFrames; ++f) {
      if (input == 0 && f % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      BOOST_CHECK((r.push(input, uint64_t(f) * 40, buf(f)) == Push::queued));
    }
    BOOST_CHECK(r.push_eos(input));
  };
  std::thread a(produce, 0), b(produce, 1);
  int sets = 0;
  bool in_order = true;
  for (;;) {
    auto s = r.next();
    if (s.kind == Runner::StepKind::eos) break;
    in_order = in_order && s.buffers.size() == 2 && s.buffers[0].get<Tracked>().value == sets &&
               s.buffers[1].get<Tracked>().value == sets;
    ++sets;
  }
  a.join();
  b.join();
  BOOST_TEST(sets == kFrames);
  BOOST_TEST(in_order);
  BOOST_TEST(r.dropped() == 0u);
}

BOOST_AUTO_TEST_CASE(set_inputs_changes_the_gather) {
  Runner r(opts(1));
  r.set_inputs(3);
  r.start();
  BOOST_TEST(r.inputs() == 3);
  BOOST_TEST((r.push(2, 0, buf(3)) == Push::queued));
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::queued));
  BOOST_TEST((r.push(1, 0, buf(2)) == Push::queued));
  BOOST_TEST(values(r.next()) == (std::vector<int>{1, 2, 3}));
}

BOOST_AUTO_TEST_CASE(an_input_ahead_waits_for_its_partners_and_an_ended_one_releases_it) {
  Runner r(opts(2, 3));
  r.start();
  int sets = 0;
  std::thread consumer([&] {
    for (;;) {
      auto s = r.next();
      if (s.kind == Runner::StepKind::eos) break;
      ++sets;
    }
  });
  // Input 0 pushes 10 buffers while input 1 has pushed none: after 3 it must wait.
  std::atomic<int> pushed{0};
  std::thread a([&] {
    for (int f = 0; f < 10; ++f) {
      BOOST_CHECK((r.push(0, uint64_t(f), buf(f)) == Push::queued));
      ++pushed;
    }
    BOOST_CHECK(r.push_eos(0));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  BOOST_TEST(pushed.load() == 3);  // blocked: three of its buffers wait for partners
  // Input 1 delivers frame 0 and ends: frame 0 completes, and input 0 goes on (its other
  // buffers can no longer be matched: dropped and counted).
  BOOST_TEST((r.push(1, 0, buf(0)) == Push::queued));
  BOOST_TEST(r.push_eos(1));
  a.join();
  consumer.join();
  BOOST_TEST(pushed.load() == 10);
  BOOST_TEST(sets == 1);
  BOOST_TEST(r.dropped() == 9u);
  BOOST_TEST(Tracked::alive == 0);
}

BOOST_AUTO_TEST_CASE(timestamps_that_never_meet_drop_but_never_stall) {
  Runner r(opts(2, 3));
  r.start();
  int sets = 0;
  std::thread consumer([&] {
    for (;;) {
      auto s = r.next();
      if (s.kind == Runner::StepKind::eos) break;
      ++sets;
    }
  });
  auto produce = [&](int input, uint64_t base) {
    for (int f = 0; f < 50; ++f) BOOST_CHECK((r.push(input, base + uint64_t(f), buf(f)) == Push::queued));
    BOOST_CHECK(r.push_eos(input));
  };
  std::thread a(produce, 0, 0), b(produce, 1, 1000);
  a.join();
  b.join();
  consumer.join();
  BOOST_TEST(sets == 0);
  BOOST_TEST(r.dropped() == 100u);
  BOOST_TEST(Tracked::alive == 0);
}

// A flush that reaches the inputs one after the other (a seek through a tee into both): the
// first input's flush flushes the runner, an input whose flush is over waits (is not refused)
// until the last one's ends, and then goes on; what the caller queues first comes out first.
BOOST_AUTO_TEST_CASE(a_flush_of_single_inputs_holds_the_others_until_the_last_one_ends) {
  Runner r(opts(2));
  r.start();
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::queued));
  BOOST_TEST(r.flush_input(0, -2));   // first: the caller forwards the flush downstream
  BOOST_TEST(!r.flush_input(1, -2));  // already flushing
  BOOST_TEST(!r.flush_input(1, -2));  // twice on one input: nothing new
  BOOST_TEST((r.next().kind == Runner::StepKind::flushing));
  BOOST_TEST((r.push(1, 0, buf(11)) == Push::flushing));  // b is flushing itself
  BOOST_TEST(!r.flush_input_done(0));                     // b still flushes
  BOOST_TEST((r.accepting(0) == Push::queued));           // a would wait, not be refused
  std::atomic<int> step{0};
  Push a_event = Push::flushing, a_buffer = Push::flushing;
  std::thread a([&] {
    a_event = r.push_event(ev("segment a"), 0) ? Push::queued : Push::flushing;
    step = 1;
    a_buffer = r.push(0, 1, buf(2));
    step = 2;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  BOOST_TEST(step.load() == 0);       // waiting for b
  BOOST_TEST(r.flush_input_done(1));  // the last: the caller resets and queues its own first
  r.reset();
  BOOST_TEST(r.push_event(ev("segment again")));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  BOOST_TEST(step.load() == 0);  // still waiting: until start()
  r.start();
  a.join();
  BOOST_TEST((a_event == Push::queued));
  BOOST_TEST((a_buffer == Push::queued));
  BOOST_TEST((r.push(1, 1, buf(12)) == Push::queued));
  BOOST_TEST(event_of(r.next()) == "segment again");
  BOOST_TEST(event_of(r.next()) == "segment a");
  BOOST_TEST(values(r.next()) == (std::vector<int>{2, 12}));
  BOOST_TEST(r.dropped() == 0u);
}

// A flush of the whole runner (a state change) while an input waits for a partner's flush:
// the waiting push returns `flushing` instead of waiting on.
BOOST_AUTO_TEST_CASE(a_state_change_flush_releases_inputs_waiting_for_a_partners_flush) {
  Runner r(opts(2));
  r.start();
  BOOST_TEST(r.flush_input(1, -2));
  Push got = Push::queued;
  std::thread a([&] { got = r.push(0, 0, buf(1)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  r.flush(-2);
  a.join();
  BOOST_TEST((got == Push::flushing));
  BOOST_TEST(!r.flush_input_done(1));  // the flush was taken over by flush(): nothing to end
  r.reset();
  r.start();
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::queued));
  BOOST_TEST(Tracked::alive == 1);
}

// An input blocked on a full queue when its partner starts flushing is not refused (its upstream
// was not flushed and would stop for good): its buffer waits out the flush and is queued after.
BOOST_AUTO_TEST_CASE(a_push_blocked_on_a_full_queue_waits_out_a_partners_flush) {
  Runner r(opts(2, 2));
  r.start();
  BOOST_TEST((r.push(0, 0, buf(1)) == Push::queued));
  BOOST_TEST((r.push(1, 0, buf(11)) == Push::queued));
  std::atomic<bool> done{false};
  Push got = Push::flushing;
  std::thread b([&] {
    got = r.push(1, 1, buf(12));  // the queue is full: waits
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  BOOST_TEST(r.flush_input(0, -2));
  BOOST_TEST((r.next().kind == Runner::StepKind::flushing));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  BOOST_TEST(!done.load());  // still waiting, not refused
  BOOST_TEST(r.flush_input_done(0));
  r.reset();
  r.start();
  b.join();
  BOOST_TEST((got == Push::queued));
  BOOST_TEST((r.push(0, 1, buf(2)) == Push::queued));
  BOOST_TEST(values(r.next()) == (std::vector<int>{2, 12}));
}

BOOST_AUTO_TEST_CASE(ring_queue_keeps_order_through_wraps_growth_and_erases) {
  weave::stream::RingQueue<int> q;
  std::deque<int> want;  // the plain reference
  int next = 0;
  for (int round = 0; round < 200; ++round) {
    for (int k = 0; k < round % 7; ++k) {
      q.push_back(next);
      want.push_back(next++);
    }
    if (!want.empty() && round % 5 == 0) {
      const std::size_t i = static_cast<std::size_t>(round) % want.size();
      BOOST_TEST(q.erase(i) == want[i]);
      want.erase(want.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (int k = 0; k < round % 4 && !want.empty(); ++k) {
      BOOST_TEST(q.front() == want.front());
      BOOST_TEST(q.pop_front() == want.front());
      want.pop_front();
    }
    BOOST_TEST_REQUIRE(q.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) BOOST_TEST(q[i] == want[i]);
  }
  std::vector<int> drained;
  q.drain([&](int v) { drained.push_back(v); });
  BOOST_TEST(q.empty());
  BOOST_TEST(drained == std::vector<int>(want.begin(), want.end()));
}
