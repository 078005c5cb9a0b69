#include "core/publish/transport.h"

#include "core/publish/file_transport.h"
#if WEAVE_HAVE_MOSQUITTO
#include "core/publish/mqtt_transport.h"
#endif
#if WEAVE_HAVE_RDKAFKA
#include "core/publish/kafka_transport.h"
#endif

namespace weave::publish {

Expected<std::unique_ptr<Transport>> make_transport(const PublishUri& uri, const TransportOptions& options) {
  switch (uri.scheme) {
    case Scheme::file:
      return make_file_transport(uri);
    case Scheme::mqtt:
#if WEAVE_HAVE_MOSQUITTO
      return make_mqtt_transport(uri, options);
#else
      return Error(uri.text +
                   ": this build has no MQTT support (libmosquitto-dev was missing when it was configured)");
#endif
    case Scheme::kafka:
#if WEAVE_HAVE_RDKAFKA
      return make_kafka_transport(uri, options);
#else
      return Error(uri.text +
                   ": this build has no Kafka support (librdkafka-dev was missing when it was configured)");
#endif
  }
  return Error(uri.text + ": unknown scheme");
}

}  // namespace weave::publish
