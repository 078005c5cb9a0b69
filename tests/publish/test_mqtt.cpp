// The MQTT transport against a real mosquitto broker on a loopback port: every message arrives,
// in order and whole, at a subscriber with a persistent session (QoS 1); the broker stopped
// and started again mid-stream loses nothing within the queue's bound, and beyond it the drop
// counter is exact; a refused password is reported with the URI and the broker's reason.
#define BOOST_TEST_MODULE publish_mqtt
#include <mosquitto.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/publish/publish_uri.h"
#include "core/publish/publisher.h"
#include "tests/publish/broker.h"

using namespace weave;
using namespace weave::publish;
using namespace std::chrono_literals;

namespace {

// A QoS 1 subscriber with a persistent session, reconnecting by itself (libmosquitto's thread).
class Subscriber {
 public:
  Subscriber(int port, const std::string& topic) : topic_(topic) {
    m_ = mosquitto_new("weave-test-subscriber", false, this);
    mosquitto_connect_callback_set(m_, [](mosquitto* m, void* self, int rc) {
      if (rc == 0) mosquitto_subscribe(m, nullptr, static_cast<Subscriber*>(self)->topic_.c_str(), 1);
    });
    mosquitto_subscribe_callback_set(m_, [](mosquitto*, void* self, int, int, const int*) {
      static_cast<Subscriber*>(self)->subscribed_ = true;
    });
    mosquitto_message_callback_set(m_, [](mosquitto*, void* self, const mosquitto_message* msg) {
      auto* s = static_cast<Subscriber*>(self);
      std::lock_guard<std::mutex> lock(s->m_mutex_);
      s->got_.emplace_back(static_cast<const char*>(msg->payload), static_cast<std::size_t>(msg->payloadlen));
    });
    mosquitto_reconnect_delay_set(m_, 1, 1, false);
    BOOST_REQUIRE(mosquitto_connect(m_, "127.0.0.1", port, 10) == MOSQ_ERR_SUCCESS);
    mosquitto_loop_start(m_);
    for (int i = 0; i < 500 && !subscribed_; ++i) std::this_thread::sleep_for(10ms);
    BOOST_REQUIRE(subscribed_.load());
  }
  ~Subscriber() {
    mosquitto_disconnect(m_);
    mosquitto_loop_stop(m_, false);  // after the disconnect: its thread ends by itself
    mosquitto_destroy(m_);
  }
  std::vector<std::string> got() {
    std::lock_guard<std::mutex> lock(m_mutex_);
    return got_;
  }
  // Waits until `n` distinct messages arrived.
  bool wait_distinct(std::size_t n, std::chrono::milliseconds limit = 10000ms) {
    const auto end = std::chrono::steady_clock::now() + limit;
    for (;;) {
      const auto g = got();
      std::map<std::string, int> d;
      for (const auto& s : g) ++d[s];
      if (d.size() >= n) return true;
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(10ms);
    }
  }

 private:
  std::string topic_;
  mosquitto* m_;
  std::atomic<bool> subscribed_{false};
  std::mutex m_mutex_;
  std::vector<std::string> got_;
};

std::string message(int i) {
  return "{\"camera\":\"cam1\",\"pts\":" + std::to_string(i * 40000000LL) + ",\"texts\":[]}";
}

std::unique_ptr<Publisher> mqtt_publisher(int port, std::size_t queue, const std::string& user_info = {},
                                          Publisher::EventFn on_event = {}, const std::string& ca_file = {}) {
  auto uri = parse_publish_uri("mqtt://" + user_info + "127.0.0.1:" + std::to_string(port) + "/weave/cam1");
  BOOST_REQUIRE(uri);
  TransportOptions to;
  to.client_id = "weave-test-publisher";
  to.tls_ca_file = ca_file;
  auto t = make_transport(*uri, to);
  BOOST_REQUIRE(t);
  PublisherOptions po;
  po.queue_size = queue;
  po.retry_min = 20ms;
  po.retry_max = 100ms;
  return std::make_unique<Publisher>(std::move(*t), po, std::move(on_event));
}

using weave::test::TempDir;

}  // namespace

BOOST_AUTO_TEST_CASE(every_message_arrives_in_order_across_a_broker_restart) {
  TempDir dir;
  test::Mosquitto broker(dir.path.string());
  broker.start();
  Subscriber sub(broker.port(), "weave/cam1");
  auto pub = mqtt_publisher(broker.port(), 1000);
  for (int i = 0; i < 50; ++i) BOOST_REQUIRE(pub->push(message(i), "cam1"));
  BOOST_TEST(pub->flush(10000ms) == 0u);
  BOOST_REQUIRE(sub.wait_distinct(50));
  BOOST_TEST(pub->stats().connected);

  broker.stop();  // mid-stream: 50 more while it is away
  for (int i = 50; i < 100; ++i) BOOST_REQUIRE(pub->push(message(i), "cam1"));
  std::this_thread::sleep_for(200ms);
  BOOST_TEST(pub->stats().pending >= 50u);
  BOOST_TEST(!pub->stats().connected);
  broker.start();
  BOOST_TEST(pub->flush(15000ms) == 0u);
  BOOST_REQUIRE(sub.wait_distinct(100, 15000ms));
  const auto got = sub.got();
  // In order: the first arrival of each message comes after the first of the one before.
  std::map<std::string, std::size_t> first;
  for (std::size_t k = 0; k < got.size(); ++k) first.emplace(got[k], k);
  for (int i = 0; i < 100; ++i) {
    BOOST_REQUIRE(first.count(message(i)) == 1u);
    if (i > 0) BOOST_TEST(first[message(i)] > first[message(i - 1)], "message " << i);
  }
  for (const auto& g : got) BOOST_TEST(g.front() == '{');  // whole messages
  const auto st = pub->stats();
  BOOST_TEST(st.dropped == 0u);
  BOOST_TEST(st.delivered == 100u);
  BOOST_TEST(st.connections == 2u);
}

BOOST_AUTO_TEST_CASE(beyond_the_bound_the_oldest_are_dropped_and_counted) {
  TempDir dir;
  test::Mosquitto broker(dir.path.string());
  auto pub = mqtt_publisher(broker.port(), 10);  // the broker is not there yet
  for (int i = 0; i < 30; ++i) BOOST_REQUIRE(pub->push(message(i), "cam1"));
  BOOST_TEST(pub->stats().dropped == 20u);
  broker.start();
  BOOST_TEST(pub->flush(15000ms) == 0u);
  BOOST_TEST(pub->stats().delivered == 10u);  // acknowledged by the broker: the newest ten
}

BOOST_AUTO_TEST_CASE(a_refused_password_is_reported_and_nothing_is_lost_meanwhile) {
  TempDir dir;
  test::Mosquitto broker(dir.path.string(), "camera", "right");
  broker.start();
  std::mutex m;
  std::vector<std::string> reasons;
  auto events = [&](const PublisherEvent& e) {
    if (e.kind != PublisherEvent::Kind::disconnected) return;
    std::lock_guard<std::mutex> lock(m);
    reasons.push_back(e.detail);
  };
  auto wrong = mqtt_publisher(broker.port(), 100, "camera:wrong@", events);
  for (int i = 0; i < 5; ++i) BOOST_REQUIRE(wrong->push(message(i), "cam1"));
  BOOST_TEST(wrong->flush(1000ms) == 5u);  // kept, not sent
  {
    std::lock_guard<std::mutex> lock(m);
    BOOST_TEST_REQUIRE(!reasons.empty());
    // The URI (without the password) and the broker's reason.
    BOOST_TEST(reasons[0].find("mqtt://camera@127.0.0.1") != std::string::npos, reasons[0]);
    BOOST_TEST(reasons[0].find("refused") != std::string::npos, reasons[0]);
    BOOST_TEST(reasons[0].find("wrong") == std::string::npos, reasons[0]);
  }
  auto right = mqtt_publisher(broker.port(), 100, "camera:right@");
  for (int i = 0; i < 5; ++i) BOOST_REQUIRE(right->push(message(i), "cam1"));
  BOOST_TEST(right->flush(10000ms) == 0u);
  BOOST_TEST(right->stats().delivered == 5u);
}

BOOST_AUTO_TEST_CASE(tls_with_the_broker_s_ca_delivers_and_another_ca_is_refused) {
  TempDir dir, other;
  test::Mosquitto broker(dir.path.string(), {}, {}, /*tls=*/true);
  broker.start();
  auto good = mqtt_publisher(broker.port(), 100, {}, {}, (dir.path / "ca.crt").string());
  for (int i = 0; i < 5; ++i) BOOST_REQUIRE(good->push(message(i), "cam1"));
  BOOST_TEST(good->flush(10000ms) == 0u);
  BOOST_TEST(good->stats().delivered == 5u);
  // A CA that did not sign the broker's certificate: not connected, nothing sent, reported.
  test::Mosquitto stranger(other.path.string(), {}, {}, /*tls=*/true);  // makes other/ca.crt only
  std::mutex m;
  std::vector<std::string> reasons;
  auto bad = mqtt_publisher(
      broker.port(), 100, {},
      [&](const PublisherEvent& e) {
        if (e.kind != PublisherEvent::Kind::disconnected) return;
        std::lock_guard<std::mutex> lock(m);
        reasons.push_back(e.detail);
      },
      (other.path / "ca.crt").string());
  BOOST_REQUIRE(bad->push(message(0), "cam1"));
  BOOST_TEST(bad->flush(1500ms) == 1u);
  BOOST_TEST(bad->stats().delivered == 0u);
  std::lock_guard<std::mutex> lock(m);
  BOOST_TEST_REQUIRE(!reasons.empty());
  BOOST_TEST(reasons[0].find("mqtt://127.0.0.1") != std::string::npos, reasons[0]);
}
