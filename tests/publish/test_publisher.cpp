// Publisher (core/publish/publisher.h) over a fake transport that the test takes down and brings
// back: every message delivered in order, queued while the destination is away, the oldest
// dropped and counted beyond the bound (or the producer blocked), messages not acknowledged
// when the connection goes sent again; and publish URIs parsed or refused with a reason.
#define BOOST_TEST_MODULE publisher
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/publish/publish_uri.h"
#include "core/publish/publisher.h"

using namespace weave;
using namespace weave::publish;
using namespace std::chrono_literals;

namespace {

// A destination the test switches on and off. Acknowledges what it got at each poll unless
// `hold` is set; records every payload it received, duplicates included.
struct FakeState {
  std::atomic<bool> up{true};
  std::atomic<bool> hold{false};
  std::atomic<int> connects{0};
  std::mutex m;
  std::vector<std::string> received;
  std::vector<uint64_t> unacked;
};

class FakeTransport final : public Transport {
 public:
  explicit FakeTransport(FakeState& s) : s_(s) {}
  Status connect(const Listener& l) override {
    l_ = &l;
    if (!s_.up) return Error("fake: unreachable");
    ++s_.connects;
    was_up_ = true;
    return {};
  }
  SendResult send(uint64_t seq, std::string_view payload, std::string_view) override {
    if (!s_.up) {
      drop_connection();
      return SendResult::lost;
    }
    std::lock_guard<std::mutex> lock(s_.m);
    s_.received.emplace_back(payload);
    s_.unacked.push_back(seq);
    return SendResult::sent;
  }
  void poll(std::chrono::milliseconds wait) override {
    if (!s_.up) {
      if (was_up_) drop_connection();
      return;
    }
    std::vector<uint64_t> acks;
    if (!s_.hold) {
      std::lock_guard<std::mutex> lock(s_.m);
      acks.swap(s_.unacked);
    }
    for (uint64_t seq : acks) l_->delivered(seq, true, {});
    if (acks.empty()) std::this_thread::sleep_for(std::min(wait, std::chrono::milliseconds(2)));
  }
  void close() override {}
  const std::string& describe() const override { return name_; }

 private:
  void drop_connection() {
    was_up_ = false;
    {
      std::lock_guard<std::mutex> lock(s_.m);
      s_.unacked.clear();
    }
    l_->lost("fake: connection lost");
  }
  FakeState& s_;
  const Listener* l_ = nullptr;
  bool was_up_ = false;
  std::string name_ = "fake://";
};

PublisherOptions fast(std::size_t queue, WhenFull when = WhenFull::drop_oldest) {
  PublisherOptions o;
  o.queue_size = queue;
  o.when_full = when;
  o.retry_min = 5ms;
  o.retry_max = 20ms;
  return o;
}

std::vector<std::string> received(FakeState& s) {
  std::lock_guard<std::mutex> lock(s.m);
  return s.received;
}

template <class Pred>
bool eventually(Pred p, std::chrono::milliseconds limit = 5000ms) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!p()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(uris_parse_or_say_why) {
  auto f = parse_publish_uri("file:///tmp/out.jsonl");
  BOOST_REQUIRE(f);
  BOOST_TEST((f->scheme == Scheme::file));
  BOOST_TEST(f->path == "/tmp/out.jsonl");
  auto m = parse_publish_uri("mqtt://user:secret@broker.local:1884/weave/cam1");
  BOOST_REQUIRE(m);
  BOOST_TEST((m->scheme == Scheme::mqtt));
  BOOST_TEST(m->host == "broker.local");
  BOOST_TEST(m->port == 1884);
  BOOST_TEST(m->topic == "weave/cam1");
  BOOST_TEST(m->username == "user");
  BOOST_TEST(m->password == "secret");
  BOOST_TEST(m->text.find("secret") == std::string::npos);  // never printed
  auto d = parse_publish_uri("mqtt://localhost/results");
  BOOST_REQUIRE(d);
  BOOST_TEST(d->port == 1883);
  auto k = parse_publish_uri("kafka://k1:9093,k2/results");
  BOOST_REQUIRE(k);
  BOOST_TEST((k->scheme == Scheme::kafka));
  BOOST_TEST(k->brokers == "k1:9093,k2:9092");
  BOOST_TEST(k->topic == "results");
  for (const char* bad : {"broker:1883/topic", "http://x/y", "mqtt://host:0/t", "mqtt://host:99999/t",
                          "mqtt://host", "mqtt://host/", "mqtt://host/a/#", "kafka://k1/a/b",
                          "file://relative.jsonl", "kafka://:9092/t", "mqtt://a,b/t"}) {
    auto r = parse_publish_uri(bad);
    BOOST_TEST(!r, bad);
    if (!r) BOOST_TEST(r.error().message().find("publish URI") != std::string::npos, r.error().message());
  }
}

BOOST_AUTO_TEST_CASE(everything_delivered_in_order) {
  FakeState s;
  Publisher p(std::make_unique<FakeTransport>(s),
              fast(100, WhenFull::block));  // a producer faster than the fake
  for (int i = 0; i < 500; ++i) BOOST_REQUIRE(p.push(std::to_string(i)));
  BOOST_TEST(p.flush(5000ms) == 0u);
  const auto got = received(s);
  BOOST_REQUIRE(got.size() == 500u);
  for (int i = 0; i < 500; ++i) BOOST_TEST(got[i] == std::to_string(i));
  const auto st = p.stats();
  BOOST_TEST(st.delivered == 500u);
  BOOST_TEST(st.dropped == 0u);
  BOOST_TEST(st.pending == 0u);
}

BOOST_AUTO_TEST_CASE(queued_while_away_then_delivered_and_reported) {
  FakeState s;
  s.up = false;
  std::mutex em;
  std::vector<PublisherEvent::Kind> events;
  Publisher p(std::make_unique<FakeTransport>(s), fast(100), [&](const PublisherEvent& e) {
    std::lock_guard<std::mutex> lock(em);
    events.push_back(e.kind);
  });
  for (int i = 0; i < 40; ++i) BOOST_REQUIRE(p.push(std::to_string(i)));
  BOOST_TEST(p.flush(50ms) == 40u);  // nowhere to go yet
  BOOST_TEST(p.stats().pending == 40u);
  BOOST_TEST(!p.stats().connected);
  s.up = true;
  BOOST_TEST(p.flush(5000ms) == 0u);
  const auto got = received(s);
  BOOST_REQUIRE(got.size() == 40u);
  for (int i = 0; i < 40; ++i) BOOST_TEST(got[i] == std::to_string(i));
  std::lock_guard<std::mutex> lock(em);
  // One report of the outage however many retries, then the connection.
  BOOST_REQUIRE(events.size() == 2u);
  BOOST_TEST((events[0] == PublisherEvent::Kind::disconnected));
  BOOST_TEST((events[1] == PublisherEvent::Kind::connected));
}

BOOST_AUTO_TEST_CASE(a_full_queue_drops_the_oldest_and_counts_them) {
  FakeState s;
  s.up = false;
  std::atomic<uint64_t> reported{0};
  Publisher p(std::make_unique<FakeTransport>(s), fast(10), [&](const PublisherEvent& e) {
    if (e.kind == PublisherEvent::Kind::dropped) reported = e.dropped_total;
  });
  for (int i = 0; i < 25; ++i) BOOST_REQUIRE(p.push(std::to_string(i)));
  BOOST_TEST(p.stats().dropped == 15u);
  BOOST_TEST(p.stats().pending == 10u);
  BOOST_TEST(reported.load() >= 1u);  // reported (at most once a second), never silent
  s.up = true;
  BOOST_TEST(p.flush(5000ms) == 0u);
  const auto got = received(s);
  BOOST_REQUIRE(got.size() == 10u);
  for (int i = 0; i < 10; ++i) BOOST_TEST(got[i] == std::to_string(15 + i));  // the newest ten
}

BOOST_AUTO_TEST_CASE(a_full_queue_blocks_the_producer_until_there_is_room) {
  FakeState s;
  s.up = false;
  Publisher p(std::make_unique<FakeTransport>(s), fast(5, WhenFull::block));
  for (int i = 0; i < 5; ++i) BOOST_REQUIRE(p.push(std::to_string(i)));
  std::atomic<bool> done{false}, queued{false};
  std::thread producer([&] {  // no Boost.Test assertions off the main thread
    queued = p.push("5");
    done = true;
  });
  std::this_thread::sleep_for(50ms);
  BOOST_TEST(!done.load());  // still waiting for room
  s.up = true;
  producer.join();
  BOOST_TEST(queued.load());
  BOOST_TEST(p.flush(5000ms) == 0u);
  BOOST_TEST(received(s).size() == 6u);
  BOOST_TEST(p.stats().dropped == 0u);
}

BOOST_AUTO_TEST_CASE(interrupt_releases_a_blocked_producer) {
  FakeState s;
  s.up = false;
  Publisher p(std::make_unique<FakeTransport>(s), fast(2, WhenFull::block));
  BOOST_REQUIRE(p.push("a"));
  BOOST_REQUIRE(p.push("b"));
  std::atomic<int> result{-1};
  std::thread producer([&] { result = p.push("c") ? 1 : 0; });
  std::this_thread::sleep_for(20ms);
  p.interrupt();
  producer.join();
  BOOST_TEST(result.load() == 0);  // not queued
  BOOST_TEST(p.stats().pending == 2u);
  p.resume();
}

BOOST_AUTO_TEST_CASE(unacknowledged_messages_are_sent_again_after_a_lost_connection) {
  FakeState s;
  s.hold = true;  // received, never acknowledged
  Publisher p(std::make_unique<FakeTransport>(s), fast(100));
  for (int i = 0; i < 20; ++i) BOOST_REQUIRE(p.push(std::to_string(i)));
  BOOST_REQUIRE(eventually([&] { return received(s).size() == 20u; }));
  s.up = false;  // the connection goes before any acknowledgement
  BOOST_REQUIRE(eventually([&] { return !p.stats().connected; }));
  s.hold = false;
  s.up = true;
  BOOST_TEST(p.flush(5000ms) == 0u);
  const auto got = received(s);
  BOOST_TEST(got.size() == 40u);  // each twice: at least once
  BOOST_TEST(p.stats().resent == 20u);
  BOOST_TEST(p.stats().delivered == 20u);
  for (int i = 0; i < 20; ++i) BOOST_TEST(got[20 + i] == std::to_string(i));  // again in order
}
