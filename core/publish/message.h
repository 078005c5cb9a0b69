// The message weavepublish sends for one frame: weavemeta's JSON line for the frame's regions
// (core/vision/json.h: "pts", "texts", "objects", each region's box, score, label, track) with
// the camera's id, the frame's number in its stream, the wall-clock time the message was made
// (seconds since 1970, UTC) and the element's tags in front:
//   {"camera":"door-3","frame":12,"time":1795713467.125,"worker":"w1","pts":480000000,"texts":[...]}
// (camera, pts) identifies a frame's result within one run of a stream: delivery is at least
// once, and a consumer drops repeats by that pair (with a tag telling runs apart when a stream
// may be restarted elsewhere, as weave-worker's "worker").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/vision/json.h"
#include "core/vision/regions.h"

namespace weave::publish {

struct MessageHeader {
  std::string camera;
  uint64_t frame = 0;
  double time = 0;                                        // wall clock, seconds since 1970
  std::vector<std::pair<std::string, std::string>> tags;  // string fields added as they are
};

// `lines` keeps which arrays the stream's messages carry (json.h: RegionLines).
[[nodiscard]] std::string frame_message(const MessageHeader& header, std::optional<uint64_t> pts_ns,
                                        std::span<const vision::Region> regions, vision::RegionLines& lines);

// "key=value,key=value" -> tags; keys are letters, digits, '_' and '-', and none of the
// message's own keys. Errors name the bad entry.
[[nodiscard]] Expected<std::vector<std::pair<std::string, std::string>>> parse_tags(std::string_view text);

}  // namespace weave::publish
