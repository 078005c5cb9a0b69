// The message weavepublish sends for one frame: weavemeta's JSON line for the frame's regions
// (core/vision/json.h: "pts", "texts", "objects", each region's box, score, label, track) with
// the camera's id and the frame's number in its stream in front:
//   {"camera":"door-3","frame":12,"pts":480000000,"texts":[...],"objects":[...]}
// (camera, pts) identifies a frame's result: delivery is at least once, and a consumer drops
// repeats by that pair.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/vision/json.h"
#include "core/vision/regions.h"

namespace weave::publish {

// `lines` keeps which arrays the stream's messages carry (json.h: RegionLines).
[[nodiscard]] std::string frame_message(std::string_view camera, uint64_t frame,
                                        std::optional<uint64_t> pts_ns,
                                        std::span<const vision::Region> regions, vision::RegionLines& lines);

}  // namespace weave::publish
