#include "core/publish/jobs.h"

#include <nlohmann/json.hpp>

namespace weave::publish {

Expected<CameraJob> parse_job(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Error("job '" + std::string(text.substr(0, 200)) + "': not a JSON object");
  CameraJob job;
  auto str = [&](const char* key, std::string& to, bool required) -> Status {
    const auto it = j.find(key);
    if (it == j.end()) return required ? Status(Error(std::string("job: no \"") + key + "\"")) : Status();
    if (!it->is_string() || it->get<std::string>().empty())
      return Error(std::string("job: \"") + key + "\" must be a non-empty string");
    to = it->get<std::string>();
    return {};
  };
  if (auto st = str("camera", job.camera, true); !st) return st.error();
  if (const auto it = j.find("stop"); it != j.end()) {
    if (!it->is_boolean()) return Error("job " + job.camera + ": \"stop\" must be true or false");
    job.stop = it->get<bool>();
  }
  if (job.stop) return job;
  if (auto st = str("source", job.source, true); !st)
    return Error(st.message() + " (camera " + job.camera + ")");
  job.pipeline = "ocr";
  if (auto st = str("pipeline", job.pipeline, false); !st)
    return Error(st.message() + " (camera " + job.camera + ")");
  return job;
}

void JobBoard::assign(const std::set<int32_t>& partitions) {
  assigned_.insert(partitions.begin(), partitions.end());
}

void JobBoard::revoke(const std::set<int32_t>& partitions) {
  for (int32_t p : partitions) assigned_.erase(p);
  for (auto it = jobs_.begin(); it != jobs_.end();)
    it = partitions.count(it->second.first) ? jobs_.erase(it) : std::next(it);
}

Status JobBoard::on_message(int32_t p, std::string_view key, std::string_view value) {
  if (!assigned_.count(p)) return {};
  if (value.empty()) {
    jobs_.erase(std::string(key));
    return {};
  }
  auto job = parse_job(value);
  if (!job) return job.error();
  if (job->stop) {
    jobs_.erase(job->camera);
    return {};
  }
  jobs_[job->camera] = {p, *job};
  return {};
}

std::map<std::string, CameraJob> JobBoard::wanted() const {
  std::map<std::string, CameraJob> out;
  for (const auto& [camera, pj] : jobs_) out.emplace(camera, pj.second);
  return out;
}

}  // namespace weave::publish
