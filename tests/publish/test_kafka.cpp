// The Kafka transport against librdkafka's mock cluster (the Kafka protocol served on a loopback
// port, in this process): every message arrives in order with its camera as key; a broker down
// mid-stream delays messages, loses none; a SASL login the broker does not speak is reported and
// nothing is sent (the mock cluster has no SASL or TLS: with a real broker those options go to
// librdkafka as security.protocol, sasl.* and ssl.*).
#define BOOST_TEST_MODULE publish_kafka
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/publish/publish_uri.h"
#include "core/publish/publisher.h"

using namespace weave;
using namespace weave::publish;
using namespace std::chrono_literals;

namespace {

struct MockCluster {
  rd_kafka_t* host = nullptr;  // the handle the mock cluster lives in
  rd_kafka_mock_cluster_t* mc = nullptr;
  MockCluster() {
    char err[256];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
    host = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    BOOST_REQUIRE(host != nullptr);
    mc = rd_kafka_mock_cluster_new(host, 1);
    BOOST_REQUIRE(mc != nullptr);
    BOOST_REQUIRE(rd_kafka_mock_topic_create(mc, "results", 1, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ~MockCluster() {
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(host);
  }
  [[nodiscard]] std::string bootstraps() const { return rd_kafka_mock_cluster_bootstraps(mc); }
};

struct Record {
  std::string key, value;
};

// Everything in partition 0 of `topic` from the start, until `n` records or the time limit.
std::vector<Record> consume(const std::string& brokers, const std::string& topic, std::size_t n) {
  char err[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", brokers.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", "weave-test", err, sizeof err);
  rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
  rd_kafka_t* c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  BOOST_REQUIRE(c != nullptr);
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(parts, topic.c_str(), 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  BOOST_REQUIRE(rd_kafka_assign(c, parts) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(parts);
  std::vector<Record> out;
  const auto end = std::chrono::steady_clock::now() + 20s;
  while (out.size() < n && std::chrono::steady_clock::now() < end) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
      out.push_back(Record{std::string(static_cast<const char*>(m->key), m->key_len),
                           std::string(static_cast<const char*>(m->payload), m->len)});
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(c);
  rd_kafka_destroy(c);
  return out;
}

std::string message(int i) {
  return "{\"camera\":\"cam7\",\"pts\":" + std::to_string(i * 40000000LL) + ",\"objects\":[]}";
}

std::unique_ptr<Publisher> kafka_publisher(const std::string& brokers, const TransportOptions& to = {},
                                           Publisher::EventFn on_event = {}) {
  auto uri = parse_publish_uri("kafka://" + brokers + "/results");
  BOOST_REQUIRE_MESSAGE(uri, (uri ? "" : uri.error().message()));
  auto t = make_transport(*uri, to);
  BOOST_REQUIRE(t);
  PublisherOptions po;
  po.queue_size = 1000;
  return std::make_unique<Publisher>(std::move(*t), po, std::move(on_event));
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_message_arrives_in_order_keyed_by_camera_across_a_broker_outage) {
  MockCluster cluster;
  const std::string brokers = cluster.bootstraps();
  auto pub = kafka_publisher(brokers);
  for (int i = 0; i < 50; ++i) BOOST_REQUIRE(pub->push(message(i), "cam7"));
  BOOST_TEST(pub->flush(15000ms) == 0u);
  BOOST_TEST(pub->stats().delivered == 50u);

  BOOST_REQUIRE(rd_kafka_mock_broker_set_down(cluster.mc, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
  for (int i = 50; i < 100; ++i) BOOST_REQUIRE(pub->push(message(i), "cam7"));
  std::this_thread::sleep_for(300ms);
  BOOST_TEST(pub->stats().pending > 0u);  // held while the broker is down
  BOOST_REQUIRE(rd_kafka_mock_broker_set_up(cluster.mc, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
  BOOST_TEST(pub->flush(20000ms) == 0u);
  const auto st = pub->stats();
  BOOST_TEST(st.dropped == 0u);
  BOOST_TEST(st.delivered == 100u);

  const auto got = consume(brokers, "results", 100);
  BOOST_REQUIRE(got.size() >= 100u);
  // The idempotent producer writes each message once, in order.
  for (int i = 0; i < 100; ++i) {
    BOOST_TEST(got[static_cast<std::size_t>(i)].value == message(i), "record " << i);
    BOOST_TEST(got[static_cast<std::size_t>(i)].key == "cam7");
  }
}

BOOST_AUTO_TEST_CASE(a_login_the_broker_refuses_is_reported_and_messages_wait) {
  MockCluster cluster;
  TransportOptions to;
  to.username = "camera";
  to.password = "secret";  // SASL/PLAIN against a plaintext listener: the broker cannot log it in
  std::atomic<int> down{0};
  auto pub = kafka_publisher(cluster.bootstraps(), to, [&](const PublisherEvent& e) {
    if (e.kind == PublisherEvent::Kind::disconnected) ++down;
  });
  BOOST_REQUIRE(pub->push(message(0), "cam7"));
  // Reported once the producer's first metadata request fails (its connect timeout, 3 s).
  for (int i = 0; i < 100 && down.load() == 0; ++i) std::this_thread::sleep_for(100ms);
  BOOST_TEST(down.load() >= 1);
  BOOST_TEST(pub->flush(500ms) == 1u);  // kept, not delivered
  BOOST_TEST(pub->stats().delivered == 0u);
}
