// Brokers for the publish tests, on loopback ports of their own: a mosquitto process (stopped and
// started again by the tests, its sessions persisted in between, as a deployment would keep them).
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace weave::test {

// A TCP port free on 127.0.0.1 right now.
inline int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    throw std::runtime_error("no free port");
  }
  const int port = ntohs(a.sin_port);
  close(fd);
  return port;
}

inline bool port_open(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

class Mosquitto {
 public:
  // `exe` from MOSQUITTO (meson sets it); persistence in `dir`.
  // With `user` and `password`, anonymous clients are refused and that one is the only user
  // (mosquitto_passwd, next to the broker).
  Mosquitto(std::string dir, const std::string& user = {}, const std::string& password = {})
      : dir_(std::move(dir)), port_(free_port()) {
    const char* e = std::getenv("MOSQUITTO");
    exe_ = e != nullptr ? e : "mosquitto";
    std::ofstream conf(dir_ + "/mosquitto.conf");
    // "user": a broker started as root otherwise drops to user mosquitto, who cannot write here.
    if (!user.empty()) {
      const std::string cmd = "mosquitto_passwd -c -b " + dir_ + "/passwd " + user + " " + password;
      if (std::system(cmd.c_str()) != 0) throw std::runtime_error("mosquitto_passwd failed: " + cmd);
      conf << "allow_anonymous false\npassword_file " << dir_ << "/passwd\n";
    } else {
      conf << "allow_anonymous true\n";
    }
    conf << "listener " << port_ << " 127.0.0.1\nuser " << (geteuid() == 0 ? "root" : "mosquitto")
         << "\npersistence true\npersistence_location " << dir_ << "/\nlog_dest file " << dir_
         << "/mosquitto.log\n";
  }
  ~Mosquitto() { stop(); }
  [[nodiscard]] int port() const { return port_; }

  void start() {
    pid_ = fork();
    if (pid_ == 0) {
      const std::string conf = dir_ + "/mosquitto.conf";
      execlp(exe_.c_str(), exe_.c_str(), "-c", conf.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 500 && !port_open(port_); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!port_open(port_))
      throw std::runtime_error("mosquitto did not start (" + exe_ + ", see " + dir_ + "/mosquitto.log)");
  }
  // SIGTERM: the broker saves its sessions and exits.
  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  std::string dir_, exe_;
  int port_;
  pid_t pid_ = -1;
};

}  // namespace weave::test
