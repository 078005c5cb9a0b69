#include "core/publish/message.h"

namespace weave::publish {

std::string frame_message(std::string_view camera, uint64_t frame, std::optional<uint64_t> pts_ns,
                          std::span<const vision::Region> regions, vision::RegionLines& lines) {
  const std::string line = lines.line(pts_ns, regions);  // {"pts":...,...}
  std::string out = std::string("{\"camera\":").append(vision::json_string(camera));
  out.append(",\"frame\":").append(std::to_string(frame));
  if (line.size() > 2)
    out.append(",").append(line, 1, std::string::npos);
  else
    out.append("}");
  return out;
}

}  // namespace weave::publish
