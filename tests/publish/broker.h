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
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace weave::test {

// A directory of its own under /tmp, removed with everything in it.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const char* prefix = "weave-publish") {
    std::string tmpl = std::string("/tmp/") + prefix + "-XXXXXX";
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

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
  // (mosquitto_passwd, next to the broker). With `tls`, the listener speaks TLS with a
  // certificate for 127.0.0.1 signed by a CA made here (openssl): DIR/ca.crt verifies it.
  Mosquitto(std::string dir, const std::string& user = {}, const std::string& password = {}, bool tls = false)
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
    if (tls) make_certificates();
    conf << "listener " << port_ << " 127.0.0.1\n";
    if (tls)
      conf << "cafile " << dir_ << "/ca.crt\ncertfile " << dir_ << "/server.crt\nkeyfile " << dir_
           << "/server.key\n";
    conf << "user " << (geteuid() == 0 ? "root" : "mosquitto") << "\npersistence true\npersistence_location "
         << dir_ << "/\nlog_dest file " << dir_ << "/mosquitto.log\n";
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
  void make_certificates() const {
    const std::string d = dir_;
    const std::string cmd =
        "cd " + d + " && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 " +
        "-subj /CN=weave-test-ca 2>/dev/null && openssl req -newkey rsa:2048 -nodes -keyout server.key " +
        "-out server.csr -subj /CN=127.0.0.1 2>/dev/null && echo subjectAltName=IP:127.0.0.1 > ext.cnf && " +
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 1 " +
        "-extfile ext.cnf 2>/dev/null";
    if (std::system(cmd.c_str()) != 0)
      throw std::runtime_error("openssl could not make the test certificates");
  }
  std::string dir_, exe_;
  int port_;
  pid_t pid_ = -1;
};

}  // namespace weave::test
