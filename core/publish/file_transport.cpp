#include "core/publish/file_transport.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace weave::publish {

namespace {

class FileTransport final : public Transport {
 public:
  explicit FileTransport(const PublishUri& uri) : path_(uri.path), text_(uri.text) {}
  ~FileTransport() override { close(); }

  Status connect(const Listener& listener) override {
    listener_ = &listener;
    if (f_ != nullptr) return {};
    f_ = std::fopen(path_.c_str(), opened_ ? "a" : "w");
    if (f_ == nullptr) return Error(path_ + ": cannot open for writing: " + std::strerror(errno));
    opened_ = true;
    return {};
  }

  SendResult send(uint64_t seq, std::string_view payload, std::string_view) override {
    if (f_ == nullptr) return SendResult::lost;
    if (std::fwrite(payload.data(), 1, payload.size(), f_) != payload.size() || std::fputc('\n', f_) == EOF ||
        std::fflush(f_) != 0) {
      const std::string why = path_ + ": write failed: " + std::strerror(errno);
      std::fclose(f_);
      f_ = nullptr;
      listener_->lost(why);
      return SendResult::lost;
    }
    listener_->delivered(seq, true, {});
    return SendResult::sent;
  }

  void poll(std::chrono::milliseconds) override {}

  void close() override {
    if (f_ != nullptr) std::fclose(f_);
    f_ = nullptr;
  }

  const std::string& describe() const override { return text_; }

 private:
  std::string path_, text_;
  std::FILE* f_ = nullptr;
  bool opened_ = false;
  const Listener* listener_ = nullptr;
};

}  // namespace

std::unique_ptr<Transport> make_file_transport(const PublishUri& uri) {
  return std::make_unique<FileTransport>(uri);
}

}  // namespace weave::publish
