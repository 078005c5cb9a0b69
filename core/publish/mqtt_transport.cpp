#include "core/publish/mqtt_transport.h"

#include <mosquitto.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace weave::publish {

namespace {

std::string mqtt_error(int rc) {
  if (rc == MOSQ_ERR_ERRNO) return std::strerror(errno);
  return mosquitto_strerror(rc);
}

class MqttTransport final : public Transport {
 public:
  MqttTransport(const PublishUri& uri, const TransportOptions& o) : uri_(uri), o_(o) {
    static std::once_flag init;
    std::call_once(init, [] { mosquitto_lib_init(); });
    if (o_.username.empty()) o_.username = uri.username;
    if (o_.password.empty()) o_.password = uri.password;
  }
  ~MqttTransport() override { drop_client(); }

  Status connect(const Listener& listener) override {
    listener_ = &listener;
    drop_client();
    m_ = mosquitto_new(o_.client_id.empty() ? nullptr : o_.client_id.c_str(), true, this);
    if (m_ == nullptr) return Error(uri_.text + ": cannot create an MQTT client: " + std::strerror(errno));
    mosquitto_connect_callback_set(m_, [](mosquitto*, void* self, int rc) {
      auto* t = static_cast<MqttTransport*>(self);
      t->connack_ = rc;
    });
    mosquitto_disconnect_callback_set(m_, [](mosquitto*, void* self, int rc) {
      auto* t = static_cast<MqttTransport*>(self);
      if (t->up_ && rc != 0) t->lose("the broker closed the connection");
      t->up_ = false;
    });
    mosquitto_publish_callback_set(m_, [](mosquitto*, void* self, int mid) {
      auto* t = static_cast<MqttTransport*>(self);
      const auto it = t->seq_of_.find(mid);
      if (it == t->seq_of_.end()) return;
      const uint64_t seq = it->second;
      t->seq_of_.erase(it);
      t->listener_->delivered(seq, true, {});
    });
    if (!o_.username.empty()) {
      const int rc = mosquitto_username_pw_set(m_, o_.username.c_str(),
                                               o_.password.empty() ? nullptr : o_.password.c_str());
      if (rc != MOSQ_ERR_SUCCESS) return Error(uri_.text + ": username: " + mqtt_error(rc));
    }
    if (!o_.tls_ca_file.empty()) {
      const int rc = mosquitto_tls_set(m_, o_.tls_ca_file.c_str(), nullptr,
                                       o_.tls_cert_file.empty() ? nullptr : o_.tls_cert_file.c_str(),
                                       o_.tls_key_file.empty() ? nullptr : o_.tls_key_file.c_str(), nullptr);
      if (rc != MOSQ_ERR_SUCCESS)
        return Error(uri_.text + ": TLS set-up (" + o_.tls_ca_file + "): " + mqtt_error(rc));
    }
    connack_ = -1;
    int rc = mosquitto_connect(m_, uri_.host.c_str(), uri_.port, 10);
    if (rc != MOSQ_ERR_SUCCESS) return Error(uri_.text + ": cannot connect: " + mqtt_error(rc));
    // Wait for the broker's CONNACK.
    const auto deadline = std::chrono::steady_clock::now() + o_.connect_timeout;
    while (connack_ < 0) {
      rc = mosquitto_loop(m_, 50, 1);
      if (rc != MOSQ_ERR_SUCCESS)
        return Error(uri_.text + ": connection lost while connecting: " + mqtt_error(rc));
      if (std::chrono::steady_clock::now() > deadline)
        return Error(uri_.text + ": no answer from the broker");
    }
    if (connack_ != 0)
      return Error(uri_.text + ": the broker refused: " + mosquitto_connack_string(connack_));
    up_ = true;
    return {};
  }

  SendResult send(uint64_t seq, std::string_view payload, std::string_view) override {
    if (!up_) return SendResult::lost;
    int mid = 0;
    const int rc = mosquitto_publish(m_, &mid, uri_.topic.c_str(), static_cast<int>(payload.size()),
                                     payload.data(), o_.mqtt_qos, false);
    if (rc == MOSQ_ERR_SUCCESS) {
      if (o_.mqtt_qos == 0)
        listener_->delivered(seq, true, {});  // QoS 0 has no acknowledgement
      else
        seq_of_[mid] = seq;
      return SendResult::sent;
    }
    if (rc == MOSQ_ERR_NOMEM || rc == MOSQ_ERR_OVERSIZE_PACKET || rc == MOSQ_ERR_PAYLOAD_SIZE) {
      listener_->delivered(seq, false, mqtt_error(rc));
      return SendResult::busy;
    }
    lose("publish: " + mqtt_error(rc));
    return SendResult::lost;
  }

  void poll(std::chrono::milliseconds wait) override {
    if (m_ == nullptr || !up_) return;
    const int rc = mosquitto_loop(m_, static_cast<int>(wait.count()), 1);
    if (rc != MOSQ_ERR_SUCCESS && up_) lose(mqtt_error(rc));
  }

  void close() override {
    if (m_ != nullptr && up_) {
      mosquitto_disconnect(m_);
      mosquitto_loop(m_, 10, 1);
    }
    drop_client();
  }

  const std::string& describe() const override { return uri_.text; }

 private:
  void lose(const std::string& why) {
    up_ = false;
    seq_of_.clear();
    listener_->lost(why);
  }
  void drop_client() {
    if (m_ != nullptr) mosquitto_destroy(m_);
    m_ = nullptr;
    up_ = false;
    seq_of_.clear();
  }

  PublishUri uri_;
  TransportOptions o_;
  mosquitto* m_ = nullptr;
  bool up_ = false;
  int connack_ = -1;
  std::unordered_map<int, uint64_t> seq_of_;  // message id -> Publisher's sequence number
  const Listener* listener_ = nullptr;
};

}  // namespace

std::unique_ptr<Transport> make_mqtt_transport(const PublishUri& uri, const TransportOptions& options) {
  return std::make_unique<MqttTransport>(uri, options);
}

}  // namespace weave::publish
