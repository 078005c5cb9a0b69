#include "core/publish/kafka_transport.h"

#include <librdkafka/rdkafka.h>

#include <cstring>

namespace weave::publish {

namespace {

class KafkaTransport final : public Transport {
 public:
  KafkaTransport(const PublishUri& uri, const TransportOptions& o) : uri_(uri), o_(o) {
    if (o_.username.empty()) o_.username = uri.username;
    if (o_.password.empty()) o_.password = uri.password;
  }
  ~KafkaTransport() override { close(); }

  Status connect(const Listener& listener) override {
    listener_ = &listener;
    if (rk_ != nullptr) return reachable();
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    auto set = [&](const char* k, const std::string& v) -> Status {
      if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK)
        return Error(uri_.text + ": " + k + ": " + err);
      return {};
    };
    Status st = set("bootstrap.servers", uri_.brokers);
    if (st) st = set("enable.idempotence", "true");
    if (st) st = set("acks", "all");
    if (st) st = set("linger.ms", "5");
    if (st) st = set("log_level", "3");  // errors only: outages are reported as events
    if (st && !o_.client_id.empty()) st = set("client.id", o_.client_id);
    const bool tls = !o_.tls_ca_file.empty();
    if (st && !o_.username.empty()) {
      st = set("security.protocol", tls ? "sasl_ssl" : "sasl_plaintext");
      if (st) st = set("sasl.mechanisms", "PLAIN");
      if (st) st = set("sasl.username", o_.username);
      if (st) st = set("sasl.password", o_.password);
    } else if (st && tls) {
      st = set("security.protocol", "ssl");
    }
    if (st && tls) st = set("ssl.ca.location", o_.tls_ca_file);
    if (st && !o_.tls_cert_file.empty()) st = set("ssl.certificate.location", o_.tls_cert_file);
    if (st && !o_.tls_key_file.empty()) st = set("ssl.key.location", o_.tls_key_file);
    if (!st) {
      rd_kafka_conf_destroy(conf);
      return st;
    }
    rd_kafka_conf_set_opaque(conf, this);
    rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void* self) {
      auto* t = static_cast<KafkaTransport*>(self);
      const auto seq = reinterpret_cast<uintptr_t>(m->_private);
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (t->up_ != 1) t->set_up(true, "");
        t->listener_->delivered(seq, true, {});
      } else {
        t->listener_->delivered(seq, false, rd_kafka_err2str(m->err));
      }
    });
    rd_kafka_conf_set_error_cb(conf, [](rd_kafka_t*, int code, const char* reason, void* self) {
      auto* t = static_cast<KafkaTransport*>(self);
      if (code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || code == RD_KAFKA_RESP_ERR__TRANSPORT ||
          code == RD_KAFKA_RESP_ERR__RESOLVE || code == RD_KAFKA_RESP_ERR__AUTHENTICATION ||
          code == RD_KAFKA_RESP_ERR__SSL || code == RD_KAFKA_RESP_ERR__FATAL)
        t->set_up(false, t->uri_.text + ": " + reason);
      t->last_error_ = reason;
    });
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);  // owns conf from here
    if (rk_ == nullptr) {
      rd_kafka_conf_destroy(conf);
      return Error(uri_.text + ": cannot create a Kafka producer: " + err);
    }
    return reachable();
  }

  SendResult send(uint64_t seq, std::string_view payload, std::string_view key) override {
    if (rk_ == nullptr) return SendResult::lost;
    const rd_kafka_resp_err_t e = rd_kafka_producev(
        rk_, RD_KAFKA_V_TOPIC(uri_.topic.c_str()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(const_cast<char*>(payload.data()), payload.size()),
        RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<uintptr_t>(seq))), RD_KAFKA_V_END);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) return SendResult::sent;
    if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) return SendResult::busy;
    listener_->delivered(seq, false, rd_kafka_err2str(e));
    return SendResult::busy;
  }

  void poll(std::chrono::milliseconds wait) override {
    if (rk_ != nullptr) rd_kafka_poll(rk_, static_cast<int>(wait.count()));
  }

  void close() override {
    if (rk_ == nullptr) return;
    rd_kafka_flush(rk_, 100);  // Publisher already waited for its messages; this ends the sends in progress
    rd_kafka_destroy(rk_);
    rk_ = nullptr;
  }

  const std::string& describe() const override { return uri_.text; }

 private:
  // Connected once a metadata request is answered: until then Publisher keeps the messages (its
  // queue bound and policy apply), and after that librdkafka keeps its own connections and
  // retries. The producer made above stays, connecting in the background.
  Status reachable() {
    const rd_kafka_metadata_t* md = nullptr;
    const rd_kafka_resp_err_t e =
        rd_kafka_metadata(rk_, 0, nullptr, &md, static_cast<int>(o_.connect_timeout.count()));
    if (md != nullptr) rd_kafka_metadata_destroy(md);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      up_ = 0;
      return Error(uri_.text + ": " + (last_error_.empty() ? std::string(rd_kafka_err2str(e)) : last_error_));
    }
    up_ = 1;
    return {};
  }
  // Reports a change of reachability (the first "down" too: up_ starts unknown).
  void set_up(bool up, const std::string& why) {
    if (static_cast<int>(up) == up_) return;
    up_ = up ? 1 : 0;
    if (listener_->state) listener_->state(up, why);
  }

  PublishUri uri_;
  TransportOptions o_;
  rd_kafka_t* rk_ = nullptr;
  int up_ = -1;             // -1 unknown, 0 down, 1 up
  std::string last_error_;  // librdkafka's last error, for a failed reachable()
  const Listener* listener_ = nullptr;
};

}  // namespace

std::unique_ptr<Transport> make_kafka_transport(const PublishUri& uri, const TransportOptions& options) {
  return std::make_unique<KafkaTransport>(uri, options);
}

}  // namespace weave::publish
