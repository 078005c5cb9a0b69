// Where weavepublish sends its messages, parsed from one URI:
//   file:///PATH                         JSON lines appended to PATH (truncated when opened)
//   mqtt://[USER[:PASS]@]HOST[:PORT]/TOPIC   an MQTT broker (port 1883, 8883 with tls)
//   kafka://HOST[:PORT][,HOST[:PORT]...]/TOPIC   Kafka brokers (port 9092)
// The topic may hold '/' (MQTT topic levels). Errors name the URI and what is wrong with it.
#pragma once

#include <string>
#include <string_view>

#include "core/common/status.h"

namespace weave::publish {

enum class Scheme { file, mqtt, kafka };

struct PublishUri {
  Scheme scheme = Scheme::file;
  std::string path;                // file
  std::string brokers;             // mqtt: "host:port"; kafka: "host:port,host:port"
  std::string host;                // mqtt
  int port = 0;                    // mqtt
  std::string topic;               // mqtt, kafka
  std::string username, password;  // from the URI's user info, if any
  std::string text;                // the URI as given, without the password
};

[[nodiscard]] Expected<PublishUri> parse_publish_uri(std::string_view uri);

}  // namespace weave::publish
