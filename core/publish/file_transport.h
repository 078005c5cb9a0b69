// file:///PATH: JSON lines appended to PATH, which is truncated when first opened; each line is
// flushed as it is written and acknowledged at once.
#pragma once

#include <memory>

#include "core/publish/transport.h"

namespace weave::publish {

[[nodiscard]] std::unique_ptr<Transport> make_file_transport(const PublishUri& uri);

}  // namespace weave::publish
