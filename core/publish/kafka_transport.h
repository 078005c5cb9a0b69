// kafka://HOST:PORT[,...]/TOPIC through librdkafka: an idempotent producer with acks=all, each
// message keyed by its camera (so one camera's results stay in one partition, in order). A
// message is acknowledged by its delivery report. librdkafka keeps its own connections and
// retries, so a broker going away is reported (Listener::state), not a reason to send again;
// a message whose delivery finally fails (message.timeout.ms) is sent again by Publisher.
#pragma once

#include <memory>

#include "core/publish/transport.h"

namespace weave::publish {

[[nodiscard]] std::unique_ptr<Transport> make_kafka_transport(const PublishUri& uri,
                                                              const TransportOptions& options);

}  // namespace weave::publish
