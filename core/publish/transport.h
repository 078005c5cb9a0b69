// A transport moves messages to one destination (a file, an MQTT broker, Kafka). Publisher
// (publisher.h) drives it from one thread of its own: every call below and every callback of
// the Listener happen on that thread, so a transport needs no locking of its own.
//
// A message is handed over with send() and stays Publisher's until the transport reports its
// outcome through Listener::delivered: acknowledged (MQTT QoS 1 PUBACK, Kafka acks=all delivery
// report, a file's flushed write), or failed, and then Publisher hands it over again. A
// connection lost (MQTT) makes Publisher reconnect and hand over again everything not
// acknowledged: delivery is at least once, and a consumer drops duplicates by (camera, pts).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/publish/publish_uri.h"

namespace weave::publish {

struct Listener {
  // The outcome of message `seq`: ok, or failed with a reason (it is sent again).
  std::function<void(uint64_t seq, bool ok, std::string_view why)> delivered;
  // The connection is gone (MQTT): Publisher reconnects and sends again what was not acknowledged.
  std::function<void(std::string_view why)> lost;
  // The destination became unreachable or reachable again while the transport keeps its own
  // retries (Kafka): reported, nothing sent again.
  std::function<void(bool up, std::string_view why)> state;
};

enum class SendResult { sent, busy, lost };

// Options of the network transports beyond the URI.
struct TransportOptions {
  std::string client_id;           // MQTT client id, Kafka client.id
  std::string username, password;  // override the URI's user info when set
  std::string tls_ca_file;         // TLS when set (MQTT, Kafka SSL)
  std::string tls_cert_file, tls_key_file;
  int mqtt_qos = 1;
  std::chrono::milliseconds connect_timeout{3000};
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Connects, or reconnects after lost(); an error says why the destination is unreachable.
  [[nodiscard]] virtual Status connect(const Listener& listener) = 0;
  // Hands message `seq` over: sent (its outcome comes through delivered()), busy (the
  // transport's own queue is full: try again after poll()), or lost (the connection is gone,
  // reported through lost() too).
  [[nodiscard]] virtual SendResult send(uint64_t seq, std::string_view payload, std::string_view key) = 0;
  // Network work for up to `wait`; calls the listener.
  virtual void poll(std::chrono::milliseconds wait) = 0;
  // Disconnects; messages not acknowledged stay Publisher's.
  virtual void close() = 0;
  // What the transport reaches, for messages ("mqtt://host:1883/topic").
  [[nodiscard]] virtual const std::string& describe() const = 0;
};

// The transport for `uri`, or an error when the build lacks its library (MQTT: libmosquitto,
// Kafka: librdkafka). Nothing is connected yet.
[[nodiscard]] Expected<std::unique_ptr<Transport>> make_transport(const PublishUri& uri,
                                                                  const TransportOptions& options);

}  // namespace weave::publish
