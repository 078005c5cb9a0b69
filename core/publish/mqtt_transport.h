// mqtt://HOST:PORT/TOPIC through libmosquitto, QoS 1 by default: a message is acknowledged
// when the broker's PUBACK arrives. A lost connection drops the libmosquitto client and its
// queue with it; Publisher reconnects with a new one and sends again what was not acknowledged.
#pragma once

#include <memory>

#include "core/publish/transport.h"

namespace weave::publish {

[[nodiscard]] std::unique_ptr<Transport> make_mqtt_transport(const PublishUri& uri,
                                                             const TransportOptions& options);

}  // namespace weave::publish
