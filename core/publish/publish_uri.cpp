#include "core/publish/publish_uri.h"

#include <charconv>

namespace weave::publish {

namespace {

Error bad(std::string_view uri, std::string_view why) {
  return Error(std::string("publish URI '").append(uri).append("': ").append(why));
}

// "host[:port]" with a default port; false when the port is not 1-65535.
bool host_port(std::string_view hp, int default_port, std::string& host, int& port) {
  port = default_port;
  const auto colon = hp.rfind(':');
  if (colon != std::string_view::npos && hp.find(']') == std::string_view::npos) {
    const std::string_view p = hp.substr(colon + 1);
    int v = 0;
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (ec != std::errc() || end != p.data() + p.size() || v < 1 || v > 65535) return false;
    port = v;
    hp = hp.substr(0, colon);
  }
  host = std::string(hp);
  return !host.empty();
}

}  // namespace

Expected<PublishUri> parse_publish_uri(std::string_view uri) {
  PublishUri u;
  const auto sep = uri.find("://");
  if (sep == std::string_view::npos)
    return bad(uri, "expected file:///PATH, mqtt://HOST:PORT/TOPIC or kafka://HOST:PORT/TOPIC");
  const std::string_view scheme = uri.substr(0, sep);
  std::string_view rest = uri.substr(sep + 3);
  u.text = std::string(uri);
  if (scheme == "file") {
    u.scheme = Scheme::file;
    if (rest.empty() || rest.front() != '/')
      return bad(uri, "a file URI needs an absolute path (file:///PATH)");
    u.path = std::string(rest);
    return u;
  }
  if (scheme == "mqtt")
    u.scheme = Scheme::mqtt;
  else if (scheme == "kafka")
    u.scheme = Scheme::kafka;
  else
    return bad(uri, "unknown scheme '" + std::string(scheme) + "' (file, mqtt or kafka)");
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos || slash + 1 >= rest.size())
    return bad(uri, "no topic after the broker (HOST:PORT/TOPIC)");
  std::string_view authority = rest.substr(0, slash);
  u.topic = std::string(rest.substr(slash + 1));
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view info = authority.substr(0, at);
    const auto colon = info.find(':');
    u.username = std::string(info.substr(0, colon));
    if (colon != std::string_view::npos) u.password = std::string(info.substr(colon + 1));
    authority = authority.substr(at + 1);
    u.text = std::string(scheme) + "://" + u.username + "@" + std::string(rest.substr(at + 1));
  }
  if (authority.empty()) return bad(u.text, "no broker host");
  if (u.scheme == Scheme::mqtt) {
    if (authority.find(',') != std::string_view::npos) return bad(u.text, "MQTT takes one broker");
    if (!host_port(authority, 1883, u.host, u.port)) return bad(u.text, "the port must be 1-65535");
    if (u.topic.find_first_of("#+") != std::string::npos)
      return bad(u.text, "a topic to publish to has no wildcards (# +)");
    u.brokers = u.host + ":" + std::to_string(u.port);
    return u;
  }
  for (std::size_t b = 0; b <= authority.size();) {
    const auto comma = std::min(authority.find(',', b), authority.size());
    std::string host;
    int port = 0;
    if (!host_port(authority.substr(b, comma - b), 9092, host, port))
      return bad(u.text, "each broker is HOST[:PORT], port 1-65535");
    if (!u.brokers.empty()) u.brokers += ',';
    u.brokers += host + ":" + std::to_string(port);
    b = comma + 1;
  }
  if (u.topic.find('/') != std::string::npos) return bad(u.text, "a Kafka topic has no '/'");
  return u;
}

}  // namespace weave::publish
