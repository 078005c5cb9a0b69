#include "core/artifact/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace weave {
namespace {

// Closes the descriptor on every path out of a function.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

Expected<std::size_t> open_regular(const std::string& path, Fd& fd) {
  if (fd.get() < 0) return make_error(path, ": cannot open (", std::strerror(errno), ")");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return make_error(path, ": cannot stat (", std::strerror(errno), ")");
  if (!S_ISREG(st.st_mode)) return make_error(path, ": not a regular file");
  return static_cast<std::size_t>(st.st_size);
}

}  // namespace

Expected<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  auto size = open_regular(path, fd);
  if (!size) return size.error();
  std::shared_ptr<MappedFile> file(new MappedFile());
  if (*size == 0) return std::shared_ptr<const MappedFile>(std::move(file));
  void* addr = ::mmap(nullptr, *size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (addr == MAP_FAILED) return make_error(path, ": cannot mmap (", std::strerror(errno), ")");
  file->addr_ = addr;
  file->size_ = *size;
  return std::shared_ptr<const MappedFile>(std::move(file));
}

MappedFile::~MappedFile() {
  if (addr_) ::munmap(addr_, size_);
}

SharedBytes MappedFile::share(std::shared_ptr<const MappedFile> file) {
  auto span = file->bytes();
  return SharedBytes(span, std::move(file));
}

Expected<SharedBytes> read_whole_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  auto size = open_regular(path, fd);
  if (!size) return size.error();
  AlignedBuffer buf;
  try {
    buf = AlignedBuffer(*size);
  } catch (const std::bad_alloc&) {
    return make_error(path, ": cannot allocate ", *size, " bytes to read the file");
  }
  std::size_t done = 0;
  while (done < *size) {
    ssize_t n = ::read(fd.get(), buf.data() + done, *size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(path, ": read failed (", std::strerror(errno), ")");
    if (n == 0) return make_error(path, ": file shrank while reading (", done, " of ", *size, " bytes)");
    done += static_cast<std::size_t>(n);
  }
  return SharedBytes::from(std::move(buf));
}

}  // namespace weave
