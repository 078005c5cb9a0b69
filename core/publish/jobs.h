// Camera jobs shared by workers through Kafka (weave-worker, docs/deployment.md). A job is one
// message on the jobs topic, keyed by its camera:
//   {"camera":"door-3","source":"rtsp://10.0.0.7:8554/door-3","pipeline":"ocr"}
// and a message with the camera's key and an empty value (a tombstone) or {"camera":..,"stop":true}
// ends it. Kafka's consumer-group protocol assigns the topic's partitions to the workers; a
// worker reads its partitions from the start and runs the latest job of every camera in them.
// JobBoard is that bookkeeping without Kafka or GStreamer: messages and partition assignments in,
// the cameras to run out.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace weave::publish {

struct CameraJob {
  std::string camera;
  std::string source;    // a URI (rtsp://, file://, ...)
  std::string pipeline;  // what runs on it ("ocr", "decode")
  bool stop = false;     // ends the camera's job
  bool operator==(const CameraJob&) const = default;
};

// One job from its JSON; errors say what is missing or malformed.
[[nodiscard]] Expected<CameraJob> parse_job(std::string_view json);

class JobBoard {
 public:
  // Partitions now this worker's (added to those it has).
  void assign(const std::set<int32_t>& partitions);
  // Partitions no longer this worker's: their cameras are no longer wanted.
  void revoke(const std::set<int32_t>& partitions);
  // A message of partition `p` (ignored unless p is assigned). An empty value stops `key`'s camera.
  // Returns an error for a malformed job (which changes nothing).
  [[nodiscard]] Status on_message(int32_t p, std::string_view key, std::string_view value);
  // The cameras to run now, by id.
  [[nodiscard]] std::map<std::string, CameraJob> wanted() const;
  [[nodiscard]] const std::set<int32_t>& partitions() const { return assigned_; }

 private:
  std::set<int32_t> assigned_;
  std::map<std::string, std::pair<int32_t, CameraJob>> jobs_;  // camera -> (partition, latest job)
};

}  // namespace weave::publish
